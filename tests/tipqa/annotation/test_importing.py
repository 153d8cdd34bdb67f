"""Importing completed files: both formats read back, every kind of bad file named clearly."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from support.annotation_support import fill_csv, label_studio_export

from tipqa.annotation.export import write_exports
from tipqa.annotation.importing import (
    assignment_of,
    load_completed,
    read_label_studio,
    read_sheet,
)
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_records
from tipqa.core.stats import StepStats

KEY = Path(__file__).resolve().parents[2] / "data" / "annotation" / "golden-key.jsonl"
A, B, C = "annotator-01", "annotator-02", "annotator-03"


@pytest.fixture
def exported(tmp_path: Path) -> tuple[AnnotationLayout, list[AnnotationItem]]:
    """The golden key exported for three annotators."""
    items = read_records(KEY, AnnotationItem)
    out = AnnotationLayout(tmp_path / "export")
    write_exports(Sample(items, [A, B, C]), SamplingSettings(8, 4, 3), out, StepStats("t"))
    return out, items


def _labels(items: list[AnnotationItem], value: str = "yes") -> dict:
    return {i.item_id: (value, False, "") for i in items}


def _csv(exported, tmp_path: Path, annotator: str = A) -> Path:
    out, items = exported
    path = tmp_path / "done" / f"{annotator}.csv"
    fill_csv(out.csv(annotator), path, _labels(items))
    return path


def _json(exported, tmp_path: Path, annotator: str = B) -> Path:
    out, items = exported
    path = tmp_path / "done" / f"{annotator}.json"
    label_studio_export(out.label_studio(annotator), path, _labels(items, "no"))
    return path


def test_both_formats_read_back(exported, tmp_path) -> None:
    _, items = exported
    assigned = assignment_of(items)
    from_csv = read_sheet(_csv(exported, tmp_path), A, assigned)
    assert {a.item_id for a in from_csv} == {"it-g1", "it-g4", "it-g5", "it-g7"}
    assert all(a.relevant == "yes" and a.annotator == A for a in from_csv)
    from_json = read_label_studio(_json(exported, tmp_path), B, assigned)
    assert {a.item_id for a in from_json} == {"it-g2", "it-g5", "it-g6", "it-g8"}
    assert all(a.relevant == "no" and a.source.startswith(f"{B}.json:task ") for a in from_json)


def _edit_csv(path: Path, edit, delimiter: str = ",") -> list[list[str]]:
    """Apply `edit` to the CSV's rows (header first) and save it as a spreadsheet would."""
    rows = list(csv.reader(io.StringIO(path.read_text("utf-8-sig"), newline="")))
    edit(rows)
    out = io.StringIO(newline="")
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    path.write_text("\ufeff" + out.getvalue(), "utf-8")
    return rows


def _cell(row: int, column: str, value: str):
    def edit(rows: list[list[str]]) -> None:
        rows[row - 1][rows[0].index(column)] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message", "field"),
    [
        (_cell(3, "item_id", "it-zz"), "row 3: unknown item id 'it-zz'", "item_id"),
        (
            _cell(3, "item_id", "it-g2"),
            "it-g2 is assigned to annotator-02, not annotator-01",
            "item_id",
        ),
        (
            _cell(4, "item_id", "{first}"),
            "row 4: item {first} is labelled twice (also at row 2)",
            "item_id",
        ),
        (_cell(2, "relevant", "maybe"), "row 2: label 'maybe' is not yes or no", "relevant"),
        (_cell(5, "relevant", " "), "row 5: missing label", "relevant"),
        (_cell(2, "problematic", "perhaps"), "row 2: problematic flag 'perhaps'", "problematic"),
    ],
)
def test_bad_csv_rows_name_file_row_and_field(exported, tmp_path, edit, message, field) -> None:
    path = _csv(exported, tmp_path)
    first = list(csv.reader(io.StringIO(path.read_text("utf-8-sig"), newline="")))[1][0]
    if message.startswith("row 4: item {first}"):
        edit = _cell(4, "item_id", first)
    rows = _edit_csv(path, edit)
    with pytest.raises(InputError) as error:
        read_sheet(path, A, assignment_of(exported[1]))
    assert message.format(first=first) in str(error.value)
    assert error.value.path == str(path) and error.value.field == field
    text = path.read_text("utf-8-sig")
    number = int(message.split()[1].rstrip(":")) if message.startswith("row") else None
    if number is not None:
        starts = text[: text.index(rows[number - 1][1])].count("\n") + 1
        assert error.value.line == starts


