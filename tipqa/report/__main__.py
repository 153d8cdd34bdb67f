"""`python -m tipqa.report explore RUN`: write the explorer page of an existing build.

With `--config` (the build's config files) the token-stage window texts are recomputed from
the build's token index; without, only the evidence windows and the vector chunks have text.
`--excerpts` keeps the windows that are not evidence as excerpts around their matches, as the
Hub's copy does; `--compare OTHER_RUN` shows which questions flipped against another build.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tipqa.core import cli
from tipqa.core.errors import ConfigError
from tipqa.core.layout import RunLayout
from tipqa.report.explorer.collect import DEFAULT_TEXTS, TextSource
from tipqa.report.explorer.store import EXCERPTS, WHOLE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=cli.prog("python -m tipqa.report"), description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    explore = commands.add_parser(
        "explore",
        help="write RUN/report/explorer/ (a static page)",
        description="Write the explorer of a finished build, RUN/report/explorer/index.html: "
        "a static page of its questions, labels and evidence (open it in a browser). "
        "Without --config only the evidence windows and the vector chunks have text.",
    )
    explore.add_argument("run", type=Path, help="the run folder, e.g. outputs/demo")
    explore.add_argument(
        "--config",
        action="append",
        default=[],
        help="the build's config file (repeatable, later files win): window texts from its index",
    )
    explore.add_argument(
        "--texts",
        type=int,
        default=DEFAULT_TEXTS,
        help=f"token-stage window texts per question (default {DEFAULT_TEXTS})",
    )
    explore.add_argument(
        "--excerpts",
        action="store_true",
        help="keep windows that are not evidence as excerpts around their matches (the Hub's copy)",
    )
    explore.add_argument(
        "--compare", type=Path, metavar="OTHER_RUN", help="show the flips against another build"
    )
    explore.add_argument("--out", type=Path, help="the folder (default RUN/report/explorer)")
    return parser


def run(argv: Sequence[str]) -> int:
    """Parse the command line and write the explorer."""
    from tipqa.audit.compare import compare_runs
    from tipqa.report.explorer.write import write_explorer

    args = _parser().parse_args(argv)
    if args.texts < 0:
        raise ConfigError(f"--texts must be 0 or more, got {args.texts}")
    layout = RunLayout(args.run)
    source = TextSource(texts=args.texts)
    if args.config:
        from tipqa.builder.assemble import run_config, token_index
        from tipqa.builder.plan import Plan

        plan = Plan(run_config(args.run, args.config))
        source.fetch = token_index(plan.token_index, plan.layout).get
    compare = compare_runs(args.run, args.compare) if args.compare else None
    form = EXCERPTS if args.excerpts else WHOLE
    counts = write_explorer(layout, source, args.out, layout.report, form, compare)
    out = args.out or layout.report / "explorer"
    size = counts["data_bytes"]
    print(f"{out / 'index.html'}: {counts['questions']:,} questions, {size:,} bytes of data")
    return 0


if __name__ == "__main__":
    cli.main(run)
