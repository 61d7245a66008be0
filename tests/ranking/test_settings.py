"""CutSettings sanitises like kimun's pipeline builders and speaks its server.toml keys."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
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
