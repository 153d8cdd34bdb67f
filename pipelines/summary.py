"""What a `luigi` run prints at its end: the build's summary, or one paragraph per failure.

Luigi prints its own execution summary last; ours is printed after it, when the process
exits, so it is the last thing a user reads. A configuration or input error (a `TipqaError`)
raised while Luigi checks which tasks are complete is logged by Luigi with its traceback; the
paragraph here says it in one sentence (and `ShortOwnErrors` keeps only the error line of
Luigi's report); an error while a task runs keeps its traceback in the log.
"""

from __future__ import annotations

import atexit
import logging
import re
import sys
import textwrap

import luigi

from tipqa.errors import TipqaError

_messages: list[str] = []
_said: set[str] = set()
BEFORE, WHILE = "before running", "while running"
_OWN_ERROR = re.compile(r"^tipqa\.errors\.\w+: ", re.M)
_TRACEBACK = "Traceback (most recent call last):"
_SCHEDULED = re.compile(r"Will not run (\S+)")


class ShortOwnErrors(logging.Filter):
    """Shorten Luigi's report of an error of ours found while it checked a task.

    Luigi logs such an error with its whole traceback; for a `TipqaError` (a bad setting, a
    bad input) the last line says everything, so only that line is kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record, its traceback cut to the error line when the error is ours."""
        if isinstance(record.msg, str):
            head, marker, trace = record.msg.partition(_TRACEBACK)
            if marker and _OWN_ERROR.search(trace):
                line = trace.strip().splitlines()[-1]
                record.msg = head + line
                task = _SCHEDULED.search(head)
                _failed(task.group(1) if task else "a task", line.split(": ", 1)[-1], True, BEFORE)
        return True


logging.getLogger("luigi-interface").addFilter(ShortOwnErrors())


def _print_messages() -> None:
    for message in _messages:
        print(message, file=sys.stderr if message.startswith("tipqa: ") else sys.stdout)


atexit.register(_print_messages)


def announce(text: str) -> None:
    """Print `text` at the end of the run (after Luigi's own summary)."""
    _messages.append(text)


def _failed(task: str, error: str, ours: bool, when: str) -> None:
    """Say once, at the end, that `task` failed with `error` (a repeated error is said once)."""
    if error in _said:
        return
    _said.add(error)
    kind = "configuration or input error" if ours else "error"
    paragraph = (
        f"tipqa: {task} failed {when} ({kind}): {error}. Nothing already computed was lost: "
        "fix the cause and run the same command again to resume."
    )
    if not (ours and when == BEFORE):
        paragraph += " The traceback is in the log above."
    announce(textwrap.fill(paragraph, width=100))


@luigi.Task.event_handler(luigi.Event.FAILURE)
def _on_failure(task: luigi.Task, error: BaseException) -> None:
    message = (
        f"{type(error).__name__}: {error}" if not isinstance(error, TipqaError) else str(error)
    )
    _failed(task.task_family, message, isinstance(error, TipqaError), WHILE)
