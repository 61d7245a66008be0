"""``askkit lab``: index a vault and open copies of askkit's notebooks in JupyterLab.

The vault is indexed with BM25 and, with ``--embedder SPEC``, embedded as
kimun's server embeds it (:class:`askkit.dense.DenseIndex`, in askkit's store
folder, with a progress bar and an estimate; on a pipe, a line every few
seconds), so the notebooks open on a ready dense index: they read the spec
from ``ASKKIT_EMBEDDER``. ``scripts/main.sh`` passes ``--embedder
fastembed:AllMiniLML6V2``, kimun's all-MiniLM-L6-v2, run offline.

JupyterLab saves outputs into the notebooks it opens, so it never opens the
shipped ones: it works on copies, in a folder per vault in askkit's cache
(:mod:`askkit.cli._labfolder`), opens only the notebook ``--open`` names, and
starts with an empty workspace, never an earlier session's layout. The copies
live outside the repository: the notebooks find their data in the environment
(:class:`LabSetup`, :func:`lab_environment`).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _labfolder, _terminal, arguments
from askkit.errors import MissingDependencyError, UsageError, VaultError

__all__ = [
    "ENV_DATA",
    "ENV_EMBEDDER",
    "ENV_LABELS",
    "ENV_QRELS",
    "ENV_QUERIES",
    "ENV_SERVER",
    "ENV_VAULT",
    "ENV_VAULT_ID",
    "LABELS_FOLDER",
    "LabSetup",
    "data_root",
    "lab_command",
    "lab_environment",
    "register",
]

#: Environment variables the bundled notebooks read to find their data: the vault
#: (absolute), the repository's ``data/`` folder (the bundled sample files), the user's
#: questions and judgments (``--queries``, ``--qrels``), the judgments file the Labeler
#: writes, a kimun server and its vault id, and the embedder.
ENV_VAULT = "ASKKIT_VAULT"
ENV_DATA = "ASKKIT_DATA"
ENV_QUERIES = "ASKKIT_QUERIES"
ENV_QRELS = "ASKKIT_QRELS"
ENV_LABELS = "ASKKIT_LABELS"
ENV_SERVER = "ASKKIT_SERVER"
ENV_VAULT_ID = "ASKKIT_VAULT_ID"
ENV_EMBEDDER = "ASKKIT_EMBEDDER"
#: Where JupyterLab finds its token: jupyter_server's IdentityProvider reads it from here
#: when no config sets one. Never on the command line: ``/proc/PID/cmdline`` is readable by
#: every local user, ``/proc/PID/environ`` only by the process's owner.
ENV_TOKEN = "JUPYTER_TOKEN"  # noqa: S105 - a variable name, not a secret
#: The Labeler's judgments, unless ``--labels`` names a file: one per vault, named as its lab
#: folder is, in askkit's data folder (:func:`data_root`). Never in the lab folder, a cache
#: whose tag tells backup tools to skip it and says it may be deleted freely.
LABELS_FOLDER = "judgments"


def data_root() -> Path:
    """Where askkit keeps what a user made and must not lose (the Labeler's judgments):
    ``$ASKKIT_DATA_DIR``, else ``$XDG_DATA_HOME/askkit``, else ``~/.local/share/askkit``.

    >>> import os
    >>> os.environ["ASKKIT_DATA_DIR"] = "/tmp/mine"
    >>> str(data_root())
    '/tmp/mine'
    >>> del os.environ["ASKKIT_DATA_DIR"]
    """
    explicit = os.environ.get("ASKKIT_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "askkit"


def register(sub: Any) -> None:
    """Add ``askkit lab`` to the command line."""
    p = sub.add_parser(
        "lab",
        help="index a vault and start JupyterLab on copies of askkit's notebooks",
        description=(
            "Index the vault, copy the notebooks into a folder of their own for this vault "
            "(in askkit's cache folder; the shipped notebooks are never written), then start "
            "JupyterLab there with one notebook open. The notebooks read ASKKIT_VAULT, "
            "ASKKIT_DATA, ASKKIT_QUERIES, ASKKIT_QRELS, ASKKIT_LABELS (and ASKKIT_SERVER, "
            "ASKKIT_VAULT_ID, ASKKIT_EMBEDDER) to find your vault, data and server."
        ),
    )
    p.add_argument(
        "--vault", default="data/vault", help="the vault to explore (default data/vault)"
    )
    p.add_argument(
        "--queries",
        metavar="TSV",
        help=f"your questions about the vault, id<TAB>text (${ENV_QUERIES}; default with "
        "the bundled vault: data/queries.tsv)",
    )
    p.add_argument(
        "--qrels",
        metavar="FILE",
        help=f"your judgments of the vault's sections (${ENV_QRELS}; default with the "
        "bundled vault: data/qrels.tsv)",
    )
    p.add_argument(
        "--labels",
        metavar="FILE",
        help=f"where the Labeler saves judgments (${ENV_LABELS}; default: one file per vault "
        f"in askkit's data folder, $ASKKIT_DATA_DIR or ~/.local/share/askkit/{LABELS_FOLDER}/, "
        "never in a cache)",
    )
    p.add_argument("--server", help="a kimun server URL the notebooks may also use")
    p.add_argument("--vault-id", help="the server's vault id (with --server)")
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="also embed the vault as kimun's server does (e.g. fastembed:AllMiniLML6V2) and "
        f"have the notebooks use that embedder (${ENV_EMBEDDER})",
    )
    p.add_argument(
        "--notebooks",
        default="notebooks",
        help="the notebooks to copy (default notebooks; read, never written)",
    )
    p.add_argument(
        "--data",
        default="data",
        help=f"the bundled sample files the notebooks read (${ENV_DATA}; default data)",
    )
    p.add_argument("--open", default="explore.ipynb", help="the one notebook to open")
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
        "--prepare-only",
        action="store_true",
        help="index, embed and copy the notebooks, then stop: start no JupyterLab",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be indexed, where the notebooks' copies are and the JupyterLab "
        "command; index, embed, copy and start nothing",
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


@dataclass(frozen=True, slots=True)
class LabSetup:
    """Where one lab's notebooks find their data; every path absolute.

    ``vault``: the vault explored. ``data``: the repository's ``data/`` folder
    (the bundled sample files). ``labels``: the judgments file the Labeler
    writes. ``queries`` and ``qrels``: the user's questions and judgments
    (``None``: none). ``server``, ``vault_id``, ``embedder``: as ``askkit lab``
    was given them.
    """

    vault: Path
    data: Path
    labels: Path
    queries: Path | None = None
    qrels: Path | None = None
    server: str | None = None
    vault_id: str | None = None
    embedder: str | None = None

    def variables(self) -> dict[str, str]:
        """The environment variables this setup sets (what ``--dry-run`` prints).

        >>> setup = LabSetup(Path("/v"), Path("/repo/data"), Path("/lab/judgments.tsv"))
        >>> setup.variables()
        {'ASKKIT_VAULT': '/v', 'ASKKIT_DATA': '/repo/data', 'ASKKIT_LABELS': '/lab/judgments.tsv'}
        """
        values = {
            ENV_VAULT: self.vault,
            ENV_DATA: self.data,
            ENV_LABELS: self.labels,
            ENV_QUERIES: self.queries,
            ENV_QRELS: self.qrels,
            ENV_SERVER: self.server,
            ENV_VAULT_ID: self.vault_id,
            ENV_EMBEDDER: self.embedder,
        }
        return {name: str(value) for name, value in values.items() if value}


#: Variables ``askkit lab`` decides, removed from its own environment when it sets none:
#: questions and judgments belong to one vault, never another's left in the shell.
_OWNED = (ENV_VAULT, ENV_DATA, ENV_LABELS, ENV_QUERIES, ENV_QRELS)


def lab_environment(setup: LabSetup, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment JupyterLab and its kernels run with: ``base`` (default this
    process's), with :meth:`LabSetup.variables` set and the other notebook variables
    ``askkit lab`` owns removed (a server, a vault id and an embedder set outside stay)."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _OWNED}
    env.update(setup.variables())
    return env


def _existing_file(text: str | None, what: str, option: str) -> Path | None:
    if text is None:
        return None
    arguments.check_input(text, what=what, option=option)
    return Path(text).expanduser().resolve()


def _labels_file(text: str | None, folder: Path, vault: Path, keep_out: list[Path]) -> Path:
    """The Labeler's file: ``--labels``, or the vault's in askkit's data folder
    (``judgments/<the lab folder's name>.tsv``); never in the vault or among the files
    askkit ships (``keep_out``)."""
    if text is None:
        return data_root() / LABELS_FOLDER / f"{folder.name.removeprefix('lab-')}.tsv"
    labels = Path(text).expanduser().resolve()
    if labels.is_dir():
        raise UsageError(f"--labels {labels} is a folder; name a file (it need not exist)")
    for inside, why in [(vault, "the vault; askkit never writes into a vault")] + [
        (shipped, "askkit's shipped files") for shipped in keep_out
    ]:
        if labels.is_relative_to(inside):
            raise UsageError(f"--labels {labels} is inside {why}: name a file elsewhere")
    return labels


def _setup(args: argparse.Namespace, vault: Path, folder: Path, shipped: Path) -> LabSetup:
    """Check the data, questions, judgments and labels options; the notebooks' setup."""
    data = Path(args.data).expanduser().resolve()
    if not data.is_dir():
        raise VaultError(f"the sample data folder not found: {data} is not a folder (--data)")
    queries = _existing_file(args.queries, "queries", "--queries")
    qrels = _existing_file(args.qrels, "qrels", "--qrels")
    bundled = vault == (data / "vault").resolve()
    if bundled and queries is None and qrels is None:
        queries, qrels = data / "queries.tsv", data / "qrels.tsv"
    return LabSetup(
        vault=vault,
        data=data,
        labels=_labels_file(args.labels, folder, vault, [data, shipped]),
        queries=queries,
        qrels=qrels,
        server=args.server,
        vault_id=args.vault_id,
        embedder=args.embedder,
    )


def _prepare(vault: Path, embedder: str | None, console: Console) -> None:
    """Index the vault (BM25, into askkit's cache) and, with ``embedder``, embed it: with
    progress bars and their estimate on a terminal, a line every few seconds on a pipe."""
    from askkit.retrieve.local import LocalIndex  # after the checks: a slow import

    with _terminal.progress_output():
        index = LocalIndex(vault, progress=True)
    console.print(
        Text(f"{vault}: {len(index.vault)} notes, {len(index)} chunks ({index.last_report})")
    )
    if embedder:
        from askkit.cli.dense import open_embedder
        from askkit.dense.index import DenseIndex

        with _terminal.progress_output():
            dense = DenseIndex(vault, open_embedder(embedder), progress=True)
        console.print(
            Text(
                f"{vault}: embedded with {dense.embedder.name}, {len(dense)} chunks "
                f"({dense.last_embedded} embedded, {dense.last_reused} reused) in "
                f"{dense.store_folder}"
            ),
            soft_wrap=True,
        )


def _copy_notebooks(shipped: Path, folder: Path, vault: Path, console: Console) -> None:
    """Bring the vault's copies up to date; say where they are and what changed."""
    done = _labfolder.sync_copies(shipped, folder, vault)
    copied = [c.name for c in done if c.action == "copied"]
    where = _labfolder.copies_folder(folder)
    console.print(
        Text(f"notebooks: copies of {shipped} in {where} (copied now: {len(copied)})"),
        soft_wrap=True,
    )
    for copy in done:
        if copy.action in {"refreshed", "edited"}:
            console.print(Text(copy.describe()), soft_wrap=True)


def _jupyter() -> str:
    found = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or shutil.which(
        "jupyter"
    )
    if found is None:
        raise MissingDependencyError(
            "JupyterLab is not installed: pip install 'askkit[lab]' (or run scripts/main.sh)"
        )
    return found


def _dry_run(shipped: Path, folder: Path, setup: LabSetup, console: Console) -> None:
    """Say what a real run would index, embed and copy, and the notebooks' environment;
    write nothing."""
    vault = setup.vault
    console.print(Text(f"would index {vault} (BM25, into askkit's cache)"), soft_wrap=True)
    if setup.embedder:
        console.print(
            Text(f"would embed {vault} with {setup.embedder} (into askkit's store folder)"),
            soft_wrap=True,
        )
    plan = _labfolder.plan_copies(shipped, folder)
    console.print(
        Text(
            f"would work on copies of {shipped} in {_labfolder.copies_folder(folder)} "
            f"({sum(c.action == 'copied' for c in plan)} to copy, "
            f"{sum(c.action == 'refreshed' for c in plan)} to refresh, "
            f"{sum(c.action == 'edited' for c in plan)} edited to keep)"
        ),
        soft_wrap=True,
    )
    for name, value in setup.variables().items():
        console.print(Text(f"  {name}={value}"), soft_wrap=True)


def lab_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit lab``."""
    vault = Path(args.vault).expanduser().resolve()
    if not vault.is_dir():
        raise VaultError(f"vault not found: {vault} is not a folder")
    shipped = Path(args.notebooks).expanduser().resolve()
    if not (shipped / args.open).is_file():
        raise VaultError(f"notebook not found: {shipped / args.open}")
    folder = _labfolder.lab_folder(vault)
    setup = _setup(args, vault, folder, shipped)
    jupyter = "" if args.prepare_only else _jupyter()
    if args.dry_run:  # start nothing, write nothing: say what a real run would do
        _dry_run(shipped, folder, setup, console)
    else:
        _copy_notebooks(shipped, folder, vault, console)
        _prepare(vault, args.embedder, console)
    if args.prepare_only:
        if not args.dry_run:
            console.print(Text("askkit: ready (--prepare-only: JupyterLab not started)"))
        return 0
    if args.dry_run:
        _dry_start(args, jupyter, folder, console)
        return 0
    return _start(args, jupyter, folder, setup, console)


def _argv(args: argparse.Namespace, jupyter: str, folder: Path, port: int | str) -> list[str]:
    """JupyterLab's command line: the copies as its root, a fresh workspace, ``--open``
    open; never the token (it goes in the environment, :data:`ENV_TOKEN`)."""
    argv = [
        jupyter,
        "lab",
        args.open,
        f"--ServerApp.root_dir={_labfolder.copies_folder(folder)}",
        f"--ServerApp.ip={args.ip}",
        f"--ServerApp.port={port}",
        f"--LabApp.workspaces_dir={_labfolder.workspaces_folder(folder)}",
    ]
    if args.no_browser or _headless():
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI machines run as root
    return argv


def _dry_start(args: argparse.Namespace, jupyter: str, folder: Path, console: Console) -> None:
    """Say how JupyterLab would start, and its command; no URL and no token, since
    nothing listens: a real start makes its token, and picks a free port unless
    ``--port`` names one."""
    port: int | str = args.port or "PORT"
    where = f"port {args.port}" if args.port else "a free port (PORT: chosen at start)"
    console.print(
        Text(f"would start JupyterLab on {args.ip}, {where}, with {args.open} open:"),
        soft_wrap=True,
    )
    console.print(Text("  " + " ".join(_argv(args, jupyter, folder, port))), soft_wrap=True)
    console.print(
        Text(
            f"a real start makes a new token, passes it in ${ENV_TOKEN} (never on the command "
            "line) and prints the URL to open with it"
        ),
        soft_wrap=True,
    )


def _start(
    args: argparse.Namespace, jupyter: str, folder: Path, setup: LabSetup, console: Console
) -> int:
    """Start JupyterLab on the copies, with a fresh workspace, and only ``--open`` open."""
    port = args.port or _free_port(args.ip)
    root = _labfolder.copies_folder(folder)
    token = secrets.token_hex(16)
    argv = _argv(args, jupyter, folder, port)
    host = f"[{args.ip}]" if ":" in args.ip else args.ip
    url = f"http://{host}:{port}/lab/tree/{args.open}?token={token}"
    console.print(
        Text("askkit: JupyterLab at ", style="bold") + Text(url, style="bold cyan"), soft_wrap=True
    )
    _labfolder.fresh_workspaces(folder)  # no earlier session's notebooks reopen
    sys.stdout.flush()
    os.chdir(root)
    env = lab_environment(setup)
    env[ENV_TOKEN] = token  # only the owner reads a process's environment
    os.execve(jupyter, argv, env)  # noqa: S606 - replaces this process with JupyterLab
    return 0  # pragma: no cover - execve does not return
