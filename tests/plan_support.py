"""The settings and fingerprints shared by the plan tests (tests/tipqa/test_plan*.py)."""

from __future__ import annotations

from pathlib import Path

from tipqa.build.plan import Plan
from tipqa.config import read_config
from tipqa.core.layout import (
    ANNOTATION_EXPORT,
    ANNOTATION_PULL,
    ANNOTATION_PUSH,
    AUDIT,
    COST_PREVIEW,
    EVALUATE,
    HUB_FOLDER,
    KEYWORDS,
    PARTITION,
    PREDICTIONS,
    QUESTIONS,
    REPORT,
    SPLITS,
    TOKEN_INDEX,
    TOKEN_JUDGE,
    TOKEN_SEARCH,
    VECTOR_INDEX,
    VECTOR_JUDGE,
    VECTOR_SEARCH,
    VERBATIM,
)

LOCAL = "http://127.0.0.1:9/v1"
EVALUATION = {PREDICTIONS, EVALUATE}
LABEL_STUDIO = {ANNOTATION_PUSH, ANNOTATION_PULL}
AFTER_JUDGING = {
    PARTITION, AUDIT, SPLITS, HUB_FOLDER, REPORT, ANNOTATION_EXPORT, *LABEL_STUDIO, *EVALUATION,
}  # fmt: skip
FROM_VECTOR_SEARCH = {VECTOR_SEARCH, VECTOR_JUDGE, *AFTER_JUDGING}
FROM_TOKEN_JUDGE = {TOKEN_JUDGE, *FROM_VECTOR_SEARCH, COST_PREVIEW}
FROM_TOKEN_SEARCH = {TOKEN_SEARCH, *FROM_TOKEN_JUDGE}
SHARD_STEPS_ON = {KEYWORDS, *FROM_TOKEN_SEARCH}


def write_inputs(tmp_path: Path) -> dict[str, Path]:
    """A corpus file, a questions file and a judge prompt of our own."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "Kellan Dusk was born in Varnholt."}\n')
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"id": "q1", "text": "Where was Kellan Dusk born?", "answer": "Varnholt", '
        '"aliases": ["Varnholt"]}\n'
    )
    prompt = tmp_path / "judge.txt"
    prompt.write_text("Text: {document}\nQuestion: {question}\nAnswer: {answer}\nyes or no?")
    return {"corpus": corpus, "questions": questions, "prompt": prompt}


def base(inputs: dict[str, Path]) -> dict[str, dict[str, str]]:
    """A configuration that reads real files (no demo world, which depends on k1)."""
    return {
        "corpus": {"source": "files", "paths": str(inputs["corpus"])},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(inputs["questions"])},
        "judge": {"backend": "openai", "model": "judge-a", "base_url": LOCAL,
                  "prompt": str(inputs["prompt"])},
        "vector_index": {"backend": "faiss"},
    }  # fmt: skip


def fingerprints(sections: dict[str, dict[str, str]]) -> dict[str, str]:
    """Every step's fingerprint for these settings (shard 0 for the shard steps)."""
    plan = Plan(read_config(sections))
    steps = {
        QUESTIONS: plan.questions("dev"),
        TOKEN_INDEX: plan.token_index,
        VECTOR_INDEX: plan.vector_index,
        PARTITION: plan.partition("dev"),
        SPLITS: plan.splits,
        HUB_FOLDER: plan.hub_folder,
        REPORT: plan.report,
        COST_PREVIEW: plan.cost_preview("dev"),
        ANNOTATION_EXPORT: plan.annotation_export,
        ANNOTATION_PUSH: plan.annotation_push,
        ANNOTATION_PULL: plan.annotation_pull,
        PREDICTIONS: plan.predictions("openai", "test"),
        EVALUATE: plan.evaluate("openai", "test"),
        AUDIT: plan.audit("dev"),
        VERBATIM: plan.verbatim("dev"),
    }
    for step in (KEYWORDS, TOKEN_SEARCH, TOKEN_JUDGE, VECTOR_SEARCH, VECTOR_JUDGE):
        steps[step] = plan.shard("dev", step, 0)
    return {name: record.fingerprint for name, record in steps.items()}


def changed(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> set[str]:
    """The steps whose fingerprints differ between two configurations."""
    old, new = fingerprints(before), fingerprints(after)
    return {step for step in old if old[step] != new[step]}


def merged(sections: dict, section: str, **values: str) -> dict:
    """`sections` with `values` set in `section`."""
    return {**sections, section: {**sections.get(section, {}), **values}}
