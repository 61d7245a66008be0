"""The package surface: exports, import weight, typing marker."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import askkit
from tests.conftest import ROOT
from tests.probe import HEAVY, loaded_after


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
    heavy = (*HEAVY, "fastembed", "onnx", "onnxruntime", "all_minilm_l6_v2")
    assert loaded_after("import askkit, askkit.dense, askkit.dense.embedders", heavy) == set()


def test_the_trace_is_light_too() -> None:
    heavy = (*HEAVY, "fastembed", "onnx", "onnxruntime", "all_minilm_l6_v2")
    assert loaded_after("import askkit; askkit.trace.trace_pool", heavy) == set()


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


#: The private units every folder may use: small shared rules and the HTTP core.
SHARED_PRIVATE = {
    "askkit._text",
    "askkit._atomic",
    "askkit._files",
    "askkit._outputs",
    "askkit._html",
    "askkit._gc",
    "askkit._warn",
    "askkit._cachedir",
    "askkit._optional",
    "askkit._http",
}

#: askkit's layers, lowest first: a unit (a folder, or a module at the top of the
#: package) imports only from lower layers; top-level modules of one layer may import
#: each other, folders of one layer never do. docs/development.md draws the same.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(f"askkit.{name}" if name != "askkit" else name for name in layer.split())
    for layer in (
        "errors",
        "_text _atomic _files _outputs _cachedir _warn _gc _optional",
        "askkit journal wire sources citations prompt payloads _html",
        "vault _http",
        "frame",
        "metrics",
        "ranking",
        "retrieve dense",
        "trace",
        "reach",
        "compare plots",
        "gate",
        "report _report_runs widgets",
        "cli testing",
    )
)


def unit(module: str) -> str:
    """The unit a module belongs to: its top folder (``askkit.vault``), else itself."""
    parts = module.split(".")
    if len(parts) == 1:
        return module
    top = ".".join(parts[:2])
    return top if (ROOT / "askkit" / parts[1]).is_dir() else module


def is_folder(name: str) -> bool:
    return name != "askkit" and (ROOT / "askkit" / name.split(".")[1]).is_dir()


def layer_of(name: str) -> int:
    for number, members in enumerate(LAYERS):
        if name in members:
            return number
    raise AssertionError(f"{name} has no layer: add it to LAYERS and docs/development.md")


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a unit to one in a higher layer, or between folders of one layer."""
    breaches = []
    for name, edges in sorted(graph.items()):
        source = unit(name)
        for target in sorted(edges):
            dest = unit(target)
            if dest == source:
                continue
            up, down = layer_of(source), layer_of(dest)
            if down > up or (down == up and (is_folder(source) or is_folder(dest))):
                breaches.append(f"{name} imports {target}")
    return breaches


def private_owner(module: str) -> tuple[str, str] | None:
    """``(private unit, the folder it belongs to)`` for a private module, else None:
    the first ``_name`` component makes the unit (``askkit._http.body`` ->
    ``askkit._http``; ``askkit.cli._console`` -> itself, in ``askkit.cli``)."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and part != "__init__":
            return ".".join(parts[: i + 1]), ".".join(parts[:i])
    return None


def private_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Every use of a private unit outside its own folder (a private module at the top
    of the package belongs to the top-level modules) that is not in the shared list."""
    breaches = []
    for name, edges in sorted(graph.items()):
        for target in sorted(edges):
            owned = private_owner(target)
            if owned is None or owned[0] in SHARED_PRIVATE:
                continue
            private, folder = owned
            inside = name.startswith(private + ".") or name == private
            if folder == "askkit":
                inside = inside or unit(name) == name  # a top-level module
            else:
                inside = inside or (name + ".").startswith(folder + ".")
            if not inside:
                breaches.append(f"{name} imports {target}")
    return breaches


def test_the_layer_rule_catches_an_upward_import_and_a_sideways_one() -> None:
    graph = {
        "askkit.frame.pools": {"askkit.ranking.cut", "askkit.sources"},
        "askkit.dense.index": {"askkit.retrieve.local", "askkit.metrics.io"},
        "askkit.sources": {"askkit.citations"},
    }
    assert layer_breaches(graph) == [
        "askkit.dense.index imports askkit.retrieve.local",
        "askkit.frame.pools imports askkit.ranking.cut",
    ]


def test_imports_between_folders_follow_the_layers() -> None:
    assert layer_breaches(import_graph()) == []


def test_every_unit_has_a_layer() -> None:
    for name in import_graph():
        layer_of(unit(name))


def test_the_private_rule_catches_a_private_module_used_outside_its_folder() -> None:
    graph = {
        "askkit.report": {"askkit.cli._console", "askkit._html"},
        "askkit.cli.vault": {"askkit.cli._console", "askkit._http.body"},
        "askkit.frame.load": {"askkit._secret"},
        "askkit.payloads": {"askkit._secret"},
    }
    assert private_breaches(graph) == [
        "askkit.frame.load imports askkit._secret",
        "askkit.report imports askkit.cli._console",
    ]


def test_private_modules_are_used_only_in_their_own_folder() -> None:
    assert private_breaches(import_graph()) == []


def test_every_shared_private_unit_is_shared() -> None:
    """A unit on the shared list is used by at least two other units; one used by a
    single folder belongs inside it."""
    users: dict[str, set[str]] = {name: set() for name in SHARED_PRIVATE}
    for name, edges in import_graph().items():
        for target in edges:
            owned = private_owner(target)
            if owned and owned[0] in SHARED_PRIVATE and unit(name) != owned[0]:
                users[owned[0]].add(unit(name))
    assert {name for name, who in users.items() if len(who) < 2} == set(), users


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
