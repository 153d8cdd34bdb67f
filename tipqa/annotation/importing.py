"""Read completed annotation files back: filled-in sheets and Label Studio JSON exports.

Each annotator returns one file, `<completed>/<annotator>.csv`, `.xlsx` (a sheet saved by a
spreadsheet program, read with openpyxl) or `.json` (Label Studio). Every problem stops the
import with an `InputError` naming the file, the row (sheets, counted from the header's row 1,
as a spreadsheet numbers them) or the task (JSON, counted from 1), and the field: an item id
that is not in the key or not assigned to this annotator, a file that belongs to another
annotator, a duplicate item, a missing or second label, a label other than yes / no, an unknown
control name, and items of the assignment that the file lacks. Nothing is dropped without a
word: only rows whose every cell is empty are skipped.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tipqa.annotation.items import Annotation, AnnotationItem
from tipqa.core.errors import InputError, MissingExtraError
from tipqa.core.jsonl import read_json
from tipqa.core.records import Relevance

RELEVANT = "relevant"
PROBLEMATIC = "problematic"
COMMENT = "comment"
CONTROLS = (RELEVANT, PROBLEMATIC, COMMENT)
REQUIRED_COLUMNS = ("item_id", RELEVANT, PROBLEMATIC, COMMENT)
LABELS: tuple[Relevance, ...] = ("yes", "no")
TRUE_FLAGS = {"x", "yes", "y", "true", "1", "problematic", "problematic question"}
FALSE_FLAGS = {"", "no", "n", "false", "0"}

Assigned = dict[str, list[str]]


def assignment_of(items: Iterable[AnnotationItem]) -> Assigned:
    """Item id -> the annotators it was given to."""
    return {item.item_id: list(item.annotators) for item in items}


def parse_relevant(value: Any, path: Path, line: int | None, where: str, field: str) -> Relevance:
    """A yes / no label (case and surrounding spaces ignored), or an error naming the place."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text in LABELS:
        return text  # type: ignore[return-value]
    if text in ("", None):
        raise InputError(
            f"{where}: missing label (expected yes or no)", path=str(path), line=line, field=field
        )
    raise InputError(
        f"{where}: label {value!r} is not yes or no", path=str(path), line=line, field=field
    )


def _check_owner(path: Path, annotator: str, ids: list[str], assigned: Assigned) -> None:
    """Reject a file whose items all belong to another annotator, naming that annotator."""
    known = [i for i in ids if i in assigned]
    if not known or all(annotator in assigned[i] for i in known):
        return
    owners = set.intersection(*(set(assigned[i]) for i in known)) - {annotator}
    if owners:
        raise InputError(
            f"file for the wrong annotator: its items are assigned to "
            f"{' and '.join(sorted(owners))}, not all to {annotator}",
            path=str(path),
        )


def _check_item(
    path: Path,
    line: int | None,
    where: str,
    field: str,
    item: str,
    annotator: str,
    assigned: Assigned,
    seen: dict[str, str],
) -> None:
    """Reject an empty, unknown, foreign or repeated item id."""
    if not item:
        raise InputError(f"{where}: empty item id", path=str(path), line=line, field=field)
    if item not in assigned:
        raise InputError(
            f"{where}: unknown item id {item!r} (not in the key)",
            path=str(path),
            line=line,
            field=field,
        )
    if annotator not in assigned[item]:
        raise InputError(
            f"{where}: item {item} is assigned to {', '.join(assigned[item])}, not {annotator}",
            path=str(path),
            line=line,
            field=field,
        )
    if item in seen:
        raise InputError(
            f"{where}: item {item} is labelled twice (also at {seen[item]})",
            path=str(path),
            line=line,
            field=field,
        )
    seen[item] = where


def _check_complete(path: Path, annotator: str, seen: dict[str, str], assigned: Assigned) -> None:
    """Reject a file that lacks some of the annotator's items."""
    missing = sorted(i for i, people in assigned.items() if annotator in people and i not in seen)
    if missing:
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise InputError(f"{len(missing)} assigned item(s) have no label: {shown}", path=str(path))


def _flag(value: str, path: Path, line: int | None, where: str) -> bool:
    text = value.strip().lower()
    if text in TRUE_FLAGS:
        return True
    if text in FALSE_FLAGS:
        return False
    raise InputError(
        f"{where}: problematic flag {value!r} is neither empty/no nor x/yes",
        path=str(path),
        line=line,
        field=PROBLEMATIC,
    )


