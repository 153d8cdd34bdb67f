"""`tipqa COMMAND ...`: one command for what the `python -m tipqa.<module>` commands do.

`tipqa --help` lists the commands without importing any of them (each is imported when it
runs), and `tipqa COMMAND --help` is that command's own help. `tipqa build` runs a build on one
machine, `luigi --module pipelines CreateDataset --local-scheduler`, passing other options on
to Luigi; `luigi --module pipelines ...` stays the way to run any task, on a central scheduler
too. Bad input exits with status 2 and one line; a build exits with Luigi's codes.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, cast

from tipqa.core.version import __version__

BUILD = "build"
LOCAL = "--local-scheduler"
CENTRAL = ("--scheduler-host", "--scheduler-url", "--scheduler-port")
NO_LOCK, LOCK_DIR = "--no-lock", "--lock-pid-dir"


@dataclass(frozen=True)
class Command:
    """A subcommand: the module whose `run(argv)` it is, and its line of `tipqa --help`."""

    module: str
    summary: str
    missing: str = ""


COMMANDS = {
    "audit": Command("tipqa.builder.audit", "audit a build's unanswerable and discarded labels"),
    "flips": Command("tipqa.audit.compare", "label flips between two builds of the same questions"),
    "evaluate": Command("tipqa.evaluate.__main__", "score a model's predictions on a split"),
    "export": Command("tipqa.export.__main__", "write the splits in another benchmark's format"),
    "lmeval-task": Command(
        "tipqa.lmeval_task.__main__", "lm-evaluation-harness tasks: samples to predictions"
    ),
    "config-reference": Command(
        "tipqa.config.reference", "print or write the configuration reference"
    ),
    "rerun-table": Command("tipqa.builder.reruns", "print or write which change reruns which step"),
    "explore": Command(
        "tipqa.report.__main__",
        "explore a build's questions and evidence (tipqa.report explore)",
        missing="this tipqa has no tipqa.report explorer (python -m tipqa.report explore RUN)",
    ),
}
PREFIX = {"explore": ["explore"]}
"""Arguments put before the user's for a command whose module holds several (`report`)."""


def parser() -> argparse.ArgumentParser:
    """The top-level parser: `--help`, `--version` and the list of commands."""
    lines = [f"  {name:<17} {command.summary}" for name, command in COMMANDS.items()]
    lines.insert(0, f"  {BUILD:<17} build the benchmark on one machine (Luigi, local scheduler)")
    top = argparse.ArgumentParser(
        prog="tipqa",
        description="Knowledge-boundary QA benchmarks. `tipqa COMMAND --help` for a command.",
        epilog="commands:\n" + "\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"tipqa {__version__}")
    top.add_argument("command", choices=[BUILD, *COMMANDS], metavar="COMMAND")
    top.add_argument("args", nargs=argparse.REMAINDER, help="the command's arguments")
    return top


def build_parser() -> argparse.ArgumentParser:
    """`tipqa build`'s own options (the rest go to Luigi)."""
    build = argparse.ArgumentParser(
        prog="tipqa build",
        description="Run `luigi --module pipelines TASK --local-scheduler` on this machine.",
        epilog="Other options go to Luigi and the task, e.g. --workers 4, --pool dev, "
        "--accept-undetermined. With --scheduler-host the central scheduler (luigid) is used. "
        "Luigi's process lock is kept per folder and config file (--lock-pid-dir), so builds "
        "in two folders run at once and a second build of one folder exits 10.",
    )
    build.add_argument("--task", default="CreateDataset", help="the task to run [CreateDataset]")
    return build


def lock_folder() -> str:
    """Where `tipqa build` keeps Luigi's process lock: one folder per working folder and
    configuration (`LUIGI_CONFIG_PATH`), so that builds in two folders run at once and a
    second build of one folder is refused (Luigi keys its lock on the command line alone)."""
    import hashlib
    import os
    import tempfile

    key = f"{os.getcwd()}\0{os.environ.get('LUIGI_CONFIG_PATH', '')}".encode()
    digest = hashlib.sha256(key).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"luigi-tipqa-{digest}")


def luigi_argv(argv: Sequence[str]) -> list[str]:
    """The Luigi command line of `tipqa build ARGV` (exits on --help)."""
    args, rest = build_parser().parse_known_args(argv)
    named = {arg.split("=")[0] for arg in rest}
    central = bool(named & set(CENTRAL))
    local = [] if central or LOCAL in rest else [LOCAL]
    lock = [] if named & {NO_LOCK, LOCK_DIR} else [LOCK_DIR, lock_folder()]
    return ["--module", "pipelines", args.task, *local, *lock, *rest]


def tasks() -> str:
    """The Luigi tasks that `tipqa build --task` takes: those pipelines exports."""
    import pipelines

    return ", ".join(pipelines.__all__)


def build(argv: Sequence[str]) -> NoReturn:
    """Run the build through Luigi and exit with Luigi's code.

    The config files are checked before Luigi reads them (importing it does): one that it
    cannot parse exits with the code of a bad configuration and one line.
    """
    from tipqa.config.files import check_config_files, luigi_files
    from tipqa.core import cli
    from tipqa.core.errors import ConfigError

    command = luigi_argv(argv)
    try:
        check_config_files(luigi_files())
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(cli.BAD_CONFIGURATION)
    import luigi.retcodes
    from luigi.task_register import TaskClassNotFoundException

    try:
        luigi.retcodes.run_with_retcodes(command)
    except TaskClassNotFoundException as exc:
        missing = str(exc).split(".")[0]
        sys.stderr.write(f"error: {missing}: --task names a task of pipelines ({tasks()})\n")
        sys.exit(2)
    sys.exit(0)


def command_run(name: str) -> Callable[[Sequence[str]], int]:
    """The `run(argv)` of command `name`, imported now; a SystemExit naming what is missing."""
    command = COMMANDS[name]
    try:
        module = importlib.import_module(command.module)
    except ImportError as exc:
        if not command.missing or not command.module.startswith(str(exc.name or "~")):
            raise
        raise SystemExit(f"tipqa {name}: {command.missing}") from exc
    run = getattr(module, "run", None)
    if not callable(run):
        raise SystemExit(f"tipqa {name}: {command.module} has no run(argv)")
    return cast(Callable[[Sequence[str]], int], run)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The `tipqa` console script."""
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == BUILD:
        build(args.args)
    from tipqa.core import cli

    run = command_run(args.command)
    cli.called_as("tipqa" if args.command in PREFIX else f"tipqa {args.command}")
    cli.main(lambda rest: run([*PREFIX.get(args.command, []), *rest]), args.args)


if __name__ == "__main__":
    main()
