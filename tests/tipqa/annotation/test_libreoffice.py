"""The annotators' CSV through real LibreOffice Calc (headless): opened, filled in, saved back.

Opening uses the import options a person gets by default (comma, double quote, UTF-8,
standard column types); every text cell must come out as text, exactly as written (formula
and number look-alikes, quotes, paragraph breaks, non-ASCII). The sheet, labelled, is saved
back by LibreOffice as CSV (comma and semicolon) and as XLSX, and every copy imports with the
same labels. Skipped without `soffice` (Debian: apt-get install libreoffice-calc).
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

import pytest

from tipqa.annotation.export import CSV_COLUMNS, SHEET_GUARD, write_exports
from tipqa.annotation.importing import assignment_of, read_sheet
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.core.stats import StepStats

pytestmark = pytest.mark.libreoffice

A, B = "annotator-01", "annotator-02"
OPEN_CSV = "CSV:44,34,76,1"
TRICKY = [
    ("=1+1 is how much?", "2", ["=1+1"], '=HYPERLINK("http://example.org","click") first'),
    ("+49 is the code of?", "+49", ["+49", "code"], "+49 30 is a Berlin number."),
    ("-5 degrees is cold?", "-5", ["-"], "- a list item\r\n- another item"),
    ("@home means?", "@home", ["@"], "@SUM(A1) is an old Lotus formula."),
    (
        'Who said "hi"?',
        "Zoë 東京 😀",
        ["quote"],
        'He said "hi", then left.\r\n\r\nNew; with, commas',
    ),
    ("Which fraction?", "1/2", ["fraction"], "\tA tab first; 0123 stays 0123."),
    ("Which date?", "July 4, 1776", ["date"], "TRUE or FALSE, 50% or 10 pm?"),
    ("Which code?", "0123", ["code"], "3e5 and 1,000 are numbers elsewhere."),
]


def soffice() -> str:
    """The LibreOffice command, or skip."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if not found:
        pytest.skip("no soffice (Debian: apt-get install libreoffice-calc)")
    return found


def convert(source: Path, target: str, out: Path, infilter: str | None = None) -> Path:
    """`soffice --headless --convert-to target` with a fresh profile; the converted file."""
    profile = out.parent / "lo-profile"
    command = [
        soffice(),
        f"-env:UserInstallation={profile.as_uri()}",
        "--headless",
        "--norestore",
        *([f"--infilter={infilter}"] if infilter else []),
        "--convert-to",
        target,
        "--outdir",
        str(out),
        str(source),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    converted = out / f"{source.stem}.{target.split(':')[0]}"
    assert done.returncode == 0 and converted.exists(), done.stdout + done.stderr
    return converted


def _items() -> list[AnnotationItem]:
    return [
        AnnotationItem(
            f"q{n}",
            question,
            answer,
            [answer],
            keywords,
            "token",
            f"d{n}",
            f"d{n}@w0",
            f"it-{n:012x}",
            ("yes", "no")[n % 2],
            "t",
            "answerable",
            n % 2 == 0,
            text,
            [A, B] if n < 2 else [(A, B)[n % 2]],
        )
        for n, (question, answer, keywords, text) in enumerate(TRICKY)
    ]


def _fill(opened: Path, labels: dict[str, tuple[str, str, str]], target: Path) -> None:
    """Type the labels into the sheet LibreOffice opened (as the annotator does)."""
    import openpyxl

    book = openpyxl.load_workbook(opened)
    sheet = book.active
    header = [c.value for c in sheet[1]]
    for row in sheet.iter_rows(min_row=2):
        relevant, problematic, comment = labels[row[0].value]
        row[header.index("relevant")].value = relevant
        row[header.index("problematic")].value = problematic or None
        row[header.index("comment")].value = comment or None
    book.save(target)


@pytest.mark.needs("openpyxl")
def test_the_csv_opens_unmangled_and_every_saved_sheet_imports(tmp_path: Path) -> None:
    import openpyxl

    items = _items()
    out = AnnotationLayout(tmp_path / "export")
    write_exports(Sample(items, [A, B]), SamplingSettings(8, 2, 2), out, StepStats("t"))
    opened = convert(out.csv(A), "xlsx", tmp_path / "opened", OPEN_CSV)

    sheet = openpyxl.load_workbook(opened).active
    rows = list(sheet.iter_rows())
    assert [c.value for c in rows[0]] == CSV_COLUMNS
    by_id = {i.item_id: i for i in items}
    exported = list(csv.reader(io.StringIO(out.csv(A).read_text("utf-8-sig"), newline="")))
    assert [r[0].value for r in rows[1:]] == [row[0] for row in exported[1:]]
    mine = [by_id[row[0]] for row in exported[1:]]
    for row in rows[1:]:
        item = by_id[row[0].value]
        expected = [item.question, item.answer, ", ".join(item.keywords), item.text]
        for cell, text in zip(row[1:5], expected, strict=True):
            assert cell.data_type == "s", (cell.coordinate, cell.value)
            assert cell.value == SHEET_GUARD + text.replace("\r\n", "\n")

    labels = {
        i.item_id: (("no", "yes")[n % 2], "x" if n == 1 else "", 'Zoë: "odd"\nline' if n else "")
        for n, i in enumerate(mine)
    }
    filled = tmp_path / "filled" / f"{A}.xlsx"
    filled.parent.mkdir()
    _fill(opened, labels, filled)
    saved = [
        convert(filled, "xlsx", tmp_path / "saved-xlsx"),
        convert(filled, "csv:Text - txt - csv (StarCalc):44,34,76,1", tmp_path / "saved-csv"),
        convert(filled, "csv:Text - txt - csv (StarCalc):59,34,76,1", tmp_path / "saved-semi"),
    ]
    assigned = assignment_of(items)
    for path in saved:
        got = {
            a.item_id: (a.relevant, a.problematic, a.comment) for a in read_sheet(path, A, assigned)
        }
        want = {k: (r, bool(p), c) for k, (r, p, c) in labels.items()}
        assert got == want, path
