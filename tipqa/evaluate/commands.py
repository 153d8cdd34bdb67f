"""`python -m tipqa.evaluate recall ...` and `python -m tipqa.evaluate uabench ...`.

`recall --run RUN --qrels QRELS --k 10 100` scores a retrieval system's TREC run file against
a build's qrels; `uabench GOLD PREDICTIONS` scores three-way UA-Bench predictions on a split.
Each prints one JSON object and, with `--out`, writes it there.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.retrieval import read_run, recall_at_k
from tipqa.evaluate.uabench import score_uabench
from tipqa.jsonl import write_json
from tipqa.qrels import read_qrels

COMMANDS: tuple[str, ...] = ("recall", "uabench")


def recall_parser() -> argparse.ArgumentParser:
    """The argument parser of `recall`."""
    parser = argparse.ArgumentParser(
        prog="python -m tipqa.evaluate recall",
        description="Macro recall@k of a TREC run file against a build's qrels.",
    )
    parser.add_argument("--run", type=Path, required=True, help="TREC run file of a retriever")
    parser.add_argument(
        "--qrels", type=Path, required=True, help="qrels.txt of a split or partition"
    )
    parser.add_argument("--k", type=int, nargs="+", default=[10, 100], help="cut-offs [10 100]")
    parser.add_argument("--out", type=Path, help="write the JSON to this file")
    return parser


def uabench_parser() -> argparse.ArgumentParser:
    """The argument parser of `uabench`."""
    parser = argparse.ArgumentParser(
        prog="python -m tipqa.evaluate uabench",
        description="UA-Bench confusion matrix (per cent) of three-way predictions on a split.",
    )
    parser.add_argument("gold", help="split folder, splits or Hub-ready folder, or Hub id")
    parser.add_argument(
        "predictions",
        type=Path,
        help="JSONL {id, prediction}: ANSWERABLE, DATA_UNCERTAIN or MODEL_UNCERTAIN",
    )
    parser.add_argument("--split", default="test", help="split to score on [test]")
    parser.add_argument(
        "--allow-missing", action="store_true", help="leave questions without a prediction out"
    )
    parser.add_argument("--out", type=Path, help="write the JSON to this file")
    return parser


def run_command(command: str, argv: Sequence[str]) -> dict[str, Any]:
    """Run `recall` or `uabench` with its arguments; return the result (written with --out)."""
    if command == "recall":
        args = recall_parser().parse_args(argv)
        counts: Counter[str] = Counter()
        run = read_run(args.run, counts)
        result = recall_at_k(read_qrels(args.qrels), run, args.k)
        result["run_duplicate_documents"] = counts["duplicate_documents"]
        result.update(run=str(args.run), qrels=str(args.qrels))
    else:
        args = uabench_parser().parse_args(argv)
        gold = load_gold(args.gold, args.split)
        result = score_uabench(gold, args.predictions, allow_missing=args.allow_missing)
    if args.out:
        write_json(args.out, result)
    return result
