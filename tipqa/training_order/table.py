"""The `table` training order: a file of `doc_id, first_step` for models ordered another way.

Parquet, CSV / TSV or JSON lines, one row per document (columns named by the settings). A
document listed twice keeps its smaller step (counted as `repeated_documents`); a step that
is not a whole number >= 0 is an InputError naming the file, line and column. A span's step
is its document's: a table says nothing about parts of documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import files_stat
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.questions.rows import is_row_file, iter_rows
from tipqa.training_order.base import SpanStep, WantedSpan


@dataclass(frozen=True)
class TableOrderSettings(Settings):
    """The table's files and column names."""

    paths: tuple[str, ...] = setting(
        (), doc="table files (Parquet, CSV, TSV, JSONL), folders or globs"
    )
    doc_field: str = setting("doc_id", doc="column of the corpus document id")
    step_field: str = setting("first_step", doc="column of the document's first training step")

    def files(self) -> list[Path]:
        """The table's files, sorted."""
        if not self.paths:
            raise ConfigError("[training_order] backend = table needs `paths` (the table's files)")
        return expand_paths(list(self.paths), accept=is_row_file)

    def inputs(self) -> dict[str, Any]:
        """The table's files by path, size and time."""
        return {"tables": files_stat(self.files())}


def _step(value: Any, path: Path, line: int, field: str) -> int:
    """A step value as an int; InputError when it is not a whole number >= 0."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(
            f"expected a whole number of steps >= 0, got {value!r}",
            path=str(path),
            line=line,
            field=field,
        )
    return value


def read_table(settings: TableOrderSettings, stats: StepStats) -> dict[str, int]:
    """Every document's first step from the table's files."""
    steps: dict[str, int] = {}
    for path in settings.files():
        stats.add("files")
        for line, row in iter_rows(path):
            doc_id = row.get(settings.doc_field)
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                raise InputError(
                    "missing or empty document id",
                    path=str(path),
                    line=line,
                    field=settings.doc_field,
                )
            step = _step(row.get(settings.step_field), path, line, settings.step_field)
            stats.add("rows")
            if doc_id in steps:
                stats.add("repeated_documents")
                step = min(step, steps[doc_id])
            steps[doc_id] = step
    return steps


class TableOrder:
    """First steps of whole documents, read from a table."""

    def __init__(self, settings: TableOrderSettings) -> None:
        self.settings = settings
        self.stats = StepStats("training_order", info={"backend": "table"})
        self.steps = read_table(settings, self.stats)

    def first_steps(
        self, spans: Sequence[WantedSpan], fetch: FetchDocuments
    ) -> dict[str, SpanStep]:
        """Each span gets its document's step (None for a document the table lacks)."""
        out = {}
        for span in spans:
            step = self.steps.get(span.doc_id)
            out[span.span_id] = SpanStep(span.span_id, span.doc_id, step, "table")
            self.stats.add("spans_found" if step is not None else "spans_not_found")
        return out
