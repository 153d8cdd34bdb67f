"""The settings and fingerprints shared by the plan tests (tests/tipqa/builder/test_plan*.py)."""

from __future__ import annotations

from pathlib import Path

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.steps import SHARD_STEPS, Step

LOCAL = "http://127.0.0.1:9/v1"
EVALUATION = {Step.PREDICTIONS, Step.EVALUATE}
LABEL_STUDIO = {Step.ANNOTATION_PUSH, Step.ANNOTATION_PULL}
AFTER_JUDGING = {
    Step.PARTITION, Step.AUDIT, Step.SPLITS, Step.HUB_FOLDER, Step.REPORT,
    Step.ANNOTATION_EXPORT, *LABEL_STUDIO, *EVALUATION,
}  # fmt: skip
FROM_VECTOR_SEARCH = {Step.VECTOR_SEARCH, Step.VECTOR_JUDGE, *AFTER_JUDGING}
FROM_TOKEN_JUDGE = {Step.TOKEN_JUDGE, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}
FROM_TOKEN_SEARCH = {Step.TOKEN_SEARCH, *FROM_TOKEN_JUDGE}
SHARD_STEPS_ON = {Step.KEYWORDS, *FROM_TOKEN_SEARCH}


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
        Step.QUESTIONS: plan.questions("dev"),
        Step.TOKEN_INDEX: plan.token_index,
        Step.VECTOR_INDEX: plan.vector_index,
        Step.PARTITION: plan.partition("dev"),
        Step.SPLITS: plan.splits,
        Step.HUB_FOLDER: plan.hub_folder,
        Step.REPORT: plan.report,
        Step.COST_PREVIEW: plan.cost_preview("dev"),
        Step.ANNOTATION_EXPORT: plan.annotation_export,
        Step.ANNOTATION_PUSH: plan.annotation_push,
        Step.ANNOTATION_PULL: plan.annotation_pull,
        Step.PREDICTIONS: plan.predictions("openai", "test"),
        Step.EVALUATE: plan.evaluate("openai", "test"),
        Step.AUDIT: plan.audit("dev"),
        Step.VERBATIM: plan.verbatim("dev"),
    }
    for step in SHARD_STEPS:
        steps[step] = plan.shard("dev", step, 0)
    return {name: record.fingerprint for name, record in steps.items()}


def changed(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> set[str]:
    """The steps whose fingerprints differ between two configurations."""
    old, new = fingerprints(before), fingerprints(after)
    return {step for step in old if old[step] != new[step]}


def merged(sections: dict, section: str, **values: str) -> dict:
    """`sections` with `values` set in `section`."""
    return {**sections, section: {**sections.get(section, {}), **values}}
