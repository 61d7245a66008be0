"""``askkit search --server`` and ``askkit ask`` against a real test server."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator

import pytest
from rich.console import Console

from askkit.cli import main
from askkit.cli import server as _cli_server
from askkit.errors import AuthError, JobFailed, UsageError
from askkit.payloads import turn_from_payload
from askkit.retrieve import ClientSettings
from askkit.retrieve.client import TOKEN_ENV
from askkit.testing import KimunTestServer
from tests.conftest import load


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def server() -> Iterator[KimunTestServer]:
    with KimunTestServer(token="tok") as s:
        yield s


def own_parser() -> argparse.ArgumentParser:
    """The parts of askkit.cli's parser that _cli_server plugs into, rebuilt here."""
    parser = argparse.ArgumentParser(prog="askkit")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("search")
    p.add_argument("query")
    p.add_argument("--server")
    p.add_argument("--vault-id")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--json", action="store_true")
    _cli_server.add_search_options(p)
    p.set_defaults(func=_cli_server.search_command)
    _cli_server.register(sub)
    return parser


def run_direct(*argv: str) -> str:
    args = own_parser().parse_args(argv)
    out = io.StringIO()
    assert args.func(args, Console(file=out, width=200, highlight=False)) == 0
    return out.getvalue()


def test_search_table_direct(server: KimunTestServer) -> None:
    out = run_direct(
        "search", "starter", "--server", server.url, "--vault-id", "notes", "--token", "tok"
    )
    assert f"6 chunks for 'starter' from {server.url} in 42 ms" in out
    assert "Sourdough › Starter › Feeding schedule" in out
    assert "2026-04-08 · Afternoon" in out
    assert "0.8731" in out


def test_search_options_reach_the_server(server: KimunTestServer) -> None:
    run_direct(
        "search",
        "q",
        "--server",
        server.url + "/",
        "--vault-id",
        "notes",
        "--token",
        "tok",
        "--context-size",
        "medium",
    )
    request = server.requests_to("/api/embeddings")[-1]
    assert request.json() == {"vault_id": "notes", "query": "q", "context_size": "medium"}
    assert request.authorization == "Bearer tok"


