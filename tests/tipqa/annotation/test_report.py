"""The round trip on a small fixed case: export, fill in both formats, import, statistics.

The expected numbers in tests/data/annotation/golden-agreement.json were computed by hand from
the key (golden-key.jsonl) and the labels below, as follows (A, B, C = annotator-01, -02, -03;
judge labels: g1 y, g2 n, g3 y, g4 n, g5 n, g6 y, g7 y, g8 n; assignment: g1 A, g2 B, g3 C,
g4 A, g5 A+B, g6 B+C, g7 C+A, g8 B+C).

LLM-human, one pair per annotation (judge, person), 12 pairs:
  g1 (y,y) g2 (n,y) g3 (y,y) g4 (n,n) g5 (n,n)(n,n) g6 (y,y)(y,n) g7 (y,y)(y,y) g8 (n,n)(n,n)
  equal: 10 -> 10/12 = 83.333 %.  Confusion (rows judge yes/no, columns person yes/no):
  [[5, 1], [1, 5]].  p_o = 10/12; judge yes 6/12, person yes 6/12;
  p_e = .5*.5 + .5*.5 = .5; kappa = (5/6 - 1/2) / (1/2) = 2/3.
Inter-annotator, double items (first, second): g5 (n,n) g6 (y,n) g7 (y,y) g8 (n,n)
  3/4 = 75 %; confusion [[1, 1], [0, 2]]; first yes 2/4, second yes 1/4;
  p_e = (2/4)(1/4) + (2/4)(3/4) = .5; kappa = (.75 - .5) / .5 = 0.5.
Krippendorff's alpha, nominal, people only: pairable units g5..g8 (two values each).
  Coincidences: o_nn = 2 (g5) + 2 (g8) = 4, o_yy = 2 (g7), o_yn = o_ny = 1 (g6);
  n_y = 3, n_n = 5, n = 8; alpha = 1 - (n - 1) * (o_yn + o_ny) / (2 n_y n_n)
  = 1 - 7 * 2 / 30 = 16/30 = 0.5333.
  With the judge as a coder: units with 2 values g1..g4, with 3 values g5..g8 (weight 1/2):
  o_yy = 2 (g1) + 2 (g3) + 1 (g6) + 3 (g7) = 8; o_nn = 2 (g4) + 3 (g5) + 3 (g8) = 8;
  o_yn = o_ny = 1 (g2) + 1 (g6) = 2; n_y = n_n = 10, n = 20;
  alpha = 1 - 19 * 4 / (2 * 10 * 10) = 1 - 0.38 = 0.62.
By stage. token (g1 g2 g5 g7): pairs (y,y)(n,y)(n,n)(n,n)(y,y)(y,y): 5/6; [[3,0],[1,2]];
  judge yes 3/6, person yes 4/6: p_e = (1/2)(4/6) + (1/2)(2/6) = 1/2; kappa 2/3.
  inter g5 (n,n) g7 (y,y): 100 %, p_e = 1/2, kappa 1; [[1,0],[0,1]].
  vector (g3 g4 g6 g8): (y,y)(n,n)(y,y)(y,n)(n,n)(n,n): 5/6; [[2,1],[0,3]];
  judge yes 3/6, person yes 2/6: p_e = (1/2)(2/6) + (1/2)(4/6) = 1/2; kappa 2/3.
  inter g6 (y,n) g8 (n,n): 50 %; first yes 1/2, second yes 0: p_e = 0 + (1/2)(1) = 1/2; kappa 0.
By label. answerable (g1 g2 g3 g6 g7): 7 pairs, 5 equal = 71.43 %; [[5,1],[1,0]];
  judge yes 6/7, person yes 6/7: p_e = 36/49 + 1/49 = 37/49;
  kappa = (35/49 - 37/49) / (12/49) = -1/6.  inter g6 (y,n) g7 (y,y): 50 %,
  first yes 2/2, second yes 1/2: p_e = 1 * 1/2 = 1/2, kappa 0; [[1,1],[0,0]].
  unanswerable (g4 g5 g8): 5 pairs all (n,n): 100 %, one label only: kappa undefined (null);
  inter g5, g8 (n,n): 100 %, kappa undefined.
By annotator against the judge. A: g1 g4 g5 g7 all equal: 100 %, judge yes 2/4 and A yes 2/4,
  kappa (1 - 1/2)/(1/2) = 1.  B: g2 differs: 75 %, judge yes 1/4, B yes 2/4:
  p_e = (1/4)(2/4) + (3/4)(2/4) = 1/2, kappa 0.5.  C: g6 differs: 75 %, judge yes 3/4, C yes
  2/4: p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2, kappa 0.5.
Problematic: B flags g2. Without g2: 11 pairs, 10 equal = 90.909 %; [[5,1],[0,5]];
  judge yes 6/11, person yes 5/11: p_e = 30/121 + 30/121 = 60/121;
  kappa = (110/121 - 60/121) / (61/121) = 50/61 = 0.81967.
Disagreements: g2 (judge n, B y) and g6 (judge y, C n; B y vs C n).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.annotation_support import fill_csv, label_studio_export

from tipqa.annotation.export import write_exports
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.report import agreement_report
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.core.errors import MissingExtraError
from tipqa.core.extras import Extra
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.records import JudgeRequest, Judgment
from tipqa.core.stats import StepStats

pytestmark = pytest.mark.needs("krippendorff")

DATA = Path(__file__).resolve().parents[2] / "data" / "annotation"
A, B, C = "annotator-01", "annotator-02", "annotator-03"
LABELS = {
    A: {"it-g1": "yes", "it-g4": "no", "it-g5": "no", "it-g7": "yes"},
    B: {"it-g2": "yes", "it-g5": "no", "it-g6": "yes", "it-g8": "no"},
    C: {"it-g3": "yes", "it-g6": "no", "it-g7": "yes", "it-g8": "no"},
}
NOTES = {
    (B, "it-g2"): (True, "the answer looks wrong, the text says Nabokov"),
    (C, "it-g6"): (False, "it only says largest city"),
}


def _labels(annotator: str) -> dict[str, tuple[str, bool, str]]:
    return {
        item: (label, *NOTES.get((annotator, item), (False, "")))
        for item, label in LABELS[annotator].items()
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, AnnotationLayout]:
    """Export the golden key, fill it in (A and C by CSV, B by Label Studio), run the report."""
    tmp = tmp_path_factory.mktemp("golden")
    items = read_records(DATA / "golden-key.jsonl", AnnotationItem)
    out = AnnotationLayout(tmp / "annotation" / "dev")
    write_exports(Sample(items, [A, B, C]), SamplingSettings(8, 4, 3), out, StepStats("t"))
    done = tmp / "completed"
    fill_csv(out.csv(A), done / f"{A}.csv", _labels(A))
    label_studio_export(out.label_studio(B), done / f"{B}.json", _labels(B))
    fill_csv(out.csv(C), done / f"{C}.csv", _labels(C))
    agreement_report(out, done, resamples=300, seed=1)
    return read_json(out.report_json), out  # type: ignore[return-value]


def _block(got: dict, want: dict) -> None:
    assert got["pairs"] == want["pairs"]
    assert got["agreement"]["value"] == pytest.approx(want["agreement"], abs=1e-6)
    if want["kappa"] is None:
        assert got["kappa"]["value"] is None and got["kappa"]["ci95"] is None
    else:
        assert got["kappa"]["value"] == pytest.approx(want["kappa"], abs=1e-6)
    assert got["confusion"]["matrix"] == want["matrix"]
    assert got["confusion"]["labels"] == ["yes", "no"]


def test_statistics_equal_the_hand_computed_golden_values(report) -> None:
    got, _ = report
    want = read_json(DATA / "golden-agreement.json")
    for key in ("items", "annotations", "double_items"):
        assert got[key] == want[key]
    _block(got["llm_human"], want["llm_human"])
    _block(got["inter_annotator"], want["inter_annotator"])
    for name, value in want["krippendorff_alpha"].items():
        assert got["krippendorff_alpha"][name]["value"] == pytest.approx(value, abs=1e-6)
    for breakdown in ("by_stage", "by_label"):
        for group, expected in want[breakdown].items():
            assert got[breakdown][group]["items"] == expected["items"]
            _block(got[breakdown][group]["llm_human"], expected["llm_human"])
            _block(got[breakdown][group]["inter_annotator"], expected["inter_annotator"])
    for person, expected in want["by_annotator"].items():
        assert got["by_annotator"][person] == pytest.approx(expected, abs=1e-6)
    flagged = got["problematic"]
    assert flagged["annotations_flagged"] == want["problematic"]["annotations_flagged"]
    assert flagged["items_flagged"] == want["problematic"]["items_flagged"]
    _block(
        flagged["llm_human_without_flagged_items"],
        want["problematic"]["llm_human_without_flagged_items"],
    )
    kinds = {d["item_id"]: d["kinds"] for d in got["disagreements"]}
    assert kinds == want["disagreements"]


def test_disagreements_carry_text_labels_and_comments(report) -> None:
    got, _ = report
    case = next(d for d in got["disagreements"] if d["item_id"] == "it-g2")
    assert case["text"].startswith("Pnin is a novel;") and case["judge_label"] == "no"
    assert case["humans"] == [
        {
            "annotator": B,
            "relevant": "yes",
            "problematic": True,
            "comment": "the answer looks wrong, the text says Nabokov",
        }
    ]


def test_intervals_are_ordered_and_hold_the_value(report) -> None:
    got, _ = report
    for block in (got["llm_human"], got["inter_annotator"]):
        for name in ("agreement", "kappa"):
            low, high = block[name]["ci95"]
            assert low <= block[name]["value"] <= high
    assert got["bootstrap"] == {"resamples": 300, "seed": 1, "confidence": 0.95}
    assert got["by_label"]["unanswerable"]["llm_human"]["kappa"]["undefined_resamples"] == 300


def test_markdown_and_figures_are_written(report) -> None:
    got, out = report
    text = out.report_markdown.read_text("utf-8")
    assert "| LLM-human agreement (%) | 83.3 |" in text
    assert "| Inter-annotator Cohen's kappa | 0.500 |" in text
    assert "### it-g6 (llm_human, inter_annotator)" in text
    assert "> Burkina Faso's largest city" in text
    assert len(got["figures"]) == 4
    for name in got["figures"]:
        assert (out.report / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"![{name}]({name})" in text
    stats = read_json(out.report_stats)
    assert stats["counts"] == {"annotations": 12, "disagreements": 2, "items": 8}


def test_without_the_annotation_extra_the_report_names_it_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tipqa.annotation.report as report

    monkeypatch.setattr(report, "SCIKIT_LEARN", Extra("tipqa_absent_sklearn", "annotation"))
    with pytest.raises(MissingExtraError, match=r"pip install 'tipqa\[annotation\]'"):
        agreement_report(AnnotationLayout(tmp_path / "nothing"), tmp_path / "completed")


class SecondJudge:
    """A second judge answering each annotated item as scripted (g8's judgment fails)."""

    name = "second"

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        labels = ["yes"] * 3 + ["no"] * 2 + ["yes"] * 2
        says = {f"q{i}": label for i, label in enumerate(labels, start=1)}
        out = []
        for request in requests:
            label = says.get(request.question_id)
            error = None if label else "timeout"
            out.append(Judgment.of(request, label=label, raw="", judge=self.name, error=error))  # type: ignore[arg-type]
        return out


def test_a_second_judge_s_agreement_with_people_beside_the_build_judge_s(
    report: tuple[dict, AnnotationLayout],
) -> None:
    """By hand, one pair per annotation (second judge, person), g8 left out (its judgment
    failed): g1 (y,y) g2 (y,y) g3 (y,y) g4 (n,n) g5 (n,n)(n,n) g6 (y,y)(y,n) g7 (y,y)(y,y):
    9 of 10 equal; second yes 7/10, person yes 6/10: p_e = .42 + .12 = .54;
    kappa = (.9 - .54) / .46 = 18/23."""
    _, out = report
    agreement_report(out, out.root.parent.parent / "completed", 300, 1, None, SecondJudge())
    second = read_json(out.report_json)["second_judge"]  # type: ignore[index]
    assert second["judge"] == "second" and second["failed"] == 1 and second["pairs"] == 10
    assert second["agreement"]["value"] == pytest.approx(90.0)
    assert second["kappa"]["value"] == pytest.approx(18 / 23)
    assert second["confusion"]["matrix"] == [[6, 1], [0, 3]]
