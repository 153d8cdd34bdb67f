"""Exports: spreadsheet CSV, Label Studio tasks matching the shipped config, key and manifest."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tipqa.annotation.export import (
    CSV_COLUMNS,
    SHEET_GUARD,
    csv_bytes,
    export_annotation,
    highlight_html,
    label_studio_tasks,
    spreadsheet_cell,
)
from tipqa.annotation.importing import COMMENT, PROBLEMATIC, RELEVANT
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import SamplingSettings
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.steps import Step

REPO = Path(__file__).resolve().parents[3]
CONFIG = REPO / "annotation" / "label-studio.xml"
HIDDEN = ("judge_label", "final_label", "evidence", "stage", "judge")
G = SHEET_GUARD


def _item(text: str) -> AnnotationItem:
    return AnnotationItem(
        "q1",
        'Who wrote "Pnin", a novel?',
        "Vladimir Nabokov",
        ["Vladimir Nabokov", "Nabokov"],
        ["Pnin", "novel"],
        "token",
        "d1",
        "d1@w0",
        "it-1",
        "yes",
        "t",
        "answerable",
        True,
        text,
        ["annotator-01"],
    )


def test_csv_has_bom_quoted_fields_and_whole_documents() -> None:
    text = 'Line one, with "quotes";\n\nZoë\'s line two.\r\n' + "word " * 8000 + "=SUM(A1)"
    data = csv_bytes([_item(text)])
    assert data.startswith(b'\xef\xbb\xbf"item_id",')
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows[0] == CSV_COLUMNS
    assert rows[1][:5] == [
        "it-1",
        G + 'Who wrote "Pnin", a novel?',
        G + "Vladimir Nabokov",
        G + "Pnin, novel",
        G + text,
    ]
    assert rows[1][5:] == ["", "", ""]
    assert len(rows) == 2


def test_every_text_cell_is_guarded_against_formulas_and_number_parsing() -> None:
    data = csv_bytes([_item('=HYPERLINK("http://x","y")\n\nrest'), _item("-- a list")])
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows[1][4] == G + '=HYPERLINK("http://x","y")\n\nrest'
    assert rows[2][4] == G + "-- a list"
    assert [c[:1] for c in rows[1][1:5]] == [G] * 4 and rows[1][0] == "it-1"
    assert spreadsheet_cell("0123") == "\u20600123" and spreadsheet_cell("") == ""


def test_highlighting_marks_answers_and_keywords_and_escapes_html() -> None:
    out = highlight_html(
        "Nabokov <b>wrote</b> PNIN, a novel; novelty is not novel-ish.",
        ["Vladimir Nabokov", "Nabokov"],
        ["Pnin", "novel"],
    )
    assert '<mark class="answer">Nabokov</mark>' in out
    assert '<mark class="keyword">PNIN</mark>' in out
    assert "&lt;b&gt;wrote&lt;/b&gt;" in out
    assert out.count('<mark class="keyword">novel</mark>') == 2
    assert "novelty" in out
    spaced = highlight_html("by Vladimir\n  Nabokov.", ["Vladimir Nabokov"], [])
    assert '<mark class="answer">Vladimir\n  Nabokov</mark>' in spaced


def _config_names() -> tuple[set[str], dict[str, str]]:
    root = ET.parse(CONFIG).getroot()
    variables = {
        match
        for element in root.iter()
        for value in element.attrib.values()
        for match in re.findall(r"\$(\w+)", value)
    }
    controls = {e.get("name"): e.tag for e in root.iter() if e.tag in ("Choices", "TextArea")}
    return variables, controls


def test_label_studio_tasks_fill_every_variable_of_the_shipped_config() -> None:
    variables, controls = _config_names()
    task = label_studio_tasks([_item("Nabokov wrote Pnin.")], "annotator-01")[0]
    assert variables <= set(task["data"]), variables - set(task["data"])
    assert controls == {RELEVANT: "Choices", PROBLEMATIC: "Choices", COMMENT: "TextArea"}
    choices = [c.get("value") for c in ET.parse(CONFIG).getroot().iter("Choice")]
    assert choices[:2] == ["yes", "no"]
    assert not set(HIDDEN) & set(task["data"])


def test_guidelines_cover_the_points_of_appendix_b() -> None:
    text = (REPO / "annotation" / "guidelines.md").read_text("utf-8").lower()
    for phrase in ("common knowledge", "problematic question", "expected answer", "yes", "no"):
        assert phrase in text
    assert (REPO / "annotation" / "completed" / "README.md").exists()


def test_export_writes_key_exports_and_manifest_without_leaking_the_key(
    make_pool, tmp_path
) -> None:
    pool = make_pool()
    out = AnnotationLayout(tmp_path / "annotation" / "dev")
    settings = SamplingSettings(40, 10, 3, seed=5)
    record = StepRecord(Step.ANNOTATION_EXPORT, {"pool": "dev"})
    stats = export_annotation(pool.layout, out, pool.fetch, settings, record)
    key = read_records(out.key, AnnotationItem)
    assert len(key) == 40 and all(i.text and i.annotators for i in key)
    manifest = read_json(out.manifest)
    assert sorted(manifest["annotators"]) == ["annotator-01", "annotator-02", "annotator-03"]
    assert sum(len(v) for v in manifest["annotators"].values()) == 50
    for annotator, ids in manifest["annotators"].items():
        csv_text = out.csv(annotator).read_text("utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(csv_text, newline="")))
        assert [r["item_id"] for r in rows] == ids
        assert set(rows[0]) == set(CSV_COLUMNS)
        tasks = json.loads(out.label_studio(annotator).read_text("utf-8"))
        assert [t["data"]["item_id"] for t in tasks] == ids
        assert all(t["data"]["annotator"] == annotator for t in tasks)
        assert not any(h in t["data"] for t in tasks for h in HIDDEN)
    by_id = {i.item_id: i for i in key}
    first = manifest["annotators"]["annotator-01"][0]
    row = next(csv.DictReader(io.StringIO(out.csv("annotator-01").read_text("utf-8-sig"))))
    assert row["document"] == G + by_id[first].text
    written = read_json(out.stats)
    assert written["counts"]["sampled"] == 40 == stats.counts["sampled"]
    assert written["provenance"]["settings"]["pool"] == "dev"
