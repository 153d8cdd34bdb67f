"""Write the annotators' files: one spreadsheet CSV and one Label Studio task file each.

The CSV is UTF-8 with a byte-order mark (so that spreadsheet programs detect the encoding),
every field quoted, rows ended by CRLF, documents whole (paragraph breaks kept inside the
quoted field). With its default import options LibreOffice Calc (7.4, seen in the tests) reads
a CSV cell that starts with = as a formula (formula injection), and cells such as "+49", "0123",
"1/2", "July 4, 1776" or "10 pm" as numbers, dates or times, differently in every locale, even
when quoted. So every non-empty text cell starts with an invisible WORD JOINER (U+2060): it is
then text in every locale and shows exactly as written (an apostrophe, the usual guard, would
show; the import reads only the id and label columns). A spreadsheet cell holds
at most 32,767 characters: longer documents are still written whole, counted in the stats and
listed in the manifest, and should be annotated in Label Studio. The Label Studio tasks match
`annotation/label-studio.xml`: the document comes as HTML with the answer (and its aliases) and
the keywords marked. Neither file carries the judge's label, the question's final label or the
stage: those stay in the private key.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import re
from random import Random
from typing import Any

from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import Sample, SamplingSettings, sample_pool
from tipqa.annotation.texts import attach_texts
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, write_json, write_records
from tipqa.core.layout import PoolLayout
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.base import FetchDocuments

CSV_COLUMNS = [
    "item_id",
    "question",
    "answer",
    "keywords",
    "document",
    "relevant",
    "problematic",
    "comment",
]
SPREADSHEET_CELL_LIMIT = 32_767
SHEET_GUARD = "\u2060"
_WORD = r"[^\W_]"


def _phrase_pattern(phrases: list[str]) -> str | None:
    """A regex alternation of the phrases (longest first), whitespace-tolerant."""
    words = sorted({tuple(p.split()) for p in phrases if p.split()}, key=len, reverse=True)
    if not words:
        return None
    return "|".join(r"\s+".join(re.escape(w) for w in phrase) for phrase in words)


def highlight_html(text: str, answers: list[str], keywords: list[str]) -> str:
    """The text as HTML with answer phrases and keywords in <mark> (case-insensitive)."""
    groups = []
    for name, phrases in (("answer", answers), ("keyword", keywords)):
        pattern = _phrase_pattern(phrases)
        if pattern:
            groups.append(f"(?P<{name}>{pattern})")
    body = html.escape(text)
    if groups:
        regex = re.compile(rf"(?<!{_WORD})(?:{'|'.join(groups)})(?!{_WORD})", re.IGNORECASE)
        parts: list[str] = []
        last = 0
        for match in regex.finditer(text):
            parts.append(html.escape(text[last : match.start()]))
            parts.append(f'<mark class="{match.lastgroup}">{html.escape(match.group())}</mark>')
            last = match.end()
        parts.append(html.escape(text[last:]))
        body = "".join(parts)
    return f'<div class="document" style="white-space: pre-wrap">{body}</div>'


def spreadsheet_cell(value: str) -> str:
    """The value behind an invisible WORD JOINER, so that spreadsheets keep it as text."""
    return SHEET_GUARD + value if value else value


def csv_bytes(items: list[AnnotationItem]) -> bytes:
    """The annotator's spreadsheet: BOM, a header, every field quoted, label columns empty."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for item in items:
        cells = [item.question, item.answer, ", ".join(item.keywords), item.text]
        writer.writerow([item.item_id, *(spreadsheet_cell(c) for c in cells), "", "", ""])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def also_accepted(item: AnnotationItem) -> str:
    """The answer's other accepted forms, for the labelling page ("none" when there are none)."""
    others = [a for a in dict.fromkeys(item.aliases) if a.strip() and a != item.answer]
    return "; ".join(others) if others else "none"


def label_studio_tasks(items: list[AnnotationItem], annotator: str) -> list[dict[str, Any]]:
    """Label Studio tasks (`{"data": ...}`) for the variables of annotation/label-studio.xml."""
    return [
        {
            "data": {
                "item_id": item.item_id,
                "annotator": annotator,
                "question": item.question,
                "answer": item.answer,
                "aliases": also_accepted(item),
                "keywords": ", ".join(item.keywords),
                "document": item.text,
                "document_html": highlight_html(
                    item.text, [item.answer, *item.aliases], item.keywords
                ),
            }
        }
        for item in items
    ]


def items_of(items: list[AnnotationItem], annotator: str, seed: int) -> list[AnnotationItem]:
    """An annotator's items in an order of their own (strata and doubles mixed)."""
    mine = sorted((i for i in items if annotator in i.annotators), key=lambda i: i.item_id)
    Random(f"{seed}:{annotator}").shuffle(mine)
    return mine


def write_exports(
    sample: Sample, settings: SamplingSettings, out: AnnotationLayout, stats: StepStats
) -> None:
    """Write the key, every annotator's CSV and Label Studio file, and the manifest."""
    write_records(out.key, sample.items)
    long_items = sorted(
        i.item_id for i in sample.items if len(spreadsheet_cell(i.text)) > SPREADSHEET_CELL_LIMIT
    )
    assignment: dict[str, list[str]] = {}
    for annotator in sample.annotators:
        mine = items_of(sample.items, annotator, settings.seed)
        assignment[annotator] = [i.item_id for i in mine]
        with atomic_open(out.csv(annotator)) as handle:
            handle.write(csv_bytes(mine))
        write_json(out.label_studio(annotator), label_studio_tasks(mine, annotator))
        stats.add("annotator_files", 2)
    stats.add("documents_over_spreadsheet_cell_limit", len(long_items))
    write_json(
        out.manifest,
        {
            "settings": settings.__dict__,
            "counts": sample.counts,
            "annotators": assignment,
            "documents_over_spreadsheet_cell_limit": long_items,
            "files": {
                "key": out.key.name,
                "csv": [out.csv(a).relative_to(out.root).as_posix() for a in assignment],
                "label_studio": [
                    out.label_studio(a).relative_to(out.root).as_posix() for a in assignment
                ],
            },
        },
    )


def export_annotation(
    pool: PoolLayout,
    out: AnnotationLayout,
    fetch: FetchDocuments,
    settings: SamplingSettings,
    record: StepRecord | None = None,
) -> StepStats:
    """Sample a finished pool, recover the judged texts, write the exports; stats file last."""
    provenance = record.provenance() if record is not None else None
    info = dataclasses.asdict(settings)
    stats = StepStats(Step.ANNOTATION_EXPORT, info=info, provenance=provenance)
    sample = sample_pool(pool, settings, stats)
    attach_texts(sample.items, pool, fetch, stats)
    write_exports(sample, settings, out, stats)
    stats.info["counts"] = sample.counts
    stats.write(out.stats)
    return stats
