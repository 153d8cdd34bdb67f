"""What tipqa's `python -m` commands share: bad input ends in one clear line and status 2."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from tipqa.core.errors import TipqaError


def main(run: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> NoReturn:
    """Run `run(argv)` (the command line's arguments by default) and exit with its status.

    A TipqaError exits 2 with its message.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = run(sys.argv[1:] if argv is None else argv)
    except TipqaError as exc:
        sys.stderr.write(f"error: {exc}\n")
        status = 2
    sys.exit(status)