def test_csv_lacking_rows_or_columns_or_encoding(exported, tmp_path) -> None:
    assigned = assignment_of(exported[1])
    path = _csv(exported, tmp_path)
    rows = _edit_csv(path, lambda rows: rows.pop(2))
    assert len(rows) == 4
    with pytest.raises(InputError, match=r"1 assigned item\(s\) have no label: it-g"):
        read_sheet(path, A, assigned)
    path.write_text('"item_id","relevant","comment"\r\n"it-g1","yes",""\r\n', "utf-8")
    with pytest.raises(InputError, match="missing column 'problematic'"):
        read_sheet(path, A, assigned)
    path.write_bytes(
        '"item_id","relevant","problematic","comment"\r\n"it-g1","sí","",""'.encode("cp1252")
    )
    with pytest.raises(InputError, match="not UTF-8"):
        read_sheet(path, A, assigned)


def test_csv_from_another_annotator_is_named_as_such(exported, tmp_path) -> None:
    path = _csv(exported, tmp_path, annotator=C)
    with pytest.raises(InputError, match="wrong annotator: its items are assigned to annotator-03"):
        read_sheet(path, A, assignment_of(exported[1]))


def test_spreadsheet_variants_are_accepted(exported, tmp_path) -> None:
    path = _csv(exported, tmp_path)

    def edit(rows: list[list[str]]) -> None:
        for row in rows[1:]:
            row[rows[0].index("relevant")] = " Yes "
        rows.insert(3, [""] * len(rows[0]))

    _edit_csv(path, edit, delimiter=";")
    labels = read_sheet(path, A, assignment_of(exported[1]))
    assert [a.relevant for a in labels] == ["yes"] * 4
    assert labels[-1].source == f"{A}.csv:row 6"


def _edit_json(path: Path, edit) -> None:
    tasks = json.loads(path.read_text("utf-8"))
    edit(tasks)
    path.write_text(json.dumps(tasks), "utf-8")


def _second_annotation(tasks: list) -> None:
    tasks[1]["annotations"].append(dict(tasks[1]["annotations"][0], id=999))


def _cancelled(tasks: list) -> None:
    tasks[0]["annotations"][0]["was_cancelled"] = True


def _two_choices(tasks: list) -> None:
    tasks[0]["annotations"][0]["result"][0]["value"]["choices"] = ["yes", "no"]


def _other_label(tasks: list) -> None:
    tasks[2]["annotations"][0]["result"][0]["value"]["choices"] = ["unsure"]


def _unknown_control(tasks: list) -> None:
    tasks[0]["annotations"][0]["result"][0]["from_name"] = "sentiment"


def _no_relevance(tasks: list) -> None:
    tasks[3]["annotations"][0]["result"] = []


def _other_annotator(tasks: list) -> None:
    tasks[0]["data"]["annotator"] = "annotator-03"


def _duplicate_task(tasks: list) -> None:
    tasks.append(tasks[0])


@pytest.mark.parametrize(
    ("edit", "message", "field"),
    [
        (_second_annotation, "task 2 (item it-g", "annotations"),
        (_cancelled, "task 1 (item it-g", "annotations"),
        (
            _two_choices,
            "several choices ['yes', 'no']",
            "annotations[0].result[from_name=relevant]",
        ),
        (_other_label, "task 3 (item it-g", "annotations[0].result[from_name=relevant]"),
        (_unknown_control, "unknown control 'sentiment'", "annotations[0].result[0].from_name"),
        (_no_relevance, "task 4 (item it-g", "annotations[0].result[from_name=relevant]"),
        (_other_annotator, "wrong annotator: task of annotator-03", "data.annotator"),
        (_duplicate_task, "task 5 (item it-g", "data.item_id"),
    ],
)
def test_bad_label_studio_exports_name_file_task_and_field(
    exported, tmp_path, edit, message, field
) -> None:
    path = _json(exported, tmp_path)
    _edit_json(path, edit)
    with pytest.raises(InputError) as error:
        read_label_studio(path, B, assignment_of(exported[1]))
    assert message in str(error.value)
    assert error.value.path == str(path) and error.value.field == field


