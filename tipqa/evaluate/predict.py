"""Predictions from a real model, resumed through the LLM cache.

The predictions have a fingerprint (`record`: the answerer's settings and the split). The one
resume layer is the LLM cache: an answerer made with it (`[build] llm_cache`, the default)
stores each answer as it arrives (`tipqa.llm.cached_chat`), so a rerun after a failure or a
kill gets every answer already received from the cache and asks only for the rest; a failed
answer is not stored, so it is asked again. Without the cache a rerun asks every question
again. When every question has an answer the predictions file is written whole (in gold order,
atomically; a stale stats file removed first), then its stats file recording the fingerprint. A
finished predictions file counts only while its stats record the same fingerprint: other
settings make new predictions (their answers may still come from the cache). Questions still
without an answer end the run with an error naming how many.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from tipqa.core.errors import InputError, TipqaError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import EvaluationLayout
from tipqa.core.records import LabeledQuestion
from tipqa.core.stats import StepStats, recorded_fingerprint
from tipqa.core.steps import Step
from tipqa.evaluate.gold import GoldSet
from tipqa.evaluate.predictions import Prediction, parse_prediction, write_predictions
from tipqa.llm.answerers.base import Answerer

log = logging.getLogger(__name__)

BATCH = 64


def answerer_record(answerer: Answerer, gold: GoldSet) -> StepRecord:
    """The predictions' record when no build plan gives one: what the answerer says of itself."""
    settings = {
        "answerer": {
            "backend": answerer.backend,
            "model": answerer.model,
            "prompt_sha256": answerer.template.sha256,
            **answerer.decoding(),
        }
    }
    return StepRecord(Step.PREDICTIONS, settings, {"gold": gold.source, "split": gold.split})


def read_done(path: Path, gold_ids: set[str], stats: StepStats) -> dict[str, Prediction]:
    """The predictions of a finished file; bad lines are counted."""
    done: dict[str, Prediction] = {}
    if not path.is_file():
        return done
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                prediction = parse_prediction(json.loads(line), str(path), number)
            except (json.JSONDecodeError, InputError) as exc:
                stats.error("resume_bad_line")
                log.warning("%s: line %d skipped on resume (%s)", path, number, exc)
                continue
            if prediction.id in gold_ids:
                done[prediction.id] = prediction
            else:
                stats.error("resume_unknown_id")
    return done


def make_predictions(
    gold: GoldSet,
    answerer: Answerer,
    folder: EvaluationLayout,
    *,
    record: StepRecord | None = None,
    batch: int = BATCH,
) -> StepStats:
    """Answer every gold question with `answerer`; write the predictions under `folder`."""
    record = record or answerer_record(answerer, gold)
    out = folder.predictions
    ids = set(gold.ids)
    stats = StepStats(
        Step.PREDICTIONS,
        info={
            "backend": answerer.backend,
            "model": answerer.model,
            "prompt": answerer.template.name,
            "prompt_sha256": answerer.template.sha256,
            "decoding": answerer.decoding(),
            "gold": gold.source,
            "split": gold.split,
        },
        provenance=record.provenance(),
    )
    done: dict[str, Prediction] = {}
    if recorded_fingerprint(folder.predictions_stats) == record.fingerprint:
        done = read_done(out, ids, stats)
    stats.add("resumed", len(done))
    pending: list[LabeledQuestion] = [q for q in gold.questions if q.id not in done]
    failures: Counter[str] = Counter()
    folder.root.mkdir(parents=True, exist_ok=True)
    starts = range(0, len(pending), batch)
    for start in tqdm(starts, desc="predictions", unit="batch", disable=len(starts) < 2):
        chunk = pending[start : start + batch]
        for question, answer in zip(
            chunk, answerer.answer([q.question for q in chunk]), strict=True
        ):
            if not answer.ok:
                failures[str(answer.error).split(":")[0]] += 1
                continue
            done[question.id] = Prediction(question.id, answer.text, answer.confidence)
            stats.add("answered")
            stats.add("prompt_tokens", answer.usage.prompt_tokens)
            stats.add("completion_tokens", answer.usage.completion_tokens)
            stats.add("without_confidence", answer.confidence is None)
    stats.add("unanswered", sum(failures.values()))
    stats.merge(answerer.stats, prefix="backend.")
    if failures:
        raise TipqaError(
            f"{sum(failures.values())} of {len(gold.questions)} questions got no answer "
            f"({', '.join(f'{k}: {n}' for k, n in sorted(failures.items()))}); rerun to "
            "retry them (the answers received are in the LLM cache, where [build] llm_cache "
            "is on)"
        )
    folder.predictions_stats.unlink(missing_ok=True)
    write_predictions(out, [done[q.id] for q in gold.questions])
    stats.add("predictions", len(gold.questions))
    stats.write(folder.predictions_stats)
    return stats
