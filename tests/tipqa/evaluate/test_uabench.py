"""UA-Bench's attribution: ACC, MU-F1 and DU-F1 with normalized counts, the misattribution rate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import openai_server as fake
from support.evaluate_support import labeled, write_lines, write_split

from tipqa.core.errors import InputError
from tipqa.core.stats import StepStats
from tipqa.evaluate.__main__ import run
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.score import ScoringSettings, score_file
from tipqa.evaluate.uabench import read_targets, score_uabench, targets_of
from tipqa.evaluate.uabench_judge import LLMAnswerJudge
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
    # MU targets: the 3 errors and the 4 absent, 3 of the 7 said MU; no DU set (P = 1).
    assert result["mu"]["precision"] == 1.0 and result["mu"]["recall"] == pytest.approx(3 / 7)
    assert result["mu_f1"] == pytest.approx(2 * (3 / 7) / (1 + 3 / 7))
    assert result["du_f1"] is None and result["du"] is None
    # tipqa's earlier reading: 1/3 of the errors and 2/4 of the absent, each set weighing one
    recall = (1 / 3 + 2 / 4) / 2
    assert result["per_set_normalization"]["mu_f1"] == pytest.approx(2 * recall / (1 + recall))
    assert result["misattribution_rate"] == pytest.approx(2 / 10)
    assert result["misattribution_of_abstentions"] == pytest.approx(2 / 5)
    assert result["mu_recall_knowledge_absent"] == pytest.approx(0.5)
    assert result["mu_recall_answerable_error"] == pytest.approx(1 / 3)
    assert result["parse"] == {
        "unboxed": 1, "truncated_box": 0, "multiple_boxes": 1, "judge_parse_errors": 0,
    }  # fmt: skip


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
    # MU targets q2 (said MU) and m1: TP = 1/2, FN = 1/2; FP = 1/2 (d2 of the two DU targets).
    assert result["mu"] == pytest.approx({"precision": 1 / 2, "recall": 1 / 2, "f1": 1 / 2})
    # DU: TP = 1/2 (d1), FN = 1/2, FP = 1/2 (m1 of the two MU targets said DU).
    assert result["du"] == pytest.approx({"precision": 1 / 2, "recall": 1 / 2, "f1": 1 / 2})
    # each set weighing one: MU TP = 1 (errors) + 0 (absent), FN = 1, FP = 1/2; DU FP = 0 + 1
    assert result["per_set_normalization"]["mu_f1"] == pytest.approx(4 / 7)
    assert result["per_set_normalization"]["du_f1"] == pytest.approx(2 / 5)
    assert result["misattribution_rate"] == pytest.approx(1 / 3)
    assert result["acc"] == pytest.approx(1 / 2)


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


@pytest.mark.needs("openai")
def test_the_llm_judge_through_the_llm_cache_from_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def rule(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        text = fake.last_user_message(body)
        return fake.Reply("Yes" if "Paris" in text else "Probably not" if "Nile" in text else "No")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gold = write_split(tmp_path, ROWS[:3])
    rows = [
        {"id": "a1", "response": "\\boxed{Paris}"},
        {"id": "a2", "response": "\\boxed{Nile}"},
        {"id": "a3", "response": "\\boxed{Milan}"},
    ]
    predictions = write_lines(tmp_path / "p.jsonl", rows)
    with fake.FakeOpenAIServer(rule) as server:
        command = ["uabench", str(gold), str(predictions), "--judge-model", "judge"]
        command += ["--judge-base-url", server.base_url, "--llm-cache", str(tmp_path / "cache")]
        assert run(command) == 0
        first = json.loads(capsys.readouterr().out)
        assert server.calls == 3 and first["judge_counts"]["cache_stored"] == 2
        server.reset()
        assert run(command) == 0
        again = json.loads(capsys.readouterr().out)
        assert server.calls == 1, "only the reply other than Yes or No is asked again"
    assert again["judge_counts"]["cache_hits"] == 2
    assert again["acc"] == first["acc"] == pytest.approx(1 / 3)
    assert again["parse"]["judge_parse_errors"] == 1


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


def both_entry_points(
    tmp_path: Path, rows: list, responses: dict[str, str], detector: RefusalDetector
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The main scorer's `uabench` block and `uabench`'s result on the same raw responses."""
    gold = load_gold(write_split(tmp_path, rows))
    predictions = write_lines(
        tmp_path / "p.jsonl", [{"id": q, "prediction": t} for q, t in responses.items()]
    )
    main, _ = score_file(gold, predictions, detector, ScoringSettings(bootstrap=0))
    raw = write_lines(
        tmp_path / "r.jsonl", [{"id": q, "response": t} for q, t in responses.items()]
    )
    return main["uabench"], score_uabench(targets_of(gold), raw, split=gold.split)


def test_the_issue_s_example_agrees_from_both_entry_points_and_with_the_text(
    tmp_path: Path, rules_detector: RefusalDetector
) -> None:
    rows = [labeled("u1", "unanswerable", "Oslo"), labeled("a1", "answerable", "Paris")]
    responses = {"u1": "\\boxed{}", "a1": "\\boxed{<MODEL_UNCERTAIN>}"}
    main, command = both_entry_points(tmp_path, rows, responses, rules_detector)
    # an empty box is an (empty) answer; the two model-uncertain targets, one said MU: R = 1/2
    assert main == command
    assert main["mu_f1"] == pytest.approx(2 / 3) and main["mu"]["precision"] == 1.0
    assert main["counts"]["knowledge_absent"]["ANSWERABLE"] == 1
    paris = {"u1": "\\boxed{<model_uncertain>}", "a1": "So \\boxed{\\text{Paris}}"}
    main, command = both_entry_points(tmp_path / "paris", rows, paris, rules_detector)
    assert main == command and main["acc"] == 1.0 and main["sets"]["answerable_correct"] == 1


