"""JupyterLab + Debian's chromium for the browser tests (marked ``browser``).

The ``lab`` fixture starts JupyterLab on a temporary folder (a free port, a
random token, its own config, settings and workspace folders) and stops it at
the end; ``browser`` launches ``/usr/bin/chromium`` headless through
Playwright. When something is missing (chromium, Playwright, JupyterLab) the
tests skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CHROMIUM = Path(os.environ.get("ASKKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = ROOT / "docs" / "screenshots"
JUPYTER = Path(sys.executable).with_name("jupyter")


def _missing(reason: str) -> None:
    """Skip, or fail under CI=true: a browser test never silently passes without a browser."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser test prerequisites missing under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Lab:
    """A running JupyterLab: where it serves, with which token, from which folder."""

    url: str
    token: str
    root: Path
    log: Path

    def open_url(self, notebook: str) -> str:
        """The notebook in a workspace of its own (no tabs restored from another test)."""
        workspace = Path(notebook).stem
        return f"{self.url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={self.token}"

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": src,
                }
                for src in cells
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = self.root / name
        path.write_text(json.dumps(nb), encoding="utf-8")
        return path


def _settings(folder: Path) -> None:
    """User settings that keep pop-ups (news, update checks) off the page and render every cell."""
    notif = folder / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notif.parent.mkdir(parents=True, exist_ok=True)
    notif.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    tracker = folder / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    # every cell in the page (JupyterLab leaves a cell scrolled out of view unrendered
    # by default, with no prompt to read)
    tracker.write_text(json.dumps({"autoStartDefaultKernel": True, "windowingMode": "none"}))


def _wait_ready(url: str, token: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        status = f"{url}/api/status?token={token}"
        with contextlib.suppress(OSError), urllib.request.urlopen(status, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer in 90 s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, minilm_cache: Path) -> Iterator[Lab]:
    if not JUPYTER.exists() or shutil.which(str(JUPYTER)) is None:
        _missing(f"jupyter not found at {JUPYTER} (install the 'lab' extra)")
    try:
        import jupyterlab  # noqa: F401
        import jupyterlab_widgets  # noqa: F401
    except ImportError as exc:
        _missing(f"JupyterLab or its widget manager is not installed: {exc}")
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    settings = base / "settings"
    _settings(settings)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "ASKKIT_CACHE_DIR": str(minilm_cache),  # the offline model, built once a session
    }
    token = secrets.token_hex(16)
    port = _free_port()
    log = base / "jupyterlab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(JUPYTER),
                "lab",
                "--no-browser",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.root_dir={root}",
                "--LabApp.news_url=",
                *(["--allow-root"] if os.geteuid() == 0 else []),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=root,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, token, proc, log)
        yield Lab(url, token, root, log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _missing(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _missing(f"playwright is not installed: {exc}")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 2200})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    try:
        yield pg
    finally:
        with contextlib.suppress(Exception):
            pg.screenshot(path=str(tmp_path / "last.png"), full_page=True)
        context.close()


def save_screenshot(locator: Any, name: str, tmp_path: Path) -> None:
    """Save a screenshot to docs/screenshots/ (overwritten each run) and the test's tmp folder."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(SCREENSHOTS / name))
    locator.screenshot(path=str(tmp_path / name))
