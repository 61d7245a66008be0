"""What messages may show: URLs without passwords, secrets scrubbed in every form they take."""

from __future__ import annotations

import gc
import json
import logging
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit._http.redact import (
    LOG_FILTER,
    excerpt,
    printable,
    redact_url,
    scrub,
    scrub_error,
    searchable,
    split_userinfo,
)
from askkit.errors import ServerStatusError


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://kimun:s3cret@127.0.0.1:8080/api", "http://kimun:***@127.0.0.1:8080/api"),
        ("https://ghp_0123456789@example.org", "https://***@example.org"),
        ("http://user:@host", "http://user:@host"),  # an empty password: nothing to hide
        ("http://127.0.0.1:8080/a@b", "http://127.0.0.1:8080/a@b"),  # "@" in the path
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("//kimun:pw@host/x", "//kimun:***@host/x"),
        ("http://a:b:c@host", "http://a:***@host"),  # the password is all after the first ":"
    ],
)
def test_redact_url_hides_the_password_or_a_lone_user_name(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_split_userinfo_decodes_the_credentials_and_names_each_secret_form() -> None:
    origin, credentials, secrets = split_userinfo("http://kimun:s3%2Fcret@127.0.0.1:8080/v1")
    assert origin == "http://127.0.0.1:8080/v1"
    assert credentials == ("kimun", "s3/cret")
    assert secrets == {"s3%2Fcret", "s3/cret"}
    origin, credentials, secrets = split_userinfo("https://tok%40en@example.org")
    assert (origin, credentials, secrets) == (
        "https://example.org",
        ("tok@en", ""),
        {"tok%40en", "tok@en"},
    )
    assert split_userinfo("http://host/path") == ("http://host/path", None, set())


def test_searchable_drops_empty_secrets_and_puts_the_longest_first() -> None:
    assert searchable(["ab", "", "abc", "abcd", "abc"]) == ("abcd", "abc", "ab")


@pytest.mark.parametrize(
    "form",
    [
        "s3cret/tok\\en",  # as is
        quote("s3cret/tok\\en", safe=""),  # percent-encoded
        repr("s3cret/tok\\en")[1:-1],  # a backslash doubled by repr
        json.dumps("s3cret/tok\\en")[1:-1],  # escaped by json
    ],
)
def test_scrub_replaces_every_form_of_a_secret(form: str) -> None:
    shown = scrub(f"the server said {form}!", ("s3cret/tok\\en",))
    assert shown == "the server said ***!"


def test_scrub_hides_the_start_of_a_secret_cut_off_by_excerpt() -> None:
    assert scrub("token s3c... (3 more characters)", ("s3cret",)) == (
        "token ***... (3 more characters)"
    )


def test_a_short_secret_is_scrubbed_only_as_a_whole_word() -> None:
    assert scrub("user kimun:pw@host, pwd", ("pw",)) == "user kimun:***@host, pwd"


@given(
    secret=st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="*"),
        min_size=4,
    ),
    before=st.text(max_size=20),
)
def test_no_escaped_form_of_a_secret_survives_scrubbing(secret: str, before: str) -> None:
    secrets = searchable([secret])
    for form in (secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], quote(secret, safe="")):
        assert form not in scrub(f"{before}{form}", secrets)


def test_scrub_error_scrubs_the_message_and_every_text_field() -> None:
    error = ServerStatusError("refused s3cret", status=500, server_message="echo s3cret")
    assert scrub_error(error, ("s3cret",)) is error
    assert (str(error), error.server_message, error.status) == ("refused ***", "echo ***", 500)


def test_excerpt_quotes_the_start_and_says_how_much_was_cut() -> None:
    assert excerpt("short") == "'short'"
    assert excerpt("x" * 250) == repr("x" * 200) + "... (50 more characters)"
    assert excerpt(b"\xff\xfe bytes") == repr("\ufffd\ufffd bytes")
    big = b"y" * 2**21
    assert excerpt(big, 10) == "'yyyyyyyyyy'... (2,097,152 bytes in all)"


def test_excerpt_scrubs_a_secret_before_it_is_cut() -> None:
    shown = excerpt("y" * 195 + "SECRETtoken", secrets=("SECRETtoken",))
    assert "SECR" not in shown
    assert "***" in shown


def test_printable_escapes_control_characters_and_cuts_long_text() -> None:
    assert printable("line\nbreak\x1b[31m") == "line\\nbreak\\x1b[31m"
    assert printable("z" * 310, limit=300) == "z" * 300 + "... (10 more characters)"
    assert printable("lone \ud800") == "lone \\ud800"


def test_the_log_filter_scrubs_httpx_records_while_the_owner_lives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Owner:
        pass

    caplog.set_level(logging.DEBUG, logger="httpx")
    owner = Owner()
    LOG_FILTER.register(owner, ("log-s3cret-value",))
    logging.getLogger("httpx").debug("GET %s", "http://host/?t=log-s3cret-value")
    del owner
    gc.collect()
    logging.getLogger("httpx").debug("after %s", "log-s3cret-value")
    assert [r.getMessage() for r in caplog.records] == [
        "GET http://host/?t=***",
        "after log-s3cret-value",  # the owner is gone: its secrets are no longer searched
    ]
