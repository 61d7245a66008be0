"""``askkit lab``: index a vault and open askkit's notebooks in JupyterLab.

The vault is indexed with BM25 and, with ``--embedder SPEC``, embedded as
kimun's server embeds it (:class:`askkit.dense.DenseIndex`, in askkit's store
folder, with a progress bar), so the notebooks open on a ready dense index:
they read the spec from ``ASKKIT_EMBEDDER``. ``scripts/main.sh`` passes
``--embedder fastembed:AllMiniLML6V2``, kimun's all-MiniLM-L6-v2, run offline.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, arguments
from askkit.errors import MissingDependencyError, VaultError

__all__ = ["ENV_EMBEDDER", "lab_command", "lab_environment", "register"]

#: Environment variables the bundled notebooks read to find their data.
ENV_VAULT = "ASKKIT_VAULT"
ENV_SERVER = "ASKKIT_SERVER"
ENV_VAULT_ID = "ASKKIT_VAULT_ID"
ENV_EMBEDDER = "ASKKIT_EMBEDDER"
#: Where JupyterLab finds its token: jupyter_server's IdentityProvider reads it from here
#: when no config sets one. Never on the command line: ``/proc/PID/cmdline`` is readable by
#: every local user, ``/proc/PID/environ`` only by the process's owner.
ENV_TOKEN = "JUPYTER_TOKEN"  # noqa: S105 - a variable name, not a secret


def register(sub: Any) -> None:
    """Add ``askkit lab`` to the command line."""
    p = sub.add_parser(
        "lab",
        help="index a vault and start JupyterLab on askkit's notebooks",
        description=(
            "Index the vault, then start JupyterLab on the notebooks folder with the explorer "
            "notebook open. The notebooks read ASKKIT_VAULT (and ASKKIT_SERVER, "
            "ASKKIT_VAULT_ID) to find your vault and server."
        ),
    )
    p.add_argument(
        "--vault", default="data/vault", help="the vault to explore (default data/vault)"
    )
    p.add_argument("--server", help="a kimun server URL the notebooks may also use")
    p.add_argument("--vault-id", help="the server's vault id (with --server)")
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="also embed the vault as kimun's server does (e.g. fastembed:AllMiniLML6V2) and "
        f"have the notebooks use that embedder (${ENV_EMBEDDER})",
    )
    p.add_argument("--notebooks", default="notebooks", help="the folder JupyterLab serves")
    p.add_argument("--open", default="explore.ipynb", help="the notebook to open first")
    p.add_argument(
        "--port",
        type=arguments.whole_number(0, 65535),
        default=0,
        help="the port (default: a free one)",
    )
    p.add_argument(
        "--ip",
        type=arguments.listen_address,
        default="127.0.0.1",
        help="the address to listen on, one of this machine's (default 127.0.0.1)",
    )
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be indexed and the JupyterLab command; index, embed and "
        "start nothing",
    )
    p.set_defaults(func=lab_command)


def _free_port(ip: str) -> int:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((ip, 0))
        port: int = s.getsockname()[1]
        return port


def _headless() -> bool:
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def lab_environment(
    vault: Path, server: str | None, vault_id: str | None, embedder: str | None = None
) -> dict[str, str]:
    """The environment the notebooks run with: where the vault (and server) are, and the
    embedder their dense retrieval uses."""
    env = dict(os.environ)
    env[ENV_VAULT] = str(vault)
    if server:
        env[ENV_SERVER] = server
    if vault_id:
        env[ENV_VAULT_ID] = vault_id
    if embedder:
        env[ENV_EMBEDDER] = embedder
    return env


def _prepare(vault: Path, embedder: str | None, console: Console) -> None:
    """Index the vault (BM25, into askkit's cache) and, with ``embedder``, embed it."""
    from askkit.retrieve.local import LocalIndex  # after the checks: a slow import

    index = LocalIndex(vault, progress=_terminal.progress_bars())
    console.print(
        Text(f"{vault}: {len(index.vault)} notes, {len(index)} chunks ({index.last_report})")
    )
    if embedder:
        from askkit.cli.dense import open_embedder
        from askkit.dense.index import DenseIndex

        dense = DenseIndex(vault, open_embedder(embedder), progress=True)
        console.print(
            Text(
                f"{vault}: embedded with {dense.embedder.name}, {len(dense)} chunks "
                f"({dense.last_embedded} embedded, {dense.last_reused} reused) in "
                f"{dense.store_folder}"
            ),
            soft_wrap=True,
        )


def lab_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit lab``."""
    vault = Path(args.vault).expanduser().resolve()
    if not vault.is_dir():
        raise VaultError(f"vault not found: {vault} is not a folder")
    notebooks = Path(args.notebooks).expanduser().resolve()
    if not (notebooks / args.open).is_file():
        raise VaultError(f"notebook not found: {notebooks / args.open}")
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or shutil.which(
        "jupyter"
    )
    if jupyter is None:
        raise MissingDependencyError(
            "JupyterLab is not installed: pip install 'askkit[lab]' (or run scripts/main.sh)"
        )
    if args.dry_run:  # start nothing, write nothing: say what a real run would do
        console.print(Text(f"would index {vault} (BM25, into askkit's cache)"), soft_wrap=True)
        if args.embedder:
            console.print(
                Text(f"would embed {vault} with {args.embedder} (into askkit's store folder)"),
                soft_wrap=True,
            )
    else:
        _prepare(vault, args.embedder, console)
    port = args.port or _free_port(args.ip)

    token = secrets.token_hex(16)
    argv = [
        jupyter,
        "lab",
        args.open,
        f"--ServerApp.root_dir={notebooks}",
        f"--ServerApp.ip={args.ip}",
        f"--ServerApp.port={port}",
    ]
    if args.no_browser or _headless():
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI machines run as root
    host = f"[{args.ip}]" if ":" in args.ip else args.ip
    url = f"http://{host}:{port}/lab/tree/{args.open}?token={token}"
    console.print(
        Text("askkit: JupyterLab at ", style="bold") + Text(url, style="bold cyan"), soft_wrap=True
    )
    if args.dry_run:
        console.print(Text(" ".join(argv)), soft_wrap=True)
        console.print(Text(f"with the token in ${ENV_TOKEN}, not on the command line"))
        return 0
    sys.stdout.flush()
    os.chdir(notebooks)
    env = lab_environment(vault, args.server, args.vault_id, args.embedder)
    env[ENV_TOKEN] = token  # only the owner reads a process's environment
    os.execve(jupyter, argv, env)  # noqa: S606 - replaces this process with JupyterLab
    return 0  # pragma: no cover - execve does not return
