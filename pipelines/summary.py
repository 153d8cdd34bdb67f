"""What a `luigi` run prints at its end: the build's summary, or one paragraph per failure.

Luigi prints its own execution summary last; ours is printed after it, when the process
exits, so it is the last thing a user reads. A configuration or input error (a `TipqaError`)
raised while Luigi checks which tasks are complete is logged by Luigi with its traceback; the
paragraph here says it in one sentence (and `ShortOwnErrors` keeps only the error line of
Luigi's report); an error while a task runs keeps its traceback in the log, except refused
credentials (a `CredentialsError`: a wrong or expired token) and a second judge that cannot be
reached (an `UnreachableError`), which `ShortOwnErrors` also cuts to their error line.

With `--workers N` every task runs in a forked process, which exits without running `atexit`:
a message announced there is appended to a spool file named by the main process's id, and the
main process prints the spool's messages with its own.

A CreateDataset run that stopped before CreateDataset itself ran (a step failed, Ctrl-C)
replaces the run's `summary.md` by a note that says so, with the run's messages
(`note_unfinished`): the summary of an earlier build must not stand for this one.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import sys
import tempfile
import textwrap
from pathlib import Path

import luigi
import orjson

from pipelines.config import plan
from tipqa.core.errors import CredentialsError, TipqaError, UnreachableError
from tipqa.core.jsonl import atomic_open

_MAIN_PID = os.getpid()
_messages: list[str] = []
_said: set[str] = set()
BEFORE, WHILE = "before running", "while running"
_OWN_ERROR = re.compile(rf"^{re.escape(TipqaError.__module__)}\.\w+: ", re.M)
_TRACEBACK = "Traceback (most recent call last):"
_SCHEDULED = re.compile(r"Will not run (\S+)")


class ShortOwnErrors(logging.Filter):
    """Shorten Luigi's report of an error of ours found while it checked or ran a task.

    Luigi logs such an error with its whole traceback; for a `TipqaError` found while checking
    (a bad setting, a bad input) and for a `CredentialsError` or `UnreachableError` raised while
    running (a refused token, a second judge's server down) the last line says everything, so
    only that line is kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record, its traceback cut to the error line when the error is ours."""
        refused = record.exc_info[1] if record.exc_info else None
        if isinstance(refused, CredentialsError | UnreachableError):
            record.msg, record.args = f"{record.getMessage()}: {refused}", ()
            record.exc_info, record.exc_text = None, None
        elif isinstance(record.msg, str):
            head, marker, trace = record.msg.partition(_TRACEBACK)
            if marker and _OWN_ERROR.search(trace):
                line = trace.strip().splitlines()[-1]
                record.msg = head + line
                task = _SCHEDULED.search(head)
                name, error = task.group(1) if task else "a task", line.split(": ", 1)[-1]
                _failed(name, error, TipqaError.kind, BEFORE)
        return True


logging.getLogger("luigi-interface").addFilter(ShortOwnErrors())


def _spool() -> Path:
    """The file where the worker processes of this run leave their messages."""
    return Path(tempfile.gettempdir()) / f"tipqa-messages-{_MAIN_PID}.jsonl"


def _spooled() -> list[str]:
    """The messages the worker processes left, removing their file."""
    path = _spool()
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return []
    path.unlink(missing_ok=True)
    return [orjson.loads(line) for line in lines if line]


def _collected() -> list[str]:
    """The run's messages: the main process's and the spooled ones, each once."""
    _messages[:] = list(dict.fromkeys([*_messages, *_spooled()]))
    return _messages


def print_messages() -> None:
    """Print the run's messages (the main process's and the spooled ones) once."""
    if os.getpid() != _MAIN_PID:
        return
    for message in _collected():
        print(message, file=sys.stderr if message.startswith("tipqa: ") else sys.stdout)
    _messages.clear()


def note_unfinished(task: str, *, interrupted: bool = False) -> None:
    """Make `summary.md` say that this CreateDataset run did not finish, and why (see the
    module). Nothing is written when the run's folder is unknown or was never made."""
    if task != "CreateDataset":
        return
    try:
        layout = plan().layout
    except TipqaError:
        return
    if not layout.root.is_dir():
        return
    why = "it was interrupted (Ctrl-C)" if interrupted else "a step failed or did not run"
    lines = [
        f"# Build {layout.root.name}: not finished",
        "",
        f"The last run of CreateDataset stopped before its end: {why}.",
        *(f"\n{message}" for message in _collected()),
        "",
        "What the finished steps wrote is kept: fix the cause, then run the same command "
        "again to resume.",
    ]
    with atomic_open(layout.summary) as handle:
        handle.write(("\n".join(lines) + "\n").encode())


atexit.register(print_messages)


def announce(text: str) -> None:
    """Print `text` at the end of the run (after Luigi's own summary), from any worker."""
    if os.getpid() == _MAIN_PID:
        _messages.append(text)
        return
    with open(_spool(), "ab") as spool:
        spool.write(orjson.dumps(text) + b"\n")


def _failed(task: str, error: str, kind: str | None, when: str) -> None:
    """Say once, at the end, that `task` failed with `error` (a repeated error is said once).

    `kind` is what a `TipqaError` says it is; None for any other exception.
    """
    if error in _said:
        return
    _said.add(error)
    paragraph = (
        f"tipqa: {task} failed {when} ({kind or 'error'}): {error}. Nothing already computed "
        "was lost: fix the cause and run the same command again to resume."
    )
    if not (kind and when == BEFORE) and kind != CredentialsError.kind:
        paragraph += " The traceback is in the log above."
    announce(textwrap.fill(paragraph, width=100, break_long_words=False, break_on_hyphens=False))


@luigi.Task.event_handler(luigi.Event.FAILURE)
def _on_failure(task: luigi.Task, error: BaseException) -> None:
    if isinstance(error, TipqaError):
        _failed(task.task_family, str(error), error.kind, WHILE)
    else:
        _failed(task.task_family, f"{type(error).__name__}: {error}", None, WHILE)
