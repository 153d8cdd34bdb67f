"""`python -m tipqa.lmeval_task predictions SAMPLES OUT` and `... write FOLDER`.

`predictions` turns lm-eval's logged samples of a tipqa task into a predictions file of
`python -m tipqa.evaluate`; `write` writes the task folder into a splits or Hub-ready folder
built before tipqa wrote one. Bad input exits with status 2 and one line naming file and line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tipqa.core import cli
from tipqa.core.errors import TipqaError
from tipqa.core.layout import SplitsLayout
from tipqa.lmeval_task.samples import samples_to_predictions
from tipqa.lmeval_task.task_files import CHECKPOINT, FOLDER, SPLIT, write_task_folder


def parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    top = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.lmeval_task"),
        description="lm-evaluation-harness tasks of tipqa.",
    )
    commands = top.add_subparsers(dest="command", required=True)
    predictions = commands.add_parser("predictions", help="lm-eval samples -> predictions")
    predictions.add_argument("samples", type=Path, help="samples_<task>_<time>.jsonl of lm-eval")
    predictions.add_argument("out", type=Path, help="the predictions JSONL to write")
    write = commands.add_parser("write", help=f"write {FOLDER}/ into a built folder")
    write.add_argument("folder", type=Path, help="a splits folder or a Hub-ready folder")
    return top


def run(argv: Sequence[str]) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    if args.command == "predictions":
        count = samples_to_predictions(args.samples, args.out)
        sys.stdout.write(f"{count} predictions written to {args.out}\n")
        return 0
    folder: Path = args.folder
    if not (SplitsLayout(folder).questions(SPLIT).is_file() or (folder / "questions").is_dir()):
        raise TipqaError(f"{folder}: neither a splits folder nor a Hub-ready folder")
    steps = sorted(
        int(found.group(1))
        for path in folder.iterdir()
        if (found := CHECKPOINT.fullmatch(path.name)) and any(path.glob(f"{SPLIT}-*.parquet"))
    )
    out = write_task_folder(folder, steps)
    sys.stdout.write(f"tasks written to {out} ({len(steps)} checkpoint tasks)\n")
    return 0


if __name__ == "__main__":
    cli.main(run)
