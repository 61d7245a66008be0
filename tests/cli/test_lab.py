"""``askkit lab`` indexes the vault and really starts JupyterLab, printing a working URL."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import DATA, ROOT

LAB = [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(DATA / "vault"), "--no-browser"]


def dry_run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``askkit lab --dry-run ARGS`` on the bundled vault, with its cache in ``cache``."""
    return subprocess.run(
        [*LAB, *args, "--dry-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(cache), "COLUMNS": "400"},
    )


def test_dry_run_prints_the_url_and_command(tmp_path: Path) -> None:
    out = dry_run("--open", "debug-retrieval.ipynb", cache=tmp_path)
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
        _stop(proc)
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
        _stop(proc)


# Issue 39, item 3: the lab's token never travels in argv. /proc/PID/cmdline is readable by
# every local user, so a token there lets any of them read and run code in the lab.

PROC = Path("/proc/self/cmdline")
NOBODY = 65534


@dataclasses.dataclass(frozen=True, slots=True)
class _RunningLab:
    """A real ``askkit lab`` (exec'd into JupyterLab: same pid), answering on ``base``."""

    pid: int
    base: str
    token: str
    runtime: Path  # JUPYTER_RUNTIME_DIR, where jupyter_server writes its own server file


def _wait_for_lab(proc: subprocess.Popen[str], runtime: Path) -> _RunningLab:
    """Read up to the printed URL, then wait for JupyterLab to answer (a startup deadline)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    lines: list[str] = []
    url = None
    while url is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        url = re.search(r"(http://127\.0\.0\.1:\d+)/lab/tree/\S+\?token=(\w+)", line)
        if not line:
            break
    assert url is not None, "".join(lines)
    lab = _RunningLab(proc.pid, url.group(1), url.group(2), runtime)
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{lab.base}/api", timeout=2)
        except httpx.TransportError:
            time.sleep(0.3)
            continue
        return lab
    pytest.fail("JupyterLab did not answer in time")


@pytest.fixture(scope="module")
def hardened_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_RunningLab]:
    """``askkit lab --no-browser`` on a free port and a two-note vault in a tmp folder."""
    tmp = tmp_path_factory.mktemp("lab-39-3")
    vault = tmp / "vault"
    vault.mkdir()
    (vault / "alpaca.md").write_text("# Alpaca\n\nAlpacas are kept for their wool.\n")
    (vault / "llama.md").write_text("# Llama\n\nLlamas are kept as pack animals.\n")
    runtime = tmp / "runtime"
    proc = subprocess.Popen(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(vault), "--no-browser"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            **os.environ,
            "ASKKIT_CACHE_DIR": str(tmp / "cache"),
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "COLUMNS": "400",
        },
        start_new_session=True,
    )
    try:
        yield _wait_for_lab(proc, runtime)
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End the lab and everything it started (its process group)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(item.partition("=")[::2] for item in raw.split("\0") if item)


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's argv from /proc")
def test_hardening_39_3_the_token_is_in_the_owners_environment_not_argv(
    hardened_lab: _RunningLab,
) -> None:
    lab = hardened_lab
    cmdline = Path(f"/proc/{lab.pid}/cmdline")
    argv = cmdline.read_bytes().decode().split("\0")
    assert "explore.ipynb" in argv  # the exec'd JupyterLab, not askkit before its exec
    assert f"--ServerApp.port={lab.base.rsplit(':', 1)[1]}" in argv
    assert lab.token not in cmdline.read_text()
    assert stat.S_IMODE(cmdline.stat().st_mode) & 0o004  # why argv leaked: world-readable

    environ = Path(f"/proc/{lab.pid}/environ")
    assert _environ(lab.pid)["JUPYTER_TOKEN"] == lab.token
    assert stat.S_IMODE(environ.stat().st_mode) == 0o400
    assert environ.stat().st_uid == os.geteuid()
    # jupyter_server's own server file also holds the token: 0600 in a 0700 folder
    (server_file,) = lab.runtime.glob(f"jpserver-{lab.pid}.json")
    assert json.loads(server_file.read_text())["token"] == lab.token
    assert stat.S_IMODE(server_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(lab.runtime.stat().st_mode) == 0o700

    # the lab still refuses a request without the token (or with a wrong one)
    contents = f"{lab.base}/api/contents"
    assert httpx.get(contents, timeout=5).status_code == 403
    assert httpx.get(contents, params={"token": "0" * 32}, timeout=5).status_code == 403
    assert httpx.get(contents, params={"token": lab.token}, timeout=5).status_code == 200
    headers = {"Authorization": f"token {lab.token}"}
    assert httpx.get(contents, headers=headers, timeout=5).status_code == 200


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's argv from /proc")
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="becomes another user (needs root)"
)
def test_hardening_39_3_another_local_user_cannot_read_the_token(
    hardened_lab: _RunningLab,
) -> None:
    """What the attacker of issue 39 tried, as the user nobody: the argv reads, without the
    token; the environment does not read at all."""
    lab = hardened_lab

    def as_nobody(path: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["/bin/cat", path],
            check=False,
            capture_output=True,
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
        )

    argv = as_nobody(f"/proc/{lab.pid}/cmdline")
    assert argv.returncode == 0, argv.stderr
    assert b"--ServerApp.port=" in argv.stdout
    assert lab.token.encode() not in argv.stdout
    environ = as_nobody(f"/proc/{lab.pid}/environ")
    assert environ.returncode != 0
    assert b"Permission denied" in environ.stderr
    assert lab.token.encode() not in environ.stdout
    for path in lab.runtime.iterdir():
        leaked = as_nobody(str(path))
        assert leaked.returncode != 0
        assert lab.token.encode() not in leaked.stdout


def test_hardening_39_3_dry_run_prints_no_token_in_the_command(tmp_path: Path) -> None:
    out = dry_run(cache=tmp_path)
    assert out.returncode == 0, out.stderr
    url = re.search(r"/lab/tree/explore\.ipynb\?token=(\w+)", out.stdout)
    assert url is not None, out.stdout  # the URL the user opens keeps its token
    token = url.group(1)
    command = next(line for line in out.stdout.splitlines() if " lab explore.ipynb " in line)
    assert "--ServerApp.port=" in command
    assert token not in command
    assert "IdentityProvider.token" not in command
    assert out.stdout.count(token) == 1  # only in the URL
    assert "JUPYTER_TOKEN" in out.stdout  # it says where the token goes instead