def _decode(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 at byte {exc.start} (save the sheet as 'CSV UTF-8')", path=str(path)
        ) from exc


def _delimiter(first_line: str) -> str:
    """The spreadsheet's delimiter (some locales save with ';' or tabs)."""
    for delimiter in (",", ";", "\t"):
        if "item_id" in (c.strip().strip('"').lower() for c in first_line.split(delimiter)):
            return delimiter
    return ","


Row = tuple[int, int | None, list[str]]  # sheet row number, CSV line (None in XLSX), cells


def _csv_rows(path: Path) -> tuple[list[str], list[Row]]:
    """The header and the non-empty rows of a CSV (any of the usual delimiters)."""
    text = _decode(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text.split("\n", 1)[0]))
    header = next(reader, [])
    rows: list[Row] = []
    start = reader.line_num + 1
    for number, row in enumerate(reader, start=2):
        rows.append((number, start, row))
        start = reader.line_num + 1
    return header, rows


def _cell_text(value: Any) -> str:
    """A sheet cell as the text a person typed (None empty, 1.0 as 1, booleans as words)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _xlsx_rows(path: Path) -> tuple[list[str], list[Row]]:
    """The header and the rows of the first sheet of an XLSX workbook."""
    try:
        import openpyxl
    except ImportError as exc:
        raise MissingExtraError("openpyxl", "annotation") from exc
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"not an XLSX workbook ({exc})", path=str(path)) from exc
    try:
        cells = [
            [_cell_text(v) for v in row] for row in book.worksheets[0].iter_rows(values_only=True)
        ]
    finally:
        book.close()
    header = cells[0] if cells else []
    return header, [(number, None, row) for number, row in enumerate(cells[1:], start=2)]


def read_sheet(path: Path, annotator: str, assigned: Assigned) -> list[Annotation]:
    """The labels of one completed sheet (.csv or .xlsx), every row checked."""
    header, found = _xlsx_rows(path) if path.suffix.lower() == ".xlsx" else _csv_rows(path)
    header = [c.strip().lstrip("\ufeff").lower() for c in header]
    for column in REQUIRED_COLUMNS:
        if column not in header:
            raise InputError(f"missing column {column!r}", path=str(path), line=1, field=column)
    col = {name: header.index(name) for name in REQUIRED_COLUMNS}
    rows = [
        (number, line, row + [""] * (len(header) - len(row)))
        for number, line, row in found
        if any(cell.strip() for cell in row)
    ]
    _check_owner(path, annotator, [r[col["item_id"]].strip() for _, _, r in rows], assigned)
    seen: dict[str, str] = {}
    out = []
    for number, line, row in rows:
        where = f"row {number}"
        item = row[col["item_id"]].strip()
        _check_item(path, line, where, "item_id", item, annotator, assigned, seen)
        out.append(
            Annotation(
                item_id=item,
                annotator=annotator,
                relevant=parse_relevant(row[col[RELEVANT]], path, line, where, RELEVANT),
                problematic=_flag(row[col[PROBLEMATIC]], path, line, where),
                comment=row[col[COMMENT]].strip(),
                source=f"{path.name}:{where}",
            )
        )
    _check_complete(path, annotator, seen, assigned)
    return out


def _results(task: dict, path: Path, where: str) -> dict[str, list[dict]]:
    """The one non-cancelled annotation's results of a task, grouped by control name."""
    annotations = task.get("annotations")
    if not isinstance(annotations, list):
        raise InputError(f"{where}: no 'annotations' list", path=str(path), field="annotations")
    done = [a for a in annotations if isinstance(a, dict) and not a.get("was_cancelled")]
    if not done:
        raise InputError(
            f"{where}: missing label (no submitted annotation)", path=str(path), field="annotations"
        )
    if len(done) > 1:
        raise InputError(
            f"{where}: {len(done)} submitted annotations (duplicate labels); keep one",
            path=str(path),
            field="annotations",
        )
    grouped: dict[str, list[dict]] = {}
    for n, result in enumerate(done[0].get("result") or []):
        name = result.get("from_name") if isinstance(result, dict) else None
        if name not in CONTROLS:
            raise InputError(
                f"{where}: unknown control {name!r} (is the project's labelling config "
                "annotation/label-studio.xml?)",
                path=str(path),
                field=f"annotations[0].result[{n}].from_name",
            )
        grouped.setdefault(name, []).append(result)
    return grouped


