"""What tipqa's commands share: bad input ends in one clear line and status 2.

The exit codes that are tipqa's own are here (docs/troubleshooting.md lists every code). A
command's name in its usage line is `tipqa COMMAND` when the `tipqa` dispatcher runs it
(`called_as`), and `python -m tipqa.MODULE` otherwise.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from tipqa.core.errors import TipqaError

BAD_INPUT = 2
"""A `tipqa` command's bad input: a file, a line, a field, an argument."""
TASK_FAILED = 30
"""A step that failed, as Luigi's `task_failed` code (an audit left unfinished, for one)."""
BAD_CONFIGURATION = 35
"""A build's configuration refused before anything ran (Luigi's scheduling error code)."""
INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT), as a shell reports it: 128 + the signal's number."""

_called_as: list[str] = []


def called_as(name: str) -> None:
    """Name the command being run as the dispatcher calls it (`tipqa evaluate`)."""
    _called_as[:] = [name]


def prog(module: str) -> str:
    """The command's name for its usage line: `tipqa ...` when dispatched, else `module`'s.

    `module` is the `python -m` name (`python -m tipqa.evaluate compare`); its first word after
    the module is kept (`tipqa evaluate compare`).
    """
    if not _called_as:
        return module
    words = module.split()
    return " ".join([_called_as[0], *words[3:]])


def main(run: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> NoReturn:
    """Run `run(argv)` (the command line's arguments by default) and exit with its status.

    A TipqaError, or a file that cannot be read or written (an OSError), exits 2 (or the
    error's own status) with one line; Ctrl-C exits 130 saying it was interrupted.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = run(sys.argv[1:] if argv is None else argv)
    except TipqaError as exc:
        status = _error(str(exc), exc.status or BAD_INPUT)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        status = _error(f"{where}{exc.strerror or exc}", BAD_INPUT)
    except KeyboardInterrupt:
        status = _error("interrupted (Ctrl-C)", INTERRUPTED)
    sys.exit(status)


def _error(message: str, status: int) -> int:
    """Write `message` as the command's one line of error; return `status`."""
    sys.stderr.write(f"error: {message}\n")
    return status
