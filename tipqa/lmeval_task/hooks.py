"""What a task's `utils.py` calls: the documents, the prompt, and tipqa's scorer as lm-eval metrics.

`load_docs` reads a configuration's split with tipqa's gold readers (so the same checks as
`python -m tipqa.evaluate`) and gives each document the rendered answer prompt and the refusal
settings. `process_results` hands every metric the same item (the gold fields and the model's
response); each metric's aggregation reads all the items' responses with tipqa's
`RefusalDetector`, scores them with `score_question` and returns its entry of `summary`: the
numbers `python -m tipqa.evaluate` reports on the same answers. The scoring is done once per
set of items, whichever metric asks first.

Options come from lm-eval's `--metadata` (a JSON object); ours start with `tipqa_`:
`tipqa_threshold`, `tipqa_phrases`, `tipqa_embedding`, `tipqa_boxed` (the refusal settings of
`python -m tipqa.evaluate`'s `--threshold`, `--phrases`, `--no-embedding`, `--no-boxed`) and
`tipqa_prompt` (another answer prompt: a shipped name or a file). Other keys are lm-eval's or
the model's, and are left alone; an unknown `tipqa_` key is an error.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import SCHEMA_VERSION, LabeledQuestion, RecordError
from tipqa.dataset.splits import SPLIT_LABELS
from tipqa.evaluate.gold import HUB_CONFIG, SCHEMA_KEY, load_gold
from tipqa.evaluate.metrics import score_question, summary
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings, load_phrases
from tipqa.llm.answerers.base import DEFAULT_PROMPT, answer_template
from tipqa.lmeval_task.task_files import METRICS

log = logging.getLogger(__name__)

PREFIX = "tipqa_"
REFUSAL_OPTIONS = ("threshold", "phrases", "embedding", "boxed")
OPTIONS = (*(PREFIX + name for name in REFUSAL_OPTIONS), PREFIX + "prompt")
GOLD_FIELDS = ("id", "question", "answer", "aliases", "label", "stage", "total_matches")
EVIDENCE_COLUMNS = ("evidence_stage", "evidence_doc_id", "evidence_unit_id", "evidence_text")


def options(metadata: Mapping[str, Any]) -> tuple[RefusalSettings, str]:
    """The refusal settings and the answer prompt that `metadata`'s `tipqa_` keys ask for."""
    unknown = [key for key in metadata if key.startswith(PREFIX) and key not in OPTIONS]
    if unknown:
        raise ConfigError(
            f"unknown lm-eval metadata key(s) {', '.join(map(repr, unknown))}; "
            f"tipqa's are {', '.join(OPTIONS)}"
        )
    given = [name for name in REFUSAL_OPTIONS if PREFIX + name in metadata]
    chosen = {name: metadata[PREFIX + name] for name in given}
    try:
        settings = RefusalSettings(**chosen)
    except TypeError as exc:
        raise ConfigError(f"lm-eval metadata: {exc}") from exc
    load_phrases(settings.phrases)  # a missing phrase file stops before any generation
    return settings, str(metadata.get(PREFIX + "prompt") or DEFAULT_PROMPT)


def checkpoint_questions(folder: Path, config: str, split: str) -> list[LabeledQuestion]:
    """The split of a `questions_step<N>` configuration; undetermined rows are left out, counted."""
    import pyarrow.parquet as pq

    files = sorted((folder / config).glob(f"{split}-*.parquet"))
    if not files:
        raise InputError(f"no split {split!r} of configuration {config!r}", path=str(folder))
    questions: list[LabeledQuestion] = []
    undetermined = 0
    for path in files:
        table = pq.read_table(path)
        version = (table.schema.metadata or {}).get(SCHEMA_KEY.encode(), b"").decode()
        if version != str(SCHEMA_VERSION):
            raise InputError(
                f"written with schema version {version or 'unknown'}; this tipqa reads "
                f"{SCHEMA_VERSION} (use the tipqa version that built it)",
                path=str(path),
            )
        for number, row in enumerate(table.to_pylist(), start=1):
            data = {k: v for k, v in row.items() if k not in EVIDENCE_COLUMNS}
            try:
                question = LabeledQuestion.from_dict({**data, "evidence": None})
            except RecordError as exc:
                raise InputError(f"row {number}: {exc}", path=str(path)) from exc
            if question.label in SPLIT_LABELS:
                questions.append(question)
            elif question.label == "undetermined":
                undetermined += 1
            else:
                raise InputError(f"row {number}: label {question.label!r}", path=str(path))
    if undetermined:
        log.warning(
            "%s %s: %d undetermined question(s) left out (their evidence was never found in "
            "the training stream); %d scored",
            config,
            split,
            undetermined,
            len(questions),
        )
    return questions