ADVERSARIAL = {
    "a1": "\\boxed{\\text{Paris}}",  # nested braces: the answer, correct
    "a2": "First \\boxed{Quito}, then \\boxed{\\boxed{Lima}}",  # several and nested boxes
    "a3": "\\boxed{Lima} ... and finally \\boxed{Lim",  # truncated last box: the suffix
    "a4": "I believe the answer is\nLima",  # no box: the last line
    "a5": "\\boxed{}",  # an empty box: an empty answer
    "a6": "\\boxed{i DON'T know}",  # a refusal token in another case
    "a7": "\\boxed{I don’t know}",  # the typographic apostrophe of the paper's text
    "u1": "\\boxed{<Data_Uncertain>}",
    "u2": "\\boxed{<MODEL_UNCERTAIN>}\nor rather \\boxed{<DATA_UNC",  # truncated
    "u3": "no idea. i don't know",  # a token in the unboxed suffix
    "u4": "\\boxed{I do not know}",  # not the protocol's token: an answer
    "u5": "\\boxed{<DATA_UNCERTAIN> <MODEL_UNCERTAIN>}",  # both: MODEL_UNCERTAIN first
}


def test_both_entry_points_agree_on_adversarial_responses(
    tmp_path: Path, rules_detector: RefusalDetector
) -> None:
    rows = [labeled(f"a{i}", "answerable", "Paris" if i == 1 else "Lima") for i in range(1, 8)]
    rows += [labeled(f"u{i}", "unanswerable", "Oslo") for i in range(1, 6)]
    main, command = both_entry_points(tmp_path, rows, ADVERSARIAL, rules_detector)
    assert main == command
    assert main["parse"] == {
        "unboxed": 2, "truncated_box": 2, "multiple_boxes": 1, "judge_parse_errors": 0,
    }  # fmt: skip
    # correct: a1 (\text{Paris}), a2 (Lima), a4 (Lima); a3 reads the suffix "\boxed{Lim"
    assert main["sets"]["answerable_correct"] == 3 and main["acc"] == pytest.approx(3 / 7)
    assert main["counts"]["answerable_error"] == {
        "ANSWERABLE": 2, "DATA_UNCERTAIN": 0, "MODEL_UNCERTAIN": 2,
    }  # fmt: skip
    # u2's last box never closes (its first is not read), its last line names no token
    assert main["counts"]["knowledge_absent"] == {
        "ANSWERABLE": 2, "DATA_UNCERTAIN": 1, "MODEL_UNCERTAIN": 2,
    }  # fmt: skip
    assert main["mu_f1"] == pytest.approx(2 * (4 / 9) / (1 + 4 / 9))


def test_normalized_counts_weigh_the_two_sets_alike(tmp_path: Path) -> None:
    records = [
        {"id": f"d{i}", "question": "?", "answers": [], "label": "ABSTAIN", "uncertainty": DU}
        for i in range(4)
    ]
    records += [
        {"id": f"m{i}", "question": "?", "answers": ["x"], "label": "ABSTAIN", "uncertainty": MU}
        for i in range(2)
    ]
    said = {"d0": MU, "d1": DU, "d2": DU, "d3": DU, "m0": MU, "m1": DU}
    rows = [{"id": qid, "prediction": label} for qid, label in said.items()]
    targets = read_targets(write_lines(tmp_path / "gold.jsonl", records))
    result = score_uabench(targets, write_lines(tmp_path / "p.jsonl", rows))
    # MU: TP = 1/2, FN = 1/2, FP = 1/4 (one of four DU targets); raw counts would give 1/2
    assert result["mu"] == pytest.approx({"precision": 2 / 3, "recall": 1 / 2, "f1": 4 / 7})
    # DU: TP = 3/4, FN = 1/4, FP = 1/2 (one of two MU targets)
    assert result["du"] == pytest.approx({"precision": 3 / 5, "recall": 3 / 4, "f1": 2 / 3})
    assert result["acc"] is None, "no answerable question: no accuracy, not 0"


def test_a_ratio_without_a_denominator_is_null(tmp_path: Path) -> None:
    gold = load_gold(write_split(tmp_path, ROWS[:2]))
    answered = [{"id": "a1", "response": "\\boxed{Paris}"}, {"id": "a2", "response": "Nile"}]
    result = score_uabench(targets_of(gold), write_lines(tmp_path / "p.jsonl", answered))
    assert result["acc"] == 1.0 and result["mu_f1"] is None and result["mu"] is None
    assert result["mu_recall_knowledge_absent"] is None
    assert result["misattribution_of_abstentions"] is None
    wrong = [{"id": "a1", "response": "\\boxed{Rome}"}, {"id": "a2", "response": "Nile"}]
    result = score_uabench(targets_of(gold), write_lines(tmp_path / "w.jsonl", wrong))
    assert result["mu"] == {"precision": None, "recall": 0.0, "f1": 0.0}
