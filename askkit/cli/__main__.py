"""``python -m askkit.cli``: the ``askkit`` command."""

from __future__ import annotations

import sys

from askkit.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
