"""`python -m tipqa.evaluate recall ...` and `python -m tipqa.evaluate uabench ...`.

`recall --run RUN --qrels QRELS --k 10 100` scores a retrieval system's TREC run file against
a build's qrels; `uabench GOLD PREDICTIONS` scores UA-Bench's attribution (ACC, MU-F1, DU-F1,
the misattribution rate) on a split or on UA-Bench records.
Each prints one JSON object and, with `--out`, writes it there.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tipqa.core import cli
from tipqa.core.jsonl import write_json
from tipqa.core.stats import StepStats
from tipqa.dataset.qrels import read_qrels
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.retrieval import read_run, recall_at_k
from tipqa.evaluate.uabench import read_targets, score_uabench, targets_of
from tipqa.evaluate.uabench_judge import AnswerJudge, LLMAnswerJudge
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import cached

COMMANDS: tuple[str, ...] = ("recall", "uabench")


def recall_parser() -> argparse.ArgumentParser:
    """The argument parser of `recall`."""
    parser = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.evaluate recall"),
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
        prog=cli.prog("python -m tipqa.evaluate uabench"),
        description="UA-Bench confusion matrix (per cent) of three-way predictions on a split.",
    )
    parser.add_argument(
        "gold",
        help="split folder, splits or Hub-ready folder, Hub id, or a UA-Bench records JSONL",
    )
    parser.add_argument(
        "predictions",
        type=Path,
        help="JSONL {id, response} (the raw output, read by its last \\boxed{}) or "
        "{id, prediction, answer|correct}, prediction ANSWERABLE, DATA_UNCERTAIN or "
        "MODEL_UNCERTAIN",
    )
    parser.add_argument("--split", default="test", help="split to score on [test]")
    parser.add_argument(
        "--allow-missing", action="store_true", help="leave questions without a prediction out"
    )
    parser.add_argument(
        "--judge-model",
        default="",
        help="judge answers with this model on an OpenAI-compatible server (Yes/No, "
        "temperature 0; key from OPENAI_API_KEY) instead of tipqa's alias match",
    )
    parser.add_argument(
        "--judge-base-url", default="", help="the judge's server (empty: OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--llm-cache",
        type=Path,
        help="keep the judge's answers in this LLM cache folder (a run's <run>/llm-cache, say) "
        "and ask only for those it lacks",
    )
    parser.add_argument("--out", type=Path, help="write the JSON to this file")
    return parser


def uabench_judge(args: argparse.Namespace) -> AnswerJudge | None:
    """The LLM judge `--judge-model` asks for (behind `--llm-cache`), or None (alias match)."""
    if not args.judge_model:
        return None
    from tipqa.llm.openai_chat import OpenAIChatModel
    from tipqa.llm.openai_client import OpenAIServerSettings

    server = OpenAIServerSettings(model=args.judge_model, base_url=args.judge_base_url)
    chat = OpenAIChatModel(server.client(StepStats("uabench-judge")))
    return LLMAnswerJudge(cached(chat, LLMCache(args.llm_cache) if args.llm_cache else None))


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
        if Path(args.gold).suffix == ".jsonl":
            targets, split = read_targets(Path(args.gold)), Path(args.gold).stem
        else:
            gold = load_gold(args.gold, args.split)
            targets, split = targets_of(gold), gold.split
        judge = uabench_judge(args)
        try:
            result = score_uabench(
                targets,
                args.predictions,
                judge=judge,
                allow_missing=args.allow_missing,
                split=split,
            )
            if isinstance(judge, LLMAnswerJudge):
                result["judge_counts"] = dict(sorted(judge.chat.stats.counts.items()))
        finally:
            if isinstance(judge, LLMAnswerJudge):
                judge.chat.close()
    if args.out:
        write_json(args.out, result)
    return result
