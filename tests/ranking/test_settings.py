"""CutSettings sanitises like kimun's pipeline builders and speaks its server.toml keys."""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.ranking import settings as settings_module
from askkit.ranking.settings import KIMUN_COMMIT as PINNED
from askkit.ranking.settings import STRATEGIES, CutSettings

#: kimun's commit these tests pin (main, 2026-08-19; config.rs and lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"


def test_the_package_names_the_pinned_commit() -> None:
    assert PINNED == KIMUN_COMMIT


# --------------------------------------------------------------------------- kimun's tests


def test_default_config_values() -> None:
    # config.rs: a bare [reranker] table gives top_k 20 (the ranking keys of that test).
    settings = CutSettings.from_toml('[server]\n[vector_db]\ntype = "qdrant"\n[reranker]\n')
    assert settings.top_k == 20


def test_reranker_provider_defaults_to_fastembed_and_parses_http() -> None:
    # config.rs, the context-cut assertions: defaults, then each key parsed.
    bare = CutSettings.from_toml('[server]\n[vector_db]\ntype = "qdrant"\n[reranker]\n')
    assert bare.strategy == "score-range"
    assert bare.score_range_cutoff == 0.4
    assert bare.window == (3, 30)
    tuned = CutSettings.from_toml(
        '[server]\n[vector_db]\ntype = "qdrant"\n[reranker]\nscore_range_cutoff = 0.5\n'
    )
    assert tuned.score_range_cutoff == 0.5
    elbow = CutSettings.from_toml(
        '[server]\n[vector_db]\ntype = "qdrant"\n[reranker]\ncontext_cut = "largest-drop"\n'
    )
    assert elbow.strategy == "largest-drop"


# `non_finite_cutoff_is_ignored_not_poisonous` and `zero_top_k_from_a_config_file_is_floored`
# run kimun's search on these settings: see tests/ranking/test_surfaces.py.


# --------------------------------------------------------------------------- sanitising


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (0.4, 0.4),
        (1.5, 1.0),
        (-0.2, 0.0),
        (math.inf, 1.0),
        (-math.inf, 0.0),
        (math.nan, 0.4),
        (0, 0.0),
        (10**400, 1.0),
        (-(10**400), 0.0),
    ],
)
def test_the_cutoff_is_clamped_and_a_nan_keeps_the_default(given: float, expected: float) -> None:
    assert CutSettings(score_range_cutoff=given).score_range_cutoff == expected


def test_replace_keeps_the_previous_cutoff_on_nan() -> None:
    tuned = CutSettings(score_range_cutoff=0.55)
    assert tuned.replace(score_range_cutoff=math.nan).score_range_cutoff == 0.55
    assert tuned.replace(score_range_cutoff=2).score_range_cutoff == 1.0
    assert tuned.replace(top_k=3) == CutSettings(score_range_cutoff=0.55, top_k=3)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ((3, 30), (3, 30)),
        ((0, 0), (1, 1)),
        ((-5, 2), (1, 2)),
        ((10, 5), (10, 10)),
        ((1, -1), (1, 1)),
    ],
)
def test_the_window_is_sanitised_to_min_at_least_1_and_max_at_least_min(
    window: tuple[int, int], expected: tuple[int, int]
) -> None:
    assert CutSettings(drop_window_min=window[0], drop_window_max=window[1]).window == expected


def test_replace_sanitises_one_bound_against_the_other() -> None:
    assert CutSettings().replace(drop_window_min=40).window == (40, 40)
    assert CutSettings().replace(drop_window_max=2).window == (3, 3)


