"""`import askkit` stays light; `import askkit.widgets` brings the views."""

from __future__ import annotations

from tests.probe import loaded_after


def test_import_askkit_does_not_load_widgets() -> None:
    assert loaded_after("import askkit, askkit.frame, askkit.vault.locate, askkit.vault") == set()


def test_import_widgets_does_not_load_matplotlib_until_a_histogram() -> None:
    loaded = loaded_after("import askkit.widgets")
    assert "ipywidgets" in loaded
    assert "matplotlib" not in loaded


def test_widgets_exports() -> None:
    import askkit.widgets as w

    for name in w.__all__:
        assert hasattr(w, name), name
    assert {"SourcesView", "SourceReader", "TurnView", "Explorer", "Labeler"} <= set(w.__all__)