def gold_questions(folder: Path, config: str, split: str) -> list[LabeledQuestion]:
    """The questions of `config`'s `split` in the splits or Hub-ready `folder`."""
    if config == HUB_CONFIG:
        return load_gold(folder, split).questions
    return checkpoint_questions(folder, config, split)


def load_docs(
    folder: str | os.PathLike[str],
    *,
    config: str = HUB_CONFIG,
    split: str = "test",
    **metadata: Any,
) -> Any:
    """The task's documents (a `datasets.DatasetDict` of `split`), for `custom_dataset`."""
    import datasets

    refusal, prompt = options(metadata)
    template = answer_template(prompt)
    scoring = orjson.dumps(refusal.to_dict()).decode()
    rows = []
    for position, question in enumerate(gold_questions(Path(folder), config, split)):
        row = {name: getattr(question, name) for name in GOLD_FIELDS}
        row.update(
            position=position,
            prompt=template.render(question=question.question),
            scoring=scoring,
        )
        rows.append(row)
    return datasets.DatasetDict({split: datasets.Dataset.from_list(rows)})


def doc_to_text(doc: Mapping[str, Any]) -> str:
    """The answer prompt of a document (rendered when the documents were loaded)."""
    return str(doc["prompt"])


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """Every metric gets the same item: the gold fields, the response, the refusal settings."""
    item = {name: doc[name] for name in (*GOLD_FIELDS, "position", "scoring")}
    item["response"] = results[0] if results else ""
    return {name: item for name, _ in METRICS}


@functools.lru_cache(maxsize=4)
def detector(scoring: str) -> RefusalDetector:
    """The refusal detector of these settings (JSON), with the MiniLM embedder when asked for."""
    settings = RefusalSettings(**orjson.loads(scoring))
    embedder = None
    if settings.embedding:
        from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder.of()
    return RefusalDetector(settings, embedder)


_LAST: dict[bytes, dict[str, Any]] = {}


def scores(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """tipqa's `summary` of the items' responses (kept for the next metric of the same items)."""
    ordered = sorted(items, key=lambda item: item["position"])
    key = orjson.dumps([[i["position"], i["id"], i["response"], i["scoring"]] for i in ordered])
    if key in _LAST:
        return _LAST[key]
    settings = {item["scoring"] for item in ordered}
    if len(settings) > 1:
        raise ConfigError("the items of one metric were read with different refusal settings")
    scored = []
    if ordered:
        questions = [
            LabeledQuestion(
                **{name: item[name] for name in GOLD_FIELDS}, reason="", keywords=[], evidence=None
            )
            for item in ordered
        ]
        responses = [str(item["response"]) for item in ordered]
        readings = detector(settings.pop()).read(responses, [None] * len(responses))
        scored = [score_question(q, r) for q, r in zip(questions, readings, strict=True)]
    result = summary(scored)
    _LAST.clear()
    _LAST[key] = result
    return result


def em_f1(items: Sequence[Mapping[str, Any]]) -> float:
    """EM-F1: the harmonic mean of precision and recall (section 6.3 of the paper)."""
    return float(scores(items)["em_f1"])


def pm_f1(items: Sequence[Mapping[str, Any]]) -> float:
    """PM-F1: the mean per-question score of partial matches and refusals."""
    return float(scores(items)["pm_f1"])


def precision(items: Sequence[Mapping[str, Any]]) -> float:
    """TP / (TP + FP_u + FP_a)."""
    return float(scores(items)["precision"])


def recall(items: Sequence[Mapping[str, Any]]) -> float:
    """TP / (TP + FP_a + FN)."""
    return float(scores(items)["recall"])


def accuracy_answerable(items: Sequence[Mapping[str, Any]]) -> float:
    """Exact matches among the answerable questions."""
    return float(scores(items)["accuracy_answerable"])


def refusal_rate_answerable(items: Sequence[Mapping[str, Any]]) -> float:
    """Refusals among the answerable questions."""
    return float(scores(items)["refusal_rate_answerable"])


def refusal_rate_unanswerable(items: Sequence[Mapping[str, Any]]) -> float:
    """Refusals among the unanswerable questions."""
    return float(scores(items)["refusal_rate_unanswerable"])