@pytest.mark.parametrize(("top_k", "expected"), [(0, 1), (-3, 1), (1, 1), (40, 40)])
def test_top_k_is_floored_to_1(top_k: int, expected: int) -> None:
    assert CutSettings(top_k=top_k).top_k == expected


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("strategy", "biggest-elbow"),
        ("strategy", "score_range"),
        ("top_k", True),
        ("top_k", 2.0),
        ("drop_window_min", "3"),
        ("score_range_cutoff", "0.4"),
        ("score_range_cutoff", True),
    ],
)
def test_wrong_values_are_schema_errors_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(SchemaError) as info:
        CutSettings(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field


@given(
    strategy=st.sampled_from(STRATEGIES),
    cutoff=st.floats(allow_nan=True, allow_infinity=True),
    low=st.integers(-5, 100),
    high=st.integers(-5, 100),
    top_k=st.integers(-5, 100),
)
def test_settings_are_always_sane_and_round_trip_through_toml(
    strategy: str, cutoff: float, low: int, high: int, top_k: int
) -> None:
    settings = CutSettings(strategy, cutoff, low, high, top_k)  # type: ignore[arg-type]
    assert 0.0 <= settings.score_range_cutoff <= 1.0
    assert 1 <= settings.drop_window_min <= settings.drop_window_max
    assert settings.top_k >= 1
    assert CutSettings.from_toml(settings.to_toml()) == settings
    assert CutSettings(**_fields(settings)) == settings  # sanitising is idempotent


def _fields(settings: CutSettings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in CutSettings.__dataclass_fields__}


# --------------------------------------------------------------------------- TOML


def test_to_toml_prints_kimuns_reranker_keys() -> None:
    text = CutSettings(strategy="fixed", score_range_cutoff=0.55, top_k=7).to_toml()
    assert text.splitlines()[0] == "[reranker]"
    table = tomllib.loads(text)["reranker"]
    assert table == {
        "top_k": 7,
        "context_cut": "fixed",
        "score_range_cutoff": 0.55,
        "drop_window_min": 3,
        "drop_window_max": 30,
    }


@pytest.mark.parametrize("cutoff", [0.0, 1.0, 1e-05, 0.1 + 0.2, 5e-324])
def test_to_toml_writes_every_cutoff_as_a_toml_float_that_round_trips(cutoff: float) -> None:
    table = tomllib.loads(CutSettings(score_range_cutoff=cutoff).to_toml())["reranker"]
    assert isinstance(table["score_range_cutoff"], float)
    assert table["score_range_cutoff"] == cutoff


def test_from_toml_reads_a_bare_block_and_ignores_other_keys() -> None:
    text = 'top_k = 5\ncontext_cut = "fixed"\nenabled = false\ntype = "http"'
    assert CutSettings.from_toml(text) == CutSettings(strategy="fixed", top_k=5)


def test_from_toml_sanitises_like_the_pipeline() -> None:
    text = (
        "[reranker]\nscore_range_cutoff = inf\ndrop_window_min = 0\ndrop_window_max = 0\ntop_k = 0"
    )
    assert CutSettings.from_toml(text) == CutSettings(
        score_range_cutoff=1.0, drop_window_min=1, drop_window_max=1, top_k=1
    )


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[reranker]\ncontext_cut = "biggest-elbow"', "reranker.context_cut"),
        ("[reranker]\ntop_k = -1", "reranker.top_k"),
        ("[reranker]\ndrop_window_max = 2.5", "reranker.drop_window_max"),
        ('[reranker]\nscore_range_cutoff = "high"', "reranker.score_range_cutoff"),
        ("reranker = 3", "reranker"),
    ],
)
def test_from_toml_rejects_what_kimuns_config_parser_rejects(text: str, field: str) -> None:
    with pytest.raises(SchemaError) as info:
        CutSettings.from_toml(text)
    assert info.value.field == field


def test_from_toml_rejects_broken_toml() -> None:
    with pytest.raises(SchemaError, match="not valid TOML"):
        CutSettings.from_toml("[reranker")


def test_label_and_html() -> None:
    assert CutSettings(strategy="largest-drop").label == "largest-drop window=3..30"
    assert CutSettings()._repr_html_().startswith("<pre>[reranker]")
    assert "&quot;score-range&quot;" in CutSettings()._repr_html_()


# --------------------------------------------------------------------------- hostile input

#: The largest count server.toml can hold: kimun types top_k and the window usize, and a
#: TOML integer is a signed 64-bit one (a larger one is not TOML to kimun's parser).
TOML_INT_MAX = 2**63 - 1


@pytest.mark.parametrize(
    "value",
    ["[" * 100_000 + "]" * 100_000, "{a = " * 5_000 + "1" + "}" * 5_000],
    ids=["arrays", "inline tables"],
)
def test_from_toml_refuses_deeply_nested_toml_with_a_schema_error(value: str) -> None:
    with pytest.raises(SchemaError, match="nested too deeply") as info:
        CutSettings.from_toml(f"[reranker]\ntop_k = {value}\n")
    assert not isinstance(info.value.__context__, RecursionError) or info.value.__suppress_context__