def test_label_studio_messages_say_what_is_wrong(exported, tmp_path) -> None:
    assigned = assignment_of(exported[1])
    path = _json(exported, tmp_path)
    cases = [
        (_second_annotation, "2 submitted annotations (duplicate labels)"),
        (_cancelled, "missing label (no submitted annotation)"),
        (_other_label, "label 'unsure' is not yes or no"),
        (_no_relevance, "missing label (expected yes or no)"),
        (_duplicate_task, "is labelled twice (also at task 1"),
    ]
    for edit, message in cases:
        _json(exported, tmp_path)
        _edit_json(path, edit)
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read_label_studio(path, B, assigned)
    path.write_text(json.dumps({"tasks": []}), "utf-8")
    with pytest.raises(InputError, match="expected a list of tasks"):
        read_label_studio(path, B, assigned)
    path.write_text("[{", "utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        read_label_studio(path, B, assigned)


def test_missing_and_ambiguous_completed_files(exported, tmp_path) -> None:
    _, items = exported
    _csv(exported, tmp_path, A)
    with pytest.raises(InputError) as error:
        load_completed(tmp_path / "done", items, [A, B, C])
    assert (
        "2 completed file(s) missing: annotator-02.csv (or .xlsx, .json), annotator-03.csv"
        in str(error.value)
    )
    _json(exported, tmp_path, B)
    _csv(exported, tmp_path, C)
    assert len(load_completed(tmp_path / "done", items, [A, B, C])) == 12
    _csv(exported, tmp_path, B)
    with pytest.raises(
        InputError, match=r"annotator-02\.csv and annotator-02\.json exist for annotator-02"
    ):
        load_completed(tmp_path / "done", items, [A, B, C])


def _xlsx(exported, tmp_path: Path, edit=None, annotator: str = A) -> Path:
    """The exported sheet filled in and saved as XLSX, as a spreadsheet program would."""
    import openpyxl

    out, items = exported
    filled = tmp_path / "filled.csv"
    fill_csv(out.csv(annotator), filled, _labels(items))
    rows = list(csv.reader(io.StringIO(filled.read_text("utf-8-sig"), newline="")))
    if edit:
        edit(rows)
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    path = tmp_path / "done" / f"{annotator}.xlsx"
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


@pytest.mark.needs("openpyxl")
def test_xlsx_sheets_read_back_with_typed_cells(exported, tmp_path) -> None:
    def typed(rows: list[list]) -> None:
        header = rows[0]
        rows[1][header.index("relevant")] = "NO"
        rows[2][header.index("problematic")] = True
        rows[3][header.index("problematic")] = 1.0
        rows[4][header.index("comment")] = 'Zoë said "no"\nthen left'
        rows.insert(3, [None] * len(header))

    path = _xlsx(exported, tmp_path, typed)
    labels = read_sheet(path, A, assignment_of(exported[1]))
    assert [a.relevant for a in labels] == ["no", "yes", "yes", "yes"]
    assert [a.problematic for a in labels] == [False, True, True, False]
    assert labels[3].comment == 'Zoë said "no"\nthen left'
    assert labels[-1].source == f"{A}.xlsx:row 6"


@pytest.mark.needs("openpyxl")
def test_bad_xlsx_sheets_name_file_row_and_field(exported, tmp_path) -> None:
    assigned = assignment_of(exported[1])
    path = _xlsx(exported, tmp_path, _cell(3, "relevant", "maybe"))
    with pytest.raises(InputError) as error:
        read_sheet(path, A, assigned)
    assert "row 3: label 'maybe' is not yes or no" in str(error.value)
    assert error.value.path == str(path) and error.value.field == "relevant"

    def drop_comment(rows: list[list]) -> None:
        column = rows[0].index("comment")
        for row in rows:
            del row[column]

    path = _xlsx(exported, tmp_path, drop_comment)
    with pytest.raises(InputError, match="missing column 'comment'"):
        read_sheet(path, A, assigned)
    path.write_bytes(b"PK\x03\x04 this is no workbook")
    with pytest.raises(InputError, match="not an XLSX workbook"):
        read_sheet(path, A, assigned)
    _csv(exported, tmp_path, A)
    with pytest.raises(InputError, match=r"annotator-01\.csv and annotator-01\.xlsx exist"):
        load_completed(tmp_path / "done", exported[1], [A, B, C])
