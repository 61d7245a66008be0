"""``askkit search --server`` and ``askkit ask``: a running kimun server from the command line.

The token comes from ``--token`` or the ``ASKKIT_KIMUN_TOKEN`` environment
variable (prefer the variable: a command-line argument shows in the process
list).

Both commands ask the server's ``GET /health`` first (open, no token): a
degraded server (its embedder failed to start, so its search and answers are
off) is an error saying why, before anything else is sent; a reranker that
failed to start is a warning (the results are in vector order), and a newer
kimun server release the server's own update check found is a note, both on
stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from askkit._warn import warn_user
from askkit.cli import _terminal, arguments
from askkit.cli._console import print_sources, print_turn
from askkit.errors import SchemaError, ServerError, UsageError
from askkit.retrieve import CONTEXT_SIZES, TOKEN_ENV, ClientSettings
from askkit.sources import Turn

if TYPE_CHECKING:
    from askkit.retrieve.client import KimunClient

__all__ = ["add_search_options", "check_health", "register", "search_command"]

_DEFAULTS = ClientSettings()

#: The :class:`ClientSettings` fields the command line sets, each from ``--name-with-dashes``.
_SETTING_OPTIONS = ("timeout", "poll_interval", "max_polls")


def _server_options(p: argparse.ArgumentParser, *, prefix: str) -> None:
    p.add_argument(
        "--token", help=f"{prefix}the server's bearer token (default: ${TOKEN_ENV}, if set)"
    )
    p.add_argument(
        "--timeout",
        type=arguments.client_setting("timeout", float),
        help=f"{prefix}seconds to wait for each HTTP request (default {_DEFAULTS.timeout:g})",
    )
    p.add_argument(
        "--context-size",
        choices=sorted(CONTEXT_SIZES, key=CONTEXT_SIZES.__getitem__),
        help=f"{prefix}how many chunks the server retrieves: small 10, medium 20, large 40 "
        "(default: the server's top_k)",
    )


def add_search_options(p: argparse.ArgumentParser) -> None:
    """Options of ``askkit search`` that apply to ``--server``."""
    _server_options(p, prefix="with --server: ")


def register(sub: Any) -> None:
    """Add ``askkit ask`` to the command line."""
    p = sub.add_parser("ask", help="ask a running kimun server; print the answer and its sources")
    p.add_argument("question", help="the question")
    p.add_argument("--server", required=True, metavar="URL", help="the kimun server")
    p.add_argument("--vault-id", help="the server's vault id (required)")
    _server_options(p, prefix="")
    p.add_argument(
        "--poll-interval",
        type=arguments.client_setting("poll_interval", float),
        help=f"seconds between polls of the answer job (default {_DEFAULTS.poll_interval:g})",
    )
    p.add_argument(
        "--max-polls",
        type=arguments.client_setting("max_polls", int),
        help=f"give up after this many polls (default {_DEFAULTS.max_polls}, about 12 minutes)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print {question, answer, sources} as JSON (askkit sources reads it back)",
    )
    p.set_defaults(func=ask_command)


def _client_settings(args: argparse.Namespace) -> ClientSettings:
    """The client settings from ``--timeout``, ``--poll-interval`` and ``--max-polls``.

    Options the command does not have, or that were not given, keep their
    defaults; a bad value is a :class:`~askkit.errors.UsageError` naming the option.
    """
    given = {
        name: getattr(args, name)
        for name in _SETTING_OPTIONS
        if getattr(args, name, None) is not None
    }
    try:
        return ClientSettings(**given)
    except SchemaError as exc:
        option = "--" + (exc.field or "").replace("_", "-")
        raise UsageError(f"{option} {exc.message}, got {exc.value!r}") from None


def _client(args: argparse.Namespace) -> KimunClient:
    if not args.vault_id:
        raise UsageError(
            "--vault-id is required with --server: the id the kimun server indexes your vault under"
        )
    from askkit.retrieve.client import KimunClient  # httpx: imported when a server is asked

    return KimunClient(args.server, args.vault_id, args.token, settings=_client_settings(args))


def check_health(client: KimunClient) -> None:
    """``GET /health`` first: a degraded server is an error, a reranker error a warning,
    a newer kimun server release a note."""
    health = client.health()
    if health.degraded is not None:
        raise ServerError(
            f"the kimun server at {client.base_url} is degraded: {health.degraded}; its embedder "
            "failed to start, so search and answers are off until its configuration is fixed "
            "and it restarts (its web UI's /logs page says more)"
        )
    for problem in health.problems():
        warn_user(problem)
    note = health.update_note()
    if note is not None:
        _terminal.console(stderr=True, soft_wrap=True).print(
            Text("askkit: note: " + _terminal.one_line(note), style="dim")
        )


def search_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit search QUERY --server URL --vault-id ID``."""
    with _client(args) as client:
        check_health(client)
        result = client.search(args.query, context_size=args.context_size)
    chunks = result.chunks[: args.k]
    if args.json:
        ms = result.query_time_ms  # kimun sends whole milliseconds: keep them whole
        payload = {
            "chunks": [c.to_dict() for c in chunks],
            "query_time_ms": int(ms) if ms.is_integer() else ms,
        }
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    sources = result.sources[: args.k]
    title = (
        f"{len(sources)} chunks for {args.query!r} from {client.base_url} "
        f"in {result.query_time_ms:g} ms"
    )
    print_sources(
        console, sources, title=title, empty="the server retrieved nothing for this query"
    )
    return 0


def ask_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit ask QUESTION --server URL --vault-id ID``."""
    if not args.question.strip():
        raise UsageError("the question is empty: give the text to ask")
    client = _client(args)
    with client:
        check_health(client)
        with console.status(_terminal.clean(f"waiting for {client.base_url} to answer...")):
            result = client.answer_result(args.question, context_size=args.context_size)
    if args.json:
        payload = {"question": args.question, **result.to_dict()}
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    print_turn(console, Turn.from_answer(args.question, result))
    return 0