def test_from_toml_reads_utf8_bytes_as_kimun_reads_its_file() -> None:
    assert CutSettings.from_toml(b'[reranker]\ntop_k = 7\ncontext_cut = "fixed"') == CutSettings(
        strategy="fixed", top_k=7
    )
    assert CutSettings.from_toml(bytearray(b"top_k = 3")) == CutSettings(top_k=3)


def test_from_toml_refuses_bytes_that_are_not_utf8() -> None:
    with pytest.raises(SchemaError, match="not UTF-8"):
        CutSettings.from_toml(b'[reranker]\ncontext_cut = "fix\xffed"')


@pytest.mark.parametrize("value", [7, None, ["top_k = 1"], 1.5])
def test_from_toml_refuses_what_is_not_text_with_a_schema_error(value: object) -> None:
    with pytest.raises(SchemaError, match="expected TOML text") as info:
        CutSettings.from_toml(value)  # type: ignore[arg-type]
    assert info.value.value == value


@pytest.mark.parametrize("key", ["top_k", "drop_window_min", "drop_window_max"])
@pytest.mark.parametrize("value", [10**26, TOML_INT_MAX + 1, 2**64])
def test_from_toml_refuses_a_count_kimuns_usize_from_toml_cannot_hold(key: str, value: int) -> None:
    with pytest.raises(SchemaError, match="at most 9223372036854775807") as info:
        CutSettings.from_toml(f"[reranker]\n{key} = {value}\n")
    assert (info.value.field, info.value.value) == (f"reranker.{key}", value)


@pytest.mark.parametrize("field", ["top_k", "drop_window_min", "drop_window_max"])
def test_settings_refuse_a_count_server_toml_cannot_hold(field: str) -> None:
    with pytest.raises(SchemaError, match="at most 9223372036854775807") as info:
        CutSettings(**{field: 10**26})  # type: ignore[arg-type]
    assert (info.value.field, info.value.value) == (field, 10**26)


def test_the_largest_toml_integer_is_a_count_that_round_trips() -> None:
    settings = CutSettings(drop_window_min=TOML_INT_MAX, top_k=TOML_INT_MAX)
    assert settings.window == (TOML_INT_MAX, TOML_INT_MAX)
    assert CutSettings.from_toml(settings.to_toml()) == settings
    assert tomllib.loads(settings.to_toml())["reranker"]["top_k"] == TOML_INT_MAX


@pytest.mark.parametrize("value", [10**26, -(10**26), TOML_INT_MAX + 1, -(2**63) - 1])
def test_from_toml_refuses_a_cutoff_integer_beyond_toml(value: int) -> None:
    with pytest.raises(SchemaError, match="64-bit") as info:
        CutSettings.from_toml(f"[reranker]\nscore_range_cutoff = {value}\n")
    assert (info.value.field, info.value.value) == ("reranker.score_range_cutoff", value)


@pytest.mark.parametrize(("value", "cutoff"), [(-(2**63), 0.0), (TOML_INT_MAX, 1.0), (0, 0.0)])
def test_from_toml_clamps_any_toml_integer_cutoff(value: int, cutoff: float) -> None:
    text = f"[reranker]\nscore_range_cutoff = {value}\n"
    assert CutSettings.from_toml(text).score_range_cutoff == cutoff


def test_from_toml_names_the_key_and_value_of_a_bad_setting() -> None:
    with pytest.raises(SchemaError) as info:
        CutSettings.from_toml('[server]\nport = 8080\n[reranker]\ntop_k = "ten"\n')
    assert str(info.value) == "reranker.top_k: expected a whole number, got 'ten'"


# --------------------------------------------------------------------------- a server.toml file


