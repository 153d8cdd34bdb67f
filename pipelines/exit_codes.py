"""Exit codes of a `luigi` run: non-zero when something failed, zero when the work is done.

Luigi exits 0 when a task failed unless its `[retcode]` section says otherwise. Importing this
module (`luigi --module pipelines` does) fills in that section's keys the user's configuration
leaves out, before Luigi reads them; a value the configuration gives is kept.

With several clients on one central scheduler, Luigi's own verdict is wrong the other way: a
client reports the tasks that another client ran as "not run" or "run by another worker" and
exits non-zero although the build finished. So the run's outcome is watched here (Luigi's
events, in the main process and in the forked worker processes) and decided at exit:

- something failed in this client (a task, a scheduling check, a missing external input): Luigi's
  code stands (30, 35, 20);
- otherwise the root task ran to success in this client, or is complete: 0;
- otherwise (another client's task failed, or the run stopped before the root could run):
  `UNFINISHED` (25), whatever Luigi said;
- stopped by Ctrl-C (SIGINT): `INTERRUPTED` (130), said in one line instead of a traceback.

A run that scheduled nothing (`--help`, a bad command line, a taken process lock) keeps
Luigi's code. A run that failed or stopped before its root task itself ran leaves a
`summary.md` that says so (`pipelines.summary.note_unfinished`), not the summary of an
earlier build.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType, TracebackType

import luigi
import luigi.configuration

from pipelines.summary import note_unfinished, print_messages
from tipqa.core.cli import BAD_CONFIGURATION, INTERRUPTED, TASK_FAILED

EXIT_CODES = {
    "already_running": 10,
    "missing_data": 20,
    "not_run": 25,
    "task_failed": TASK_FAILED,
    "scheduling_error": BAD_CONFIGURATION,
    "unhandled_exception": 40,
}
UNFINISHED = EXIT_CODES["not_run"]
ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]

_MAIN_PID = os.getpid()
_failed = multiprocessing.Value("b", 0, lock=False)
_root_started = multiprocessing.Value("b", 0, lock=False)
_root_done = multiprocessing.Value("b", 0, lock=False)
_interrupted = multiprocessing.Value("b", 0, lock=False)
_root: list[luigi.Task] = []


def set_default_exit_codes() -> None:
    """Give Luigi's `[retcode]` keys our non-zero codes where the configuration has none."""
    parser = luigi.configuration.get_config()
    if not parser.has_section("retcode"):
        parser.add_section("retcode")
    for key, code in EXIT_CODES.items():
        if not parser.has_option("retcode", key):
            parser.set("retcode", key, str(code))


def _is_cli_run() -> bool:
    """True in the main process of the `luigi` command (not in tests building in-process)."""
    from luigi.cmdline_parser import CmdlineParser

    return os.getpid() == _MAIN_PID and CmdlineParser.get_instance() is not None


def _note_root() -> None:
    """Note the root task of the `luigi` command (its first scheduling event), and from then
    on take Ctrl-C as an interruption of the run (`_on_interrupt`)."""
    if not _root and _is_cli_run():
        from luigi.cmdline_parser import CmdlineParser

        _root.append(CmdlineParser.get_instance().get_task_obj())
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _on_interrupt)
            sys.excepthook = _quiet_interrupt(sys.excepthook)


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    """Note that the run was interrupted, then stop it as Python does (KeyboardInterrupt)."""
    _interrupted.value = 1
    signal.default_int_handler(signum, frame)


def _quiet_interrupt(hook: ExceptHook) -> ExceptHook:
    """`hook`, but silent on the KeyboardInterrupt of Ctrl-C: the run's exit says it instead."""

    def quiet(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        if not (issubclass(kind, KeyboardInterrupt) and _interrupted.value):
            hook(kind, error, trace)

    return quiet


@luigi.Task.event_handler(luigi.Event.DEPENDENCY_DISCOVERED)
def _on_discovered(task: luigi.Task, dependency: luigi.Task) -> None:
    _note_root()


@luigi.Task.event_handler(luigi.Event.DEPENDENCY_PRESENT)
def _on_present(task: luigi.Task) -> None:
    _note_root()


@luigi.Task.event_handler(luigi.Event.DEPENDENCY_MISSING)
def _on_missing(task: luigi.Task) -> None:
    """A missing external input, or a `complete()` that raised: Luigi's code stands."""
    _note_root()
    _failed.value = 1


@luigi.Task.event_handler(luigi.Event.START)
def _on_start(task: luigi.Task) -> None:
    if _root and task.task_id == _root[0].task_id:
        _root_started.value = 1


@luigi.Task.event_handler(luigi.Event.SUCCESS)
def _on_success(task: luigi.Task) -> None:
    if _root and task.task_id == _root[0].task_id:
        _root_done.value = 1


@luigi.Task.event_handler(luigi.Event.FAILURE)
@luigi.Task.event_handler(luigi.Event.BROKEN_TASK)
@luigi.Task.event_handler(luigi.Event.PROCESS_FAILURE)
@luigi.Task.event_handler(luigi.Event.TIMEOUT)
def _on_failure(task: luigi.Task, *_: object) -> None:
    _note_root()
    _failed.value = 1


def finished_code() -> int | None:
    """The exit code this run must end with, or None to keep Luigi's (see the module)."""
    if not _root or _failed.value:
        return None
    if _root_done.value:
        return 0
    try:
        complete = bool(_root[0].complete())
    except Exception:  # an unreadable state is an unfinished build
        complete = False
    return 0 if complete else UNFINISHED


def _exit_with_outcome() -> None:
    """At the `luigi` command's exit, end with `finished_code()` when it decides one."""
    if os.getpid() != _MAIN_PID:
        return
    stopped = bool(_failed.value or _interrupted.value)
    if _root and not _root_started.value and (stopped or finished_code()):
        note_unfinished(_root[0].task_family, interrupted=bool(_interrupted.value))
    if _interrupted.value:
        print_messages()
        print(
            f"tipqa: {_root[0].task_family} interrupted (Ctrl-C). What the finished steps "
            "wrote is kept: run the same command again to resume.",
            file=sys.stderr,
        )
        _end(INTERRUPTED)
    code = finished_code()
    if code is None:
        return
    print_messages()
    if code:
        print(
            f"tipqa: {_root[0].task_family} did not finish in this client and nothing failed "
            "here: another client's task failed, or the run stopped early; see the scheduler "
            "and the other clients' logs, then run the same command again to resume.",
            file=sys.stderr,
        )
    _end(code)


def _end(code: int) -> None:
    """Flush the logs and the output, and exit with `code` at once."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


atexit.register(_exit_with_outcome)