def test_search_json_honours_k(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "tok")
    code = main(["search", "q", "--server", server.url, "--vault-id", "notes", "-k", "2", "--json"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    expected = load("embeddings.json")
    assert payload == {"chunks": expected["chunks"][:2], "query_time_ms": 42}


def test_search_through_main_prints_the_table(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["search", "q", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    assert main([*argv, "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "3 chunks for 'q'" in out
    assert "[3]" in out
    assert "[4]" not in out


def test_missing_vault_id_is_a_clear_error(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "q", "--server", server.url]) == 2
    err = capsys.readouterr().err
    assert "askkit: error: --vault-id is required with --server" in err
    assert server.requests == []
    args = own_parser().parse_args(["ask", "q", "--server", server.url])
    with pytest.raises(UsageError, match="--vault-id is required"):
        args.func(args, Console(file=io.StringIO()))


def test_server_errors_are_one_line_with_exit_2(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "q", "--server", server.url, "--vault-id", "notes"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "askkit: error: POST /api/embeddings was refused (HTTP 401: missing bearer token): "
        f"the server requires a token and none was sent; pass token=... or set {TOKEN_ENV}"
    )
    args = own_parser().parse_args(["search", "q", "--server", server.url, "--vault-id", "n"])
    with pytest.raises(AuthError):
        args.func(args, Console(file=io.StringIO()))


def test_unreachable_server(capsys: pytest.CaptureFixture[str]) -> None:
    with KimunTestServer() as gone:
        url = gone.url
    assert main(["ask", "q", "--server", url, "--vault-id", "notes"]) == 2
    assert "cannot connect" in capsys.readouterr().err


def test_bad_url_and_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "q", "--server", "localhost:8080", "--vault-id", "notes"]) == 2
    assert "must start with http:// or https://" in capsys.readouterr().err
    argv = ["search", "q", "--server", "http://x", "--vault-id", "n", "--timeout", "0"]
    assert main(argv) == 2
    assert "--timeout must be more than 0 seconds" in capsys.readouterr().err


def test_ask_prints_the_answer_and_its_sources(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ask", "How do I feed it?", "--server", server.url, "--vault-id", "notes"]
    assert main([*argv, "--token", "tok", "--poll-interval", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "Q: How do I feed it?" in out
    assert "A: Feed the starter 1:5:5" in out
    assert "cited with no source: [7]" in out
    assert "projects/sourdough.md" in out
    assert "2026-04-12 · Morning › Kitchen" in out
    assert len(server.requests_to("/api/job/")) == 3


def test_ask_json_reads_back_as_a_turn(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ask", "q?", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    assert main([*argv, "--poll-interval", "0", "--json", "--context-size", "small"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload == {"question": "q?", **load("answer_job.json")["result"]}
    turn = turn_from_payload(payload)
    assert (turn.question, len(turn.sources)) == ("q?", 5)
    assert server.requests_to("/api/answer")[0].json()["context_size"] == "small"


def test_ask_direct_with_a_failing_job(server: KimunTestServer) -> None:
    server.fail("job_fails", message="no LLM configured")
    out = io.StringIO()
    args = own_parser().parse_args(
        ["ask", "q", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    )
    args.poll_interval = 0.01
    with pytest.raises(JobFailed, match="failed: no LLM configured"):
        args.func(args, Console(file=out))


def test_ask_gives_up_after_max_polls(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.fail("job_never_completes")
    argv = ["ask", "q", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    assert main([*argv, "--poll-interval", "0.01", "--max-polls", "3"]) == 2
    err = capsys.readouterr().err
    assert "did not finish: still 'processing' after 3 polls" in err
    assert "raise max_polls (now 3) or poll_interval (now 0.01 s)" in err
    assert len(server.requests_to("/api/job/")) == 3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--timeout", "nan"], "--timeout must be more than 0 seconds (a finite number), got nan"),
        (["--timeout", "-2"], "--timeout must be more than 0 seconds (a finite number), got -2.0"),
        (
            ["--poll-interval", "inf"],
            "--poll-interval must be >= 0 seconds (a finite number), got inf",
        ),
        (["--max-polls", "-5"], "--max-polls must be at least 1 (a whole number), got -5"),
    ],
)
def test_bad_client_settings_are_one_line_with_exit_2(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["ask", "q", "--server", server.url, "--vault-id", "notes", *extra]) == 2
    assert capsys.readouterr().err == f"askkit: error: {message}\n"
    assert server.requests == []


def test_the_options_build_the_client_settings(server: KimunTestServer) -> None:
    argv = ["ask", "q", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    given = own_parser().parse_args([*argv, "--timeout", "7", "--max-polls", "9"])
    assert _cli_server._client_settings(given) == ClientSettings(timeout=7, max_polls=9)
    assert _cli_server._client_settings(own_parser().parse_args(argv)) == ClientSettings()
    search = own_parser().parse_args(["search", "q", "--server", server.url, "--timeout", "3"])
    assert _cli_server._client_settings(search) == ClientSettings(timeout=3)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-polls", "0"], "--max-polls must be at least 1"),
        (["--poll-interval", "-1"], "--poll-interval must be >= 0"),
    ],
)
def test_ask_option_checks(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["ask", "q", "--server", server.url, "--vault-id", "notes", *extra]) == 2
    assert message in capsys.readouterr().err
    assert main(["ask", "  ", "--server", server.url, "--vault-id", "notes"]) == 2
    assert "the question is empty" in capsys.readouterr().err
    assert server.requests == []


# -- the server's health -----------------------------------------------------------------------


def test_a_degraded_server_is_one_line_saying_why_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with KimunTestServer(degraded="could not initialize the fastembed embedder") as server:
        for argv in (["search", "q"], ["ask", "q?"]):
            assert main([*argv, "--server", server.url, "--vault-id", "notes"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1
            assert err.startswith(
                f"askkit: error: the kimun server at {server.url} is degraded: could not "
                "initialize the fastembed embedder; its embedder failed to start"
            )
        assert [r.path for r in server.requests] == ["/health", "/health"]


def test_a_reranker_error_is_a_warning_and_the_results_still_print(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with KimunTestServer(reranker_error="blocked \x1b]0;x\x07download") as server:
        argv = ["search", "q", "--server", server.url, "--vault-id", "notes", "-k", "1", "--json"]
        assert main(argv) == 0
        captured = capsys.readouterr()
    assert json.loads(captured.out)["chunks"]  # stdout stays the JSON alone
    assert captured.err == (
        "askkit: warning: the server's reranker failed to start: blocked download (results "
        "are ranked by vector similarity alone)\n"
    )


def test_an_update_the_server_found_is_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    with KimunTestServer(version="0.5.1", latest_version="0.6.0") as server:
        argv = ["ask", "q?", "--server", server.url, "--vault-id", "notes"]
        assert main([*argv, "--poll-interval", "0"]) == 0
        captured = capsys.readouterr()
    assert "A: Feed the starter" in captured.out
    assert captured.err == "askkit: note: kimun server 0.6.0 is available (this one runs 0.5.1)\n"


def test_a_healthy_server_adds_nothing_to_stderr(
    server: KimunTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["search", "q", "--server", server.url, "--vault-id", "notes", "--token", "tok"]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""
    assert [r.path for r in server.requests] == ["/health", "/api/embeddings"]