def test_from_file_reads_the_reranker_table_of_a_server_toml(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(
        '[server]\nport = 8080\n[reranker]\nenabled = true\ncontext_cut = "fixed"\ntop_k = 9\n',
        encoding="utf-8",
    )
    assert CutSettings.from_file(path) == CutSettings(strategy="fixed", top_k=9)
    assert CutSettings.from_file(str(path)) == CutSettings(strategy="fixed", top_k=9)


def test_from_file_errors_name_the_file_the_key_and_the_value(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(f"[reranker]\ntop_k = {10**26}\n", encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        CutSettings.from_file(path)
    assert (info.value.file, info.value.field, info.value.value) == (
        str(path),
        "reranker.top_k",
        10**26,
    )
    assert str(info.value).startswith(f"{path}: reranker.top_k: ")


def test_from_file_names_the_file_of_broken_toml(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text("[reranker\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="not valid TOML") as info:
        CutSettings.from_file(path)
    assert info.value.file == str(path)


def _fifo(folder: Path) -> Path:
    path = folder / "server.toml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_fifo, "a FIFO"),
        (lambda tmp: Path("/dev/zero"), "a character device"),
        (lambda tmp: Path("/dev/null"), "a character device"),
        (lambda tmp: tmp, "a folder"),
        (lambda tmp: tmp / "missing.toml", "no such file"),
    ],
    ids=["fifo", "dev-zero", "dev-null", "folder", "missing"],
)
def test_from_file_refuses_what_is_not_a_regular_file_without_reading_it(
    tmp_path: Path, make: Callable[[Path], Path], kind: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(SchemaError, match=kind) as info:
        CutSettings.from_file(path)
    assert info.value.file == str(path)


def test_from_file_refuses_a_file_over_its_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_bytes(b"#" * (settings_module.MAX_SETTINGS_BYTES + 1))
    with pytest.raises(SchemaError, match="limit") as info:
        CutSettings.from_file(path)
    assert info.value.file == str(path)


# --------------------------------------------------------------------------- round trips

VALID_SETTINGS = st.builds(
    CutSettings,
    strategy=st.sampled_from(STRATEGIES),
    score_range_cutoff=st.floats(allow_nan=True, allow_infinity=True),
    drop_window_min=st.integers(-(2**70), TOML_INT_MAX),
    drop_window_max=st.integers(-(2**70), TOML_INT_MAX),
    top_k=st.integers(-(2**70), TOML_INT_MAX),
)

#: TOML keys and values a server.toml holds beside the [reranker] table.
_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,12}", fullmatch=True).filter(
    lambda k: (
        k not in {"reranker", "top_k", "context_cut", "score_range_cutoff"}
        and not k.startswith("drop_window")
    )
)
_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(-(2**63), TOML_INT_MAX),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.integers(-5, 5), max_size=4),
)
_TABLES = st.dictionaries(_KEYS, st.dictionaries(_KEYS, _VALUES, max_size=4), max_size=4)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, float):
        return "inf" if value == math.inf else "-inf" if value == -math.inf else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = "".join(
        f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F or c in '"\\' else c for c in text
    )
    return f'"{escaped}"'


def _table_text(name: str, table: dict[str, object]) -> str:
    lines = [f"[{name}]"] + [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines)


@given(VALID_SETTINGS)
def test_any_valid_settings_round_trip_through_to_toml_and_from_toml(settings: CutSettings) -> None:
    text = settings.to_toml()
    assert CutSettings.from_toml(text) == settings
    assert CutSettings.from_toml(text.encode("utf-8")) == settings


@given(
    VALID_SETTINGS,
    _TABLES,
    st.dictionaries(_KEYS, _VALUES, max_size=4),
    st.integers(0, 4),
)
def test_settings_in_a_larger_server_toml_keep_their_values(
    settings: CutSettings,
    tables: dict[str, dict[str, object]],
    other_reranker_keys: dict[str, object],
    at: int,
) -> None:
    blocks = [_table_text(name, table) for name, table in tables.items()]
    # kimun's other [reranker] keys (enabled, type, url, ...) sit in the same table
    reranker = "\n".join(
        [settings.to_toml(), *(f"{k} = {_toml_value(v)}" for k, v in other_reranker_keys.items())]
    )
    blocks.insert(min(at, len(blocks)), reranker)
    text = "\n\n".join(blocks) + "\n"
    assert CutSettings.from_toml(text) == settings
    document = tomllib.loads(text)
    for name, table in tables.items():
        assert document[name] == table
    for key, value in other_reranker_keys.items():
        assert document["reranker"][key] == value
