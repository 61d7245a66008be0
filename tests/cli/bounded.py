"""Run askkit in a child process that cannot hang the tests or exhaust the machine.

A FIFO given as an input blocks a reader until something writes to it, and
``/dev/zero`` is read until memory runs out: a test of either must fail, not
hang or take the machine down, when a check is missing. So the child gets a
deadline (a child still running then is killed and reported as timed out)
and a cap on its address space (a runaway read ends in a ``MemoryError``,
which the command line reports as its own bug: ``unexpected MemoryError``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.conftest import ROOT

__all__ = ["MEMORY_LIMIT", "TIMED_OUT", "run_cli", "run_python"]

#: The child's address-space cap: above what any command reserves (about 2 GiB
#: of mostly reserved address space), far below the machine's memory.
MEMORY_LIMIT = 3 * 1024**3
#: The return code reported for a child killed at its deadline.
TIMED_OUT = -999

_PRELUDE = (
    "import resource, sys\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
    "code = sys.argv.pop(1)\n"
    "exec(compile(code, '<bounded>', 'exec'), {'__name__': '__main__'})\n"
)
_CLI = "import sys\nfrom askkit.cli import main\nsys.argv[0] = 'askkit'\nsys.exit(main())\n"


def run_python(
    code: str,
    *args: str,
    timeout: float = 60,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] = ROOT,
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (with ``sys.argv[1:]`` = ``args``) in a bounded child process.

    A child still running after ``timeout`` seconds is killed; the result then
    has return code :data:`TIMED_OUT` and says so on stderr.
    """
    argv = [sys.executable, "-c", _PRELUDE, code, *args]
    try:
        return subprocess.run(
            argv,
            check=False,
            capture_output=True,
            text=True,
            cwd=Path(cwd),
            env=None if env is None else dict(env),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:  # run() has killed the child
        return subprocess.CompletedProcess(
            argv, TIMED_OUT, "", f"timed out after {exc.timeout:g} s (killed)\n"
        )


def run_cli(
    argv: Sequence[str],
    *,
    timeout: float = 60,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] = ROOT,
) -> subprocess.CompletedProcess[str]:
    """``askkit ARGV`` in a bounded child process (see :func:`run_python`)."""
    return run_python(_CLI, *argv, timeout=timeout, env=env, cwd=cwd)
