"""`python -m tipqa.evaluate GOLD PREDICTIONS` and `python -m tipqa.evaluate compare GOLD A B ...`.

`recall` (a retriever's TREC run against the qrels) and `uabench` (three-way UA-Bench
predictions) are in `tipqa.evaluate.commands`.

Prints one JSON object (the scores, or the comparison) and, with `--out`, writes it there with
the Markdown report and figures. Bad input exits with status 2 and the error naming file and
line.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

from tipqa.core import cli
from tipqa.core.jsonl import atomic_open, write_json
from tipqa.evaluate.commands import COMMANDS, run_command
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.refusal import DEFAULT_THRESHOLD, RefusalDetector, RefusalSettings
from tipqa.evaluate.report import render_comparison
from tipqa.evaluate.score import (
    DEFAULT_TRIALS,
    ScoringSettings,
    compare_systems,
    score_file,
    write_evaluation,
)

log = logging.getLogger("tipqa.evaluate")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("gold", help="split folder, splits or Hub-ready folder, or Hub id")
    parser.add_argument("--split", default="test", help="split to score on [test]")
    parser.add_argument("--out", type=Path, help="folder for the JSON, report and figures")
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="score questions without a prediction as refusals",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help=f"refusal similarity threshold t [{DEFAULT_THRESHOLD}]",
    )
    parser.add_argument("--phrases", default="", help="your own refusal phrase file")
    parser.add_argument(
        "--no-embedding", action="store_true", help="recognise refusals by phrases only"
    )
    parser.add_argument("--no-boxed", action="store_true", help="do not read \\boxed{} answers")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples [1000]")
    parser.add_argument("--bins", type=int, default=10, help="calibration bins [10]")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap and test seed [0]")


def parser_for(command: str) -> argparse.ArgumentParser:
    """The argument parser of `score` (the default command) or `compare`."""
    if command == "compare":
        parser = argparse.ArgumentParser(
            prog=cli.prog("python -m tipqa.evaluate compare"),
            description="Compare systems: scores and paired approximate randomization tests.",
        )
        _common(parser)
        parser.add_argument("predictions", nargs="+", help="two or more predictions JSONL files")
        parser.add_argument(
            "--trials", type=int, default=DEFAULT_TRIALS, help=f"test trials [{DEFAULT_TRIALS}]"
        )
        return parser
    parser = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.evaluate"),
        description="Score predictions on a TIP-style split (EM-F1, PM-F1, calibration).",
        epilog="python -m tipqa.evaluate compare GOLD A.jsonl B.jsonl ... compares systems; "
        "recall --run RUN --qrels QRELS scores a retriever; uabench GOLD PREDICTIONS scores "
        "three-way abstention predictions.",
    )
    _common(parser)
    parser.add_argument("predictions", help="predictions JSONL: {id, prediction[, confidence]}")
    return parser


def make_detector(args: argparse.Namespace) -> RefusalDetector:
    """The refusal detector the options ask for (the MiniLM embedder unless --no-embedding)."""
    settings = RefusalSettings(
        threshold=args.threshold,
        phrases=args.phrases,
        embedding=not args.no_embedding,
        boxed=not args.no_boxed,
    )
    embedder = None
    if settings.embedding:
        from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder.of()
    return RefusalDetector(settings, embedder)


def run(argv: Sequence[str]) -> int:
    """Run the command line; return the exit status."""
    if argv[:1] and argv[0] in COMMANDS:
        result = run_command(argv[0], argv[1:])
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    command = "compare" if argv[:1] == ["compare"] else "score"
    args = parser_for(command).parse_args(argv[1:] if command == "compare" else argv)
    settings = ScoringSettings(bins=args.bins, bootstrap=args.bootstrap, seed=args.seed)
    gold = load_gold(args.gold, args.split)
    detector = make_detector(args)
    if command == "compare":
        result = compare_systems(
            gold,
            args.predictions,
            detector,
            settings,
            trials=args.trials,
            allow_missing=args.allow_missing,
        )
        if args.out:
            write_json(args.out / "compare.json", result)
            with atomic_open(args.out / "compare.md") as handle:
                handle.write(render_comparison(result).encode())
    else:
        result, scored = score_file(
            gold, args.predictions, detector, settings, allow_missing=args.allow_missing
        )
        if args.out:
            write_evaluation(result, scored, args.out)
        missing = result["predictions"]["missing_scored_as_refusals"]
        if missing:
            log.warning("questions without a prediction, scored as refusals: %d", missing)
        for warning in result["warnings"]:
            log.warning("%s", warning)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    cli.main(run)
