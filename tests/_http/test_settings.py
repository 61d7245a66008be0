"""ClientSettings: an HTTP client's timeout, retries, polling and body cap as one checked,
frozen value (``askkit.retrieve.ClientSettings`` to users)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import askkit.retrieve
from askkit._http.settings import ClientSettings
from askkit.errors import SchemaError
from askkit.retrieve.client import AsyncKimunClient, KimunClient

SECONDS = ("timeout", "poll_interval", "backoff")
COUNTS = ("max_polls", "max_poll_errors", "retries", "max_body_bytes")


def test_defaults_are_kimuns() -> None:
    settings = ClientSettings()
    assert dataclasses.astuple(settings) == (30.0, 1.0, 720, 15, 2, 0.25, 64 * 2**20)
    assert [f.name for f in dataclasses.fields(ClientSettings)] == [
        "timeout",
        "poll_interval",
        "max_polls",
        "max_poll_errors",
        "retries",
        "backoff",
        "max_body_bytes",
    ]


def test_repr_lists_every_option() -> None:
    assert repr(ClientSettings(timeout=5, retries=0)) == (
        "ClientSettings(timeout=5.0, poll_interval=1.0, max_polls=720, max_poll_errors=15, "
        "retries=0, backoff=0.25, max_body_bytes=67108864)"
    )


def test_frozen_with_slots() -> None:
    settings = ClientSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.timeout = 5  # type: ignore[misc]
    assert not hasattr(settings, "__dict__")
    assert hash(settings) == hash(ClientSettings())
    assert settings == ClientSettings() != ClientSettings(retries=0)


def test_replace_derives_a_checked_variant() -> None:
    base = ClientSettings()
    patient = dataclasses.replace(base, poll_interval=2, max_polls=1800)
    assert (patient.poll_interval, patient.max_polls) == (2.0, 1800)
    assert (patient.timeout, patient.retries) == (30.0, 2)
    assert base == ClientSettings()  # the original is untouched
    with pytest.raises(SchemaError) as info:
        dataclasses.replace(base, max_polls=0)
    assert info.value.field == "max_polls"


def test_pickles() -> None:
    settings = ClientSettings(timeout=3, max_polls=9)
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_exported_from_askkit_retrieve() -> None:
    assert askkit.retrieve.ClientSettings is ClientSettings
    assert "ClientSettings" in askkit.retrieve.__all__


# -- validation: each field named, with the value received


def test_the_documented_edges_are_accepted() -> None:
    edge = ClientSettings(poll_interval=0, backoff=0, retries=0, max_polls=1, max_poll_errors=1)
    assert dataclasses.astuple(edge) == (30.0, 0.0, 1, 1, 0, 0.0, 64 * 2**20)
    assert ClientSettings(timeout=1e-3).timeout == 0.001


@pytest.mark.parametrize("name", SECONDS)
@pytest.mark.parametrize(
    "value", [math.nan, math.inf, -math.inf, -1, -0.5, True, False, "1", None, 10**400]
)
def test_bad_seconds(name: str, value: object) -> None:
    with pytest.raises(SchemaError) as info:
        ClientSettings(**{name: value})  # type: ignore[arg-type]
    err = info.value
    assert err.field == name
    assert err.value is value
    bound = "more than 0" if name == "timeout" else ">= 0"
    assert str(err).startswith(f"{name}: must be {bound} seconds (a finite number), got ")


def test_zero_timeout_is_refused() -> None:
    with pytest.raises(SchemaError) as info:
        ClientSettings(timeout=0)
    assert str(info.value) == "timeout: must be more than 0 seconds (a finite number), got 0"


@pytest.mark.parametrize("name", COUNTS)
@pytest.mark.parametrize("value", [-1, 2.0, 1.5, math.nan, math.inf, True, False, "3", None])
def test_bad_counts(name: str, value: object) -> None:
    with pytest.raises(SchemaError) as info:
        ClientSettings(**{name: value})  # type: ignore[arg-type]
    err = info.value
    assert err.field == name
    assert err.value is value
    least = 0 if name == "retries" else 1
    assert str(err).startswith(f"{name}: must be at least {least} (a whole number), got ")


@pytest.mark.parametrize("name", ["max_polls", "max_poll_errors"])
def test_zero_polls_are_refused(name: str) -> None:
    with pytest.raises(SchemaError) as info:
        ClientSettings(**{name: 0})  # type: ignore[arg-type]
    assert str(info.value) == f"{name}: must be at least 1 (a whole number), got 0"


def test_schema_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="retries"):
        ClientSettings(retries=-1)


def test_other_numeric_types_are_stored_as_float_and_int() -> None:
    settings = ClientSettings(
        timeout=np.float32(2.5),  # type: ignore[arg-type]
        poll_interval=Fraction(1, 4),  # type: ignore[arg-type]
        max_polls=np.int64(5),  # type: ignore[arg-type]
        retries=np.uint8(1),  # type: ignore[arg-type]
        backoff=1,
    )
    assert dataclasses.astuple(settings) == (2.5, 0.25, 5, 15, 1, 1.0, 64 * 2**20)
    assert [type(v) for v in dataclasses.astuple(settings)] == [
        float,
        float,
        int,
        int,
        int,
        float,
        int,
    ]


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_seconds_rule(x: float) -> None:
    """timeout > 0, poll_interval and backoff >= 0, all finite: nothing else gets through."""
    for name in SECONDS:
        if math.isfinite(x) and (x > 0 if name == "timeout" else x >= 0):
            assert getattr(ClientSettings(**{name: x}), name) == x  # type: ignore[arg-type]
        else:
            with pytest.raises(SchemaError) as info:
                ClientSettings(**{name: x})  # type: ignore[arg-type]
            assert info.value.field == name


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_count_rule(n: int) -> None:
    for name in COUNTS:
        if n >= (0 if name == "retries" else 1):
            assert getattr(ClientSettings(**{name: n}), name) == n  # type: ignore[arg-type]
        else:
            with pytest.raises(SchemaError) as info:
                ClientSettings(**{name: n})  # type: ignore[arg-type]
            assert info.value.field == name


# -- one object from the caller to the protocol core


def close(client: KimunClient | AsyncKimunClient) -> None:
    if isinstance(client, KimunClient):
        client.close()
    else:
        asyncio.run(client.aclose())


@pytest.mark.parametrize("client_type", [KimunClient, AsyncKimunClient])
def test_both_clients_carry_the_same_object_to_the_core(
    client_type: type[KimunClient] | type[AsyncKimunClient],
) -> None:
    settings = ClientSettings(timeout=4, max_polls=3)
    client = client_type("http://127.0.0.1:9", "notes", "", settings=settings)
    assert client.settings is settings
    assert client._core.settings is settings
    assert client._http.timeout.read == 4.0  # the owned httpx client waits as long
    default = client_type("http://127.0.0.1:9", "notes", "")
    assert default.settings == ClientSettings()
    close(client)
    close(default)


@pytest.mark.parametrize("client_type", [KimunClient, AsyncKimunClient])
def test_settings_must_be_client_settings(
    client_type: type[KimunClient] | type[AsyncKimunClient],
) -> None:
    with pytest.raises(TypeError, match=r"settings must be an askkit\.retrieve\.ClientSettings"):
        client_type("http://127.0.0.1:9", "notes", settings={"timeout": 5})  # type: ignore[arg-type]


@pytest.mark.parametrize("client_type", [KimunClient, AsyncKimunClient])
@pytest.mark.parametrize("option", [*SECONDS, *COUNTS])
def test_the_old_keywords_are_gone(
    client_type: type[KimunClient] | type[AsyncKimunClient], option: str
) -> None:
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{option}'"):
        client_type("http://127.0.0.1:9", "notes", **{option: 1})  # type: ignore[arg-type]
