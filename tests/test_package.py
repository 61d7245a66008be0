"""The package surface: exports, import weight, typing marker."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
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
        "heavy = ('ipywidgets', 'IPython', 'matplotlib', 'fastembed', 'onnx', 'onnxruntime',"
        " 'all_minilm_l6_v2')\n"
        "import askkit.dense, askkit.dense.embedders\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == ""


def test_py_typed_marker_ships() -> None:
    assert (ROOT / "askkit" / "py.typed").is_file()


# --------------------------------------------------------------------------- the import graph


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs: module level or inside functions, not under TYPE_CHECKING."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _runtime_imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def import_graph() -> dict[str, set[str]]:
    """askkit's modules and the askkit modules each imports at run time."""
    files = {_module_name(p): p for p in (ROOT / "askkit").rglob("*.py")}
    extensions = {_module_name(p) for p in (ROOT / "askkit").rglob("*.pyi")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from pkg import sub` imports the submodule pkg.sub
                targets = [
                    f"{base}.{alias.name}"
                    if f"{base}.{alias.name}" in files.keys() | extensions
                    else base
                    for alias in node.names
                ]
            edges.update(t for t in targets if t in files and t != name)
        graph[name] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_sees_real_edges() -> None:
    graph = import_graph()
    assert "askkit.sources" in graph["askkit.frame.load"]
    assert (
        "askkit.frame.kernels" in graph["askkit.frame.columns"]
    )  # `from askkit.frame import kernels`
    assert "askkit.errors" in graph["askkit.wire"]
    assert "askkit.widgets" not in graph["askkit"]  # lazy, through __getattr__'s importlib


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_at_runtime() -> None:
    assert _cycle(import_graph()) is None


def test_private_modules_are_used_only_in_their_own_folder() -> None:
    shared = {
        "askkit._text",
        "askkit._atomic",
        "askkit._html",
        "askkit._console",
        "askkit._gc",
        "askkit._redact",
        "askkit._body",
        "askkit._cachedir",
        "askkit._files",
    }
    for name, edges in import_graph().items():
        for target in edges:
            leaf_private = target.rpartition(".")[2].startswith("_")
            if not leaf_private or target in shared or target.endswith("__init__"):
                continue
            assert name.startswith(target.rpartition(".")[0] + "."), f"{name} imports {target}"


def test_layers_point_down() -> None:
    """The value types never import the capabilities built on them."""
    graph = import_graph()
    core = {"askkit.errors", "askkit.wire", "askkit.journal", "askkit.citations", "askkit.sources"}
    above = ("askkit.frame", "askkit.metrics", "askkit.vault", "askkit.retrieve", "askkit.widgets")
    for name in core:
        assert not [t for t in graph[name] if t.startswith(above)], name
    for name, edges in graph.items():
        if name.startswith(("askkit.frame", "askkit.metrics", "askkit.vault")):
            assert not [t for t in edges if t.startswith(("askkit.widgets", "askkit.cli"))], name


def test_version_comes_from_the_installed_metadata() -> None:
    from importlib.metadata import version

    assert askkit.__version__ == version("askkit")
    assert "__version__ =" not in (ROOT / "askkit" / "__init__.py").read_text().replace(
        "__version__ = _metadata", ""
    ).replace('__version__ = "0+unknown"', "")


def test_tests_mirror_the_package() -> None:
    """Every subpackage has a test folder, and every public module a test file."""
    for info in pkgutil.walk_packages(askkit.__path__, "askkit."):
        parts = info.name.split(".")[1:]
        if info.ispkg:
            assert (ROOT / "tests" / Path(*parts) / "__init__.py").is_file(), info.name
            continue
        if parts[-1].startswith("_"):
            continue
        test = ROOT / "tests" / Path(*parts[:-1]) / f"test_{parts[-1]}.py"
        assert test.is_file(), f"{info.name}: expected {test.relative_to(ROOT)}"
