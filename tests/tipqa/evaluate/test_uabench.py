"""UA-Bench's attribution: ACC, MU-F1 and DU-F1 with normalized counts, the misattribution rate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai_server as fake
import pytest
from evaluate_support import labeled, write_lines, write_split

from tipqa.core.errors import InputError
from tipqa.core.stats import StepStats
from tipqa.evaluate.__main__ import run
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.score import ScoringSettings, score_file
from tipqa.evaluate.uabench import read_targets, score_uabench, targets_of
from tipqa.evaluate.uabench_judge import LLMAnswerJudge, strict_yes_no
from tipqa.llm.openai_chat import OpenAIChatModel
from tipqa.llm.openai_client import OpenAIServerSettings

ROWS = [
    labeled("a1", "answerable", "Paris"),
    labeled("a2", "answerable", "Nile", ["River Nile"]),
    labeled("a3", "answerable", "Rome"),
    labeled("a4", "answerable", "Lima"),
    labeled("a5", "answerable", "Bonn"),
    labeled("a6", "answerable", "Lima"),
    labeled("u1", "unanswerable", "Oslo"),
    labeled("u2", "unanswerable", "Bern"),
    labeled("u3", "unanswerable", "Riga"),
    labeled("u4", "unanswerable", "Kiev"),
]
# answerable_correct: a1, a2, a6; answerable_error: a3 (wrong), a4 (MU), a5 (DU);
# knowledge_absent: u1, u2 (MU), u3 (DU), u4 (an unboxed answer).
PREDICTED: list[dict[str, Any]] = [
    {"id": "a1", "response": "The capital of France. \\boxed{Paris}"},
    {"id": "a2", "prediction": "ANSWERABLE", "answer": "the River Nile"},
    {"id": "a3", "response": "\\boxed{\\text{Madrid}}"},
    {"id": "a4", "response": "Not sure. \\boxed{I don't know}"},
    {"id": "a5", "response": "\\boxed{<DATA_UNCERTAIN>}"},
    {"id": "a6", "response": "First \\boxed{Quito}, no: \\boxed{Lima}"},
    {"id": "u1", "response": "\\boxed{<MODEL_UNCERTAIN>}"},
    {"id": "u2", "prediction": "MODEL_UNCERTAIN"},
    {"id": "u3", "response": "\\boxed{<data_uncertain>}"},
    {"id": "u4", "response": "I think it is\nOslo"},
]


def test_hand_made_predictions_give_the_known_counts(tmp_path: Path) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    result = score_uabench(targets_of(gold), write_lines(tmp_path / "p.jsonl", PREDICTED))
    assert result["sets"] == {
        "answerable_correct": 3, "answerable_error": 3, "knowledge_absent": 4, "data_uncertain": 0,
    }  # fmt: skip
    assert result["counts"]["knowledge_absent"] == {
        "ANSWERABLE": 1, "DATA_UNCERTAIN": 1, "MODEL_UNCERTAIN": 2,
    }  # fmt: skip
    assert result["acc"] == pytest.approx(3 / 6)
    # MU targets: 1/3 of the errors and 2/4 of the absent: TP = 5/6 of 2 sets, no DU set (P = 1).
    recall = (1 / 3 + 2 / 4) / 2
    assert result["mu"]["precision"] == 1.0
    assert result["mu_f1"] == pytest.approx(2 * recall / (1 + recall))
    assert result["du_f1"] is None
    assert result["misattribution_rate"] == pytest.approx(2 / 10)
    assert result["misattribution_of_abstentions"] == pytest.approx(2 / 5)
    assert result["mu_recall_knowledge_absent"] == pytest.approx(0.5)
    assert result["mu_recall_answerable_error"] == pytest.approx(1 / 3)
    assert result["parse"] == {"unboxed": 1, "multiple_boxes": 1, "judge_parse_errors": 0}


DU, MU = "DATA_UNCERTAIN", "MODEL_UNCERTAIN"
UA_RECORDS = [
    {"id": "q1", "question": "Q1?", "answers": ["Paris"], "label": "ANSWERABLE"},
    {"id": "q2", "question": "Q2?", "answers": ["Rome"], "label": "ANSWERABLE"},
    {"id": "d1", "question": "D1?", "answers": [], "label": "ABSTAIN", "uncertainty": DU},
    {"id": "d2", "question": "D2?", "answers": [], "label": "ABSTAIN", "uncertainty": DU},
    {"id": "m1", "question": "M1?", "answers": ["Oslo"], "label": "ABSTAIN", "uncertainty": MU},
]


def test_du_f1_on_a_pool_with_data_uncertain_questions(tmp_path: Path) -> None:
    targets = read_targets(write_lines(tmp_path / "gold.jsonl", UA_RECORDS))
    rows = [
        {"id": "q1", "prediction": "ANSWERABLE", "correct": True},
        {"id": "q2", "prediction": "MODEL_UNCERTAIN"},
        {"id": "d1", "prediction": "DATA_UNCERTAIN"},
        {"id": "d2", "prediction": "MODEL_UNCERTAIN"},
        {"id": "m1", "prediction": "DATA_UNCERTAIN"},
    ]
    result = score_uabench(targets, write_lines(tmp_path / "p.jsonl", rows))
    # MU: TP = 1 (errors) + 0 (absent), FN = 1, FP = 1/2 (half the DU set said MU).
    assert result["mu"]["precision"] == pytest.approx(2 / 3)
    assert result["mu_f1"] == pytest.approx(4 / 7)
    # DU: TP = 1/2, FN = 1/2, FP = 0 (errors) + 1 (absent).
    assert result["du_f1"] == pytest.approx(2 / 5)
    assert result["misattribution_rate"] == pytest.approx(1 / 3)
    assert result["acc"] == pytest.approx(1 / 2)


def test_strict_yes_no() -> None:
    assert [strict_yes_no(t) for t in ("Yes", " no\n", "YES", "Yes.", "maybe", "")] == [
        True, False, True, None, None, None,
    ]  # fmt: skip


@pytest.mark.needs("openai")
def test_the_llm_judge_at_temperature_zero_and_its_parse_errors(tmp_path: Path) -> None:
    def rule(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        text = fake.last_user_message(body)
        return fake.Reply(
            "Yes" if "Lutetia" in text else "Probably not" if "Romulus" in text else "No"
        )

    gold = load_gold(write_split(tmp_path, ROWS[:3]))
    rows = [
        {"id": "a1", "response": "\\boxed{Lutetia}"},
        {"id": "a2", "response": "\\boxed{Nile}"},
        {"id": "a3", "response": "\\boxed{Romulus}"},
    ]
    with fake.FakeOpenAIServer(rule) as server:
        settings = OpenAIServerSettings(model="judge", base_url=server.base_url, max_retries=0)
        judge = LLMAnswerJudge(OpenAIChatModel(settings.client(StepStats("t"), progress=False)))
        result = score_uabench(
            targets_of(gold), write_lines(tmp_path / "p.jsonl", rows), judge=judge
        )
        judge.chat.close()
        assert {body["temperature"] for body in server.bodies} == {0}
    assert result["judged"] == 3 and result["parse"]["judge_parse_errors"] == 1
    assert result["sets"]["answerable_correct"] == 1 and result["sets"]["answerable_error"] == 2


def test_missing_predictions_are_an_error_unless_allowed(tmp_path: Path) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    partial = write_lines(tmp_path / "p.jsonl", PREDICTED[:2])
    with pytest.raises(InputError, match="8 question"):
        score_uabench(targets_of(gold), partial)
    result = score_uabench(targets_of(gold), partial, allow_missing=True)
    assert result["questions"] == 2 and result["missing_left_out"] == 8 and result["acc"] == 1.0


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([{"id": "a1", "prediction": "ABSTAIN"}], "not one of ANSWERABLE"),
        ([{"id": "a1", "prediction": "ANSWERABLE"}], "needs its `answer`"),
        ([{"id": "zz", "response": "x"}], "not in split"),
        (['{"id": "a1"'], "invalid JSON"),
    ],
)
def test_bad_predictions_are_named(tmp_path: Path, rows: list, match: str) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    with pytest.raises(InputError, match=match):
        score_uabench(targets_of(gold), write_lines(tmp_path / "p.jsonl", rows), allow_missing=True)


def test_the_uabench_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_split(tmp_path, ROWS)
    assert run(["uabench", str(gold), str(write_lines(tmp_path / "p.jsonl", PREDICTED))]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["misattribution_rate"] == pytest.approx(0.2)
    assert printed["judge"] == "alias-match"


def test_the_main_scorer_reports_the_attribution(
    tmp_path: Path, rules_detector: RefusalDetector
) -> None:
    gold = load_gold(write_split(tmp_path, ROWS[:3] + ROWS[6:8]))
    texts = {
        "a1": "\\boxed{Paris}",
        "a2": "Nile",
        "a3": "\\boxed{<DATA_UNCERTAIN>}",
        "u1": "I don't know",
        "u2": "\\boxed{<DATA_UNCERTAIN>}",
    }
    rows = [{"id": qid, "prediction": text} for qid, text in texts.items()]
    result, _ = score_file(
        gold, write_lines(tmp_path / "p.jsonl", rows), rules_detector, ScoringSettings(bootstrap=0)
    )
    block = result["uabench"]
    assert block["acc"] == pytest.approx(2 / 3)
    assert block["misattribution_rate"] == pytest.approx(2 / 5)
    assert block["mu_recall_knowledge_absent"] == 0.5 and block["mu_recall_answerable_error"] == 0
