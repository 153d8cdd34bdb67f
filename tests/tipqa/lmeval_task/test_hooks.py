"""The task's hooks: documents read by tipqa, and metrics equal to `python -m tipqa.evaluate`'s."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest
from support.evaluate_support import write_lines
from support.partition_fixtures import build_splits

from tipqa.core.errors import ConfigError
from tipqa.core.records import LabeledQuestion
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings
from tipqa.evaluate.score import ScoringSettings, score_file
from tipqa.lmeval_task import hooks
from tipqa.lmeval_task.task_files import FOLDER, METRICS, write_task_folder

NO_EMBEDDING = {"tipqa_embedding": False}


def written_utils(folder: Path) -> ModuleType:
    """The `utils.py` a build wrote, imported from its file as lm-eval does."""
    path = folder / FOLDER / "utils.py"
    spec = importlib.util.spec_from_file_location(f"utils_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def response(index: int, question: LabeledQuestion) -> str:
    """Right, partly right, wrong answers and refusals of several kinds, on both labels."""
    if question.label == "answerable":
        return [question.answer, "I don't know", "no idea at all", f"{question.answer} x", ""][
            index % 5
        ]
    return ["", "Answer 99", "I don't know", "\\boxed{<DATA_UNCERTAIN>}"][index % 4]


@pytest.fixture
def splits(tmp_path: Path) -> Path:
    """A built splits folder (the test split from a dev pool), with its task folder."""
    return build_splits(tmp_path / "run", train=False, evaluation=write_task_folder).splits


def test_the_build_writes_the_task_folder_beside_the_splits(splits: Path) -> None:
    folder = splits / FOLDER
    assert sorted(p.name for p in folder.iterdir()) == ["tip_triviaqa.yaml", "utils.py"]
    text = (folder / "tip_triviaqa.yaml").read_text()
    assert "custom_dataset: !function" in text and "utils.em_f1" in text


def test_documents_are_the_gold_split_with_the_answer_prompt(splits: Path) -> None:
    docs = written_utils(splits).load(config="questions", split="test", version=1.0)["test"]
    gold = load_gold(splits, "test").questions
    assert [d["id"] for d in docs] == [q.id for q in gold]
    first = docs[0]
    assert first["aliases"] == gold[0].aliases and first["label"] == gold[0].label
    assert f"Q: {gold[0].question}\n" in hooks.doc_to_text(first)
    assert hooks.doc_to_text(first).startswith("Answer the question below.")


def test_metrics_equal_the_scorer_on_the_same_answers(splits: Path, tmp_path: Path) -> None:
    utils = written_utils(splits)
    docs = list(utils.load(config="questions", split="test", **NO_EMBEDDING)["test"])
    gold = load_gold(splits, "test")
    answers = {q.id: response(i, q) for i, q in enumerate(gold.questions)}
    predictions = write_lines(
        tmp_path / "p.jsonl", [{"id": k, "prediction": v} for k, v in answers.items()]
    )
    detector = RefusalDetector(RefusalSettings(embedding=False))
    expected, _ = score_file(gold, predictions, detector, ScoringSettings(bootstrap=0))
    per_doc = [utils.process_results(doc, [answers[doc["id"]]]) for doc in docs]
    random.Random(3).shuffle(per_doc)  # lm-eval may gather the items in another order
    got = {name: getattr(utils, name)([r[name] for r in per_doc]) for name, _ in METRICS}
    assert got == {name: expected["metrics"][name] for name, _ in METRICS}
    assert 0 < got["em_f1"] < 1 and 0 < got["pm_f1"] < 1
    assert 0 < got["refusal_rate_answerable"] < 1 and 0 < got["refusal_rate_unanswerable"] <= 1


def test_refusal_settings_come_from_the_metadata(splits: Path) -> None:
    docs = hooks.load_docs(splits, tipqa_embedding=False, tipqa_threshold=0.9, pretrained="m")
    item = hooks.process_results(docs["test"][0], ["I don't know"])["em_f1"]
    assert hooks.detector(item["scoring"]).settings == RefusalSettings(
        threshold=0.9, embedding=False
    )
    with pytest.raises(ConfigError, match="tipqa_treshold"):
        hooks.load_docs(splits, tipqa_treshold=0.5)
    with pytest.raises(ConfigError, match="threshold"):
        hooks.load_docs(splits, tipqa_threshold=3.0)
    with pytest.raises(ConfigError, match="does not exist"):
        hooks.load_docs(splits, tipqa_phrases="no-such-phrases.txt")


def test_another_answer_prompt(splits: Path, tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Question: {question}\nAnswer:", encoding="utf-8")
    docs = hooks.load_docs(splits, tipqa_prompt=str(prompt), **NO_EMBEDDING)["test"]
    assert hooks.doc_to_text(docs[0]) == f"Question: {docs[0]['question']}\nAnswer:"
    prompt.write_text("No slot here", encoding="utf-8")
    with pytest.raises(ConfigError, match="question"):
        hooks.load_docs(splits, tipqa_prompt=str(prompt))
