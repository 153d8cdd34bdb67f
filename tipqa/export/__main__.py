"""`python -m tipqa.export --format selfaware|kuq|ua-bench|abstentionbench RUN [--out DIR]`.

RUN is a run folder, its splits folder, or a Hub folder (a build's `hub/`, or one downloaded
with `hf download`).

Writes each split of the run's benchmark in the format's records (`<out>/<split>.json` for
SelfAware, `.jsonl` for the others) and `export.stats.json`; prints the counts as JSON. Bad
input exits with status 2 and one line naming the file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

from tipqa.core import cli
from tipqa.export.formats import FORMATS
from tipqa.export.write import export_splits


def parser() -> argparse.ArgumentParser:
    """The command line's argument parser."""
    parse = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.export"),
        description="Write a build's splits in another abstention benchmark's record format.",
    )
    parse.add_argument(
        "run",
        type=Path,
        help="run folder (outputs/<run>), its splits folder, or a Hub folder",
    )
    parse.add_argument("--format", required=True, choices=sorted(FORMATS), help="record format")
    parse.add_argument("--out", type=Path, help="output folder [RUN/export/<format>]")
    parse.add_argument(
        "--source", help="the records' source name (TIP-TriviaQA, ...) [the run's name]"
    )
    return parse


def run(argv: Sequence[str]) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    out = args.out or args.run / "export" / args.format
    result = export_splits(args.run, FORMATS[args.format], out, args.source)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    cli.main(run)
