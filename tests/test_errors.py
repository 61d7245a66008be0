"""askkit.errors: one exception tree, each error also its builtin, each pickling with its fields."""

from __future__ import annotations

import pickle
import subprocess
import sys

import askkit
from askkit.errors import UsageError
from tests.conftest import ROOT


def test_error_hierarchy() -> None:
    assert issubclass(askkit.SchemaError, ValueError)
    assert issubclass(askkit.SchemaError, askkit.AskkitError)
    assert issubclass(askkit.VaultError, OSError)
    assert issubclass(askkit.MissingDependencyError, ImportError)
    assert issubclass(askkit.ServerError, askkit.AskkitError)


def test_schema_error_pickles_with_its_fields() -> None:
    err = askkit.SchemaError("bad", field="x", value=3, file="f.jsonl", line=9)
    again = pickle.loads(pickle.dumps(err))
    assert (again.field, again.value, again.file, again.line) == ("x", 3, "f.jsonl", 9)
    assert str(again) == "f.jsonl:9: x: bad, got 3"


def test_usage_error_is_an_askkit_error_and_a_value_error() -> None:
    assert issubclass(UsageError, askkit.AskkitError)
    assert issubclass(UsageError, ValueError)


def test_server_errors_pickle_after_dask_registers_its_exception_pickler() -> None:
    """distributed installs tblib's pickler for every exception class; AuthError must survive it."""
    code = (
        "import pickle, distributed\n"
        "from askkit.errors import AuthError, JobTimeout, ServerUnavailable\n"
        "for e in (AuthError('m', status=401, path='/p', token_sent=True),\n"
        "          JobTimeout('m', job_id='j', polls=3), ServerUnavailable('m', attempts=3)):\n"
        "    again = pickle.loads(pickle.dumps(e))\n"
        "    assert type(again) is type(e) and vars(again) == vars(e) and str(again) == 'm'\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert out.stdout.strip() == "ok", out.stderr
