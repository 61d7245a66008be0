"""``askkit lab`` indexes the vault and really starts JupyterLab, printing a working URL."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import DATA, ROOT

LAB = [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(DATA / "vault"), "--no-browser"]


def test_dry_run_prints_the_url_and_command(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "lab",
            "--vault",
            str(DATA / "vault"),
            "--open",
            "debug-retrieval.ipynb",
            "--dry-run",
            "--no-browser",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path), "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    # a dry run starts nothing and writes nothing: it says what a real run would index
    assert f"would index {DATA / 'vault'} (BM25, into askkit's cache)" in out.stdout
    assert "notes," not in out.stdout
    assert out.stderr == ""  # no progress bar
    assert list(tmp_path.iterdir()) == []  # the cache is left empty
    assert re.search(
        r"http://127\.0\.0\.1:\d+/lab/tree/debug-retrieval\.ipynb\?token=\w+", out.stdout
    )
    assert "--no-browser" in out.stdout


def test_dry_run_with_an_embedder_embeds_nothing(tmp_path: Path) -> None:
    out = subprocess.run(
        [*LAB, "--embedder", "fastembed:AllMiniLML6V2", "--dry-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path), "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    assert "would embed" in out.stdout
    assert "fastembed:AllMiniLML6V2" in out.stdout
    assert "embedded with" not in out.stdout
    assert list(tmp_path.iterdir()) == []


def test_an_embedder_embeds_the_vault_first_and_goes_to_the_notebooks(
    minilm_cache: Path, tmp_path: Path
) -> None:
    """``--embedder fastembed:AllMiniLML6V2`` (what scripts/main.sh passes): the vault is
    embedded offline, with a progress bar, into the store the notebooks' DenseIndex opens."""
    from askkit.cli.lab import ENV_EMBEDDER, lab_environment

    # the session's model build, without the stores other tests embedded the vault into
    cache = tmp_path / "cache"
    shutil.copytree(
        minilm_cache,
        cache,
        ignore=lambda d, names: (
            [n for n in names if n.startswith("dense-")] if Path(d) == minilm_cache else []
        ),
    )

    proc = subprocess.Popen(
        [*LAB, "--embedder", "fastembed:AllMiniLML6V2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            **os.environ,
            "ASKKIT_CACHE_DIR": str(cache),
            "COLUMNS": "400",
            "HF_HUB_OFFLINE": "1",
        },
        start_new_session=True,
    )
    try:  # read up to the URL JupyterLab is started at, then stop it
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "JupyterLab at " in line or not line:
                break
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = "".join(lines)
    assert "JupyterLab at " in text, text
    assert "embedding (fastembed:sentence-transformers/all-MiniLM-L6-v2 (offline" in text
    assert re.search(r"embedded with fastembed:.*all-MiniLM-L6-v2.* \d+ chunks", text)
    printed = " ".join(text.split())
    assert [p for p in cache.glob("dense-*") if str(p) in printed]  # the store it wrote
    env = lab_environment(DATA / "vault", None, None, "fastembed:AllMiniLML6V2")
    assert env[ENV_EMBEDDER] == "fastembed:AllMiniLML6V2"
    assert ENV_EMBEDDER not in lab_environment(DATA / "vault", None, None)
    assert "--embedder fastembed:AllMiniLML6V2" in (ROOT / "scripts" / "main.sh").read_text()


def test_missing_vault_or_notebook_is_a_clear_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(tmp_path / "nope")],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert "vault not found" in out.stderr
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "lab",
            "--vault",
            str(DATA / "vault"),
            "--open",
            "x.ipynb",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert "notebook not found" in out.stderr


MAIN = ["bash", str(ROOT / "scripts" / "main.sh"), "--no-browser"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [LAB, MAIN], ids=["askkit-lab", "readme-main-command"])
def test_lab_starts_and_serves_the_notebooks(tmp_path: Path, command: list[str]) -> None:
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path), "COLUMNS": "400"},
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = None
        deadline = time.monotonic() + 600  # main.sh embeds the vault with the real model first
        lines: list[str] = []
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:(\d+))/lab/tree/\S+\?token=(\w+)", line)
            if m:
                url = m
        assert url is not None, "".join(lines)
        base, token = url.group(1), url.group(3)
        listing = None
        while time.monotonic() < deadline:
            try:
                r = httpx.get(f"{base}/api/contents", params={"token": token}, timeout=2)
            except httpx.TransportError:
                time.sleep(0.3)
                continue
            if r.status_code == 200:
                listing = r.json()
                break
            time.sleep(0.3)
        assert listing is not None, "JupyterLab did not answer in time"
        names = {item["name"] for item in listing["content"]}
        assert {"explore.ipynb", "debug-retrieval.ipynb"} <= names
        page = httpx.get(f"{base}/lab/tree/explore.ipynb", params={"token": token}, timeout=5)
        assert page.status_code == 200
        assert "JupyterLab" in page.text
        unauthorized = httpx.get(f"{base}/api/contents", timeout=5)
        assert unauthorized.status_code == 403
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
