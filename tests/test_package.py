"""The package surface: exports, import weight, typing marker."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import askkit

ROOT = Path(__file__).resolve().parent.parent


def test_all_names_exist() -> None:
    for name in askkit.__all__:
        assert hasattr(askkit, name), name


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(askkit).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("askkit")
    }
    assert public <= set(askkit.__all__)


def test_every_module_declares_all() -> None:
    for info in pkgutil.walk_packages(askkit.__path__, "askkit."):
        if info.name.rsplit(".", 1)[-1].startswith("_") and not info.ispkg:
            continue
        module = importlib.import_module(info.name)
        assert isinstance(getattr(module, "__all__", None), list), info.name
        for name in module.__all__:
            assert hasattr(module, name), f"{info.name}.{name}"


def test_documented_public_names() -> None:
    from askkit.citations import link_sources, scan, strip

    assert callable(scan)
    assert callable(strip)
    assert callable(link_sources)
    for name in [
        "ChunkResult",
        "AnswerResult",
        "AskSource",
        "Turn",
        "VaultPath",
        "BREADCRUMB_SEP",
        "HEADING_JOINER",
        "SchemaError",
    ]:
        assert name in askkit.__all__


def test_import_askkit_is_light() -> None:
    code = (
        "import sys, askkit\n"
        "heavy = [m for m in ('ipywidgets', 'IPython', 'matplotlib') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == ""


def test_py_typed_marker_ships() -> None:
    assert (ROOT / "askkit" / "py.typed").is_file()


def test_error_hierarchy() -> None:
    assert issubclass(askkit.SchemaError, ValueError)
    assert issubclass(askkit.SchemaError, askkit.AskkitError)
    assert issubclass(askkit.VaultError, OSError)
    assert issubclass(askkit.MissingDependencyError, ImportError)
    assert issubclass(askkit.ServerError, askkit.AskkitError)


def test_schema_error_pickles_with_its_fields() -> None:
    import pickle

    err = askkit.SchemaError("bad", field="x", value=3, file="f.jsonl", line=9)
    again = pickle.loads(pickle.dumps(err))
    assert (again.field, again.value, again.file, again.line) == ("x", 3, "f.jsonl", 9)
    assert str(again) == "f.jsonl:9: x: bad, got 3"