def _choices(result: dict) -> list[Any]:
    value = result.get("value")
    choices = value.get("choices") if isinstance(value, dict) else None
    return choices if isinstance(choices, list) else []


def _task_annotation(
    task: Any, n: int, path: Path, annotator: str, assigned: Assigned, seen: dict[str, str]
) -> Annotation:
    """The annotation of task number `n`, every part checked."""
    where = f"task {n}"
    data = task.get("data") if isinstance(task, dict) else None
    if not isinstance(data, dict):
        raise InputError(
            f"{where}: not a Label Studio task (no 'data'); export the project as JSON",
            path=str(path),
            field="data",
        )
    item = str(data.get("item_id") or "").strip()
    where = f"task {n} (item {item})" if item else where
    if data.get("annotator") not in (None, annotator):
        raise InputError(
            f"{where}: file for the wrong annotator: task of {data['annotator']}, not {annotator}",
            path=str(path),
            field="data.annotator",
        )
    _check_item(path, None, where, "data.item_id", item, annotator, assigned, seen)
    grouped = _results(task, path, where)
    relevant = grouped.get(RELEVANT, [])
    field = f"annotations[0].result[from_name={RELEVANT}]"
    if len(relevant) > 1:
        raise InputError(f"{where}: {len(relevant)} relevance labels", path=str(path), field=field)
    choices = _choices(relevant[0]) if relevant else []
    if len(choices) > 1:
        raise InputError(f"{where}: several choices {choices}", path=str(path), field=field)
    label = parse_relevant(choices[0] if choices else "", path, None, where, field)
    comment = "\n".join(
        str(t) for r in grouped.get(COMMENT, []) for t in (r.get("value") or {}).get("text") or []
    )
    return Annotation(
        item_id=item,
        annotator=annotator,
        relevant=label,
        problematic=any(_choices(r) for r in grouped.get(PROBLEMATIC, [])),
        comment=comment.strip(),
        source=f"{path.name}:task {n}",
    )


def read_label_studio(path: Path, annotator: str, assigned: Assigned) -> list[Annotation]:
    """The labels of one Label Studio JSON export (a list of tasks), every task checked."""
    tasks = read_json(path)
    if not isinstance(tasks, list):
        raise InputError(
            "not a Label Studio JSON export (expected a list of tasks)", path=str(path)
        )
    ids = [str((t.get("data") or {}).get("item_id", "")) for t in tasks if isinstance(t, dict)]
    _check_owner(path, annotator, ids, assigned)
    seen: dict[str, str] = {}
    out = [
        _task_annotation(task, n, path, annotator, assigned, seen)
        for n, task in enumerate(tasks, start=1)
    ]
    _check_complete(path, annotator, seen, assigned)
    return out


COMPLETED_SUFFIXES = (".csv", ".xlsx", ".json")


def completed_file(folder: Path, annotator: str) -> Path | None:
    """The annotator's completed file (.csv, .xlsx or .json), None when absent; two is an error."""
    found = [folder / f"{annotator}{suffix}" for suffix in COMPLETED_SUFFIXES]
    found = [p for p in found if p.exists()]
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise InputError(f"{names} exist for {annotator}; keep one", path=str(folder))
    return found[0] if found else None


def all_completed(folder: Path, annotators: list[str]) -> list[Path] | None:
    """Every annotator's completed file, in annotator order; None while one is missing."""
    files = [completed_file(folder, annotator) for annotator in annotators]
    return [path for path in files if path is not None] if all(files) else None


def read_completed(path: Path, annotator: str, assigned: Assigned) -> list[Annotation]:
    """One completed file, by its suffix."""
    reader = read_label_studio if path.suffix.lower() == ".json" else read_sheet
    return reader(path, annotator, assigned)


def load_completed(
    folder: Path, items: list[AnnotationItem], annotators: list[str]
) -> list[Annotation]:
    """Every annotator's labels; a missing file is an error that lists all the missing ones."""
    folder = Path(folder)
    files = {a: completed_file(folder, a) for a in annotators}
    missing = [a for a, path in files.items() if path is None]
    if missing:
        expected = ", ".join(f"{a}.csv (or .xlsx, .json)" for a in missing)
        raise InputError(f"{len(missing)} completed file(s) missing: {expected}", path=str(folder))
    assigned = assignment_of(items)
    return [
        annotation
        for annotator, path in files.items()
        for annotation in read_completed(path, annotator, assigned)  # type: ignore[arg-type]
    ]
