"""What the corpus reader kept and skipped, as the token index build recorded it.

The token index build reads the whole corpus and writes the reader's counters into its stats
file: `corpus.documents`, `corpus.duplicate_ids` (documents whose id an earlier document has),
`corpus.utf8_replaced` (records whose bytes that are not UTF-8 were replaced), the first ids
derived for repeated ids (`corpus.renamed_ids` in its info: `d2#2 (file, line 3)`) and, as the
file's errors, the records skipped by kind (see `tipqa.sources.corpus.base.DocumentParser.skip`). A
pool's partition keeps them with its provenance (`tipqa.dataset.provenance.pool_provenance`), the
splits with their construction parameters; the end-of-run summary, the build report and the
dataset card show them from there, never from the current configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SKIP_MEANINGS = {
    "invalid_json": "not valid JSON",
    "invalid_utf8": "bytes that are not UTF-8",
    "not_object": "not a JSON object",
    "missing_text": "no text field",
    "text_not_string": "text that is not a string",
    "empty_text": "empty text",
    "too_long": "longer than `max_chars`",
    "invalid_id": "an id that is neither a non-empty string nor an integer",
    "duplicate_id": "a repeated id (later copies skipped: `duplicate_ids = first`)",
}
"""What each kind of skip means, for the card and the report."""


def _plural(count: int, noun: str) -> str:
    """`count` with the noun, plural unless the count is one ("1 record", "2 records")."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def _split(entry: str) -> tuple[str, str]:
    """A listed derived id ("d2#2 (a.jsonl, line 3)") as the id and the rest of its place."""
    id_, _, where = entry.partition(" (")
    return id_, where


@dataclass(frozen=True)
class CorpusReading:
    """The corpus reader's documents, skipped records by kind, and duplicate ids."""

    documents: int
    skipped: dict[str, int] = field(default_factory=dict)
    duplicate_ids: int = 0
    utf8_replaced: int = 0
    renamed_ids: tuple[str, ...] = ()

    @classmethod
    def from_index_stats(cls, stats: Mapping[str, Any]) -> CorpusReading:
        """The reading a token index build's stats file records (its errors are the skips)."""
        counts = stats.get("counts") or {}
        errors = stats.get("errors") or {}
        return cls(
            documents=int(counts.get("corpus.documents", 0)),
            skipped={kind: int(n) for kind, n in sorted(errors.items()) if n},
            duplicate_ids=int(counts.get("corpus.duplicate_ids", 0)),
            utf8_replaced=int(counts.get("corpus.utf8_replaced", 0)),
            renamed_ids=tuple((stats.get("info") or {}).get("corpus.renamed_ids", ())),
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorpusReading:
        """The reading of its `to_dict` form."""
        return cls(
            documents=int(data["documents"]),
            skipped={str(k): int(v) for k, v in data.get("skipped", {}).items()},
            duplicate_ids=int(data.get("duplicate_ids", 0)),
            utf8_replaced=int(data.get("utf8_replaced", 0)),
            renamed_ids=tuple(data.get("renamed_ids", ())),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in a partition's provenance and the splits' parameters."""
        return {
            "documents": self.documents,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_total": self.skipped_total,
            "duplicate_ids": self.duplicate_ids,
            "utf8_replaced": self.utf8_replaced,
            "renamed_ids": list(self.renamed_ids),
        }

    @property
    def skipped_total(self) -> int:
        """Records skipped, of every kind."""
        return sum(self.skipped.values())

    def summary_line(self) -> str:
        """One line: documents read, records skipped by kind, duplicate ids."""
        by_kind = ", ".join(f"{kind} {n:,}" for kind, n in sorted(self.skipped.items()))
        parts = [
            f"{_plural(self.documents, 'document')} read",
            f"{_plural(self.skipped_total, 'record')} skipped"
            + (f" ({by_kind})" if by_kind else ""),
            _plural(self.duplicate_ids, "duplicate id") + self._kept_as(),
        ]
        if self.utf8_replaced:
            parts.append(
                f"{_plural(self.utf8_replaced, 'record')} with bytes that are not UTF-8 replaced"
            )
        return ", ".join(parts)

    def _kept_as(self) -> str:
        """ " (kept as d2#2, ...)" when repeated ids were kept under derived ids."""
        if not self.renamed_ids:
            return ""
        ids = [_split(entry)[0] for entry in self.renamed_ids]
        more = ", ..." if len(ids) < self.duplicate_ids else ""
        return f" (kept as {', '.join(ids)}{more})"

    def markdown(self) -> str:
        """Paragraphs and a table of the skips by kind, for the card and the report."""
        skipped = self.skipped_total
        read = f"The corpus reader read {_plural(self.documents, 'document')} and skipped"
        parts = [f"{read} {_plural(skipped, 'record')}, by kind:" if skipped else f"{read} none."]
        if skipped:
            rows = [
                f"| `{kind}` | {SKIP_MEANINGS.get(kind, kind.replace('_', ' '))} | {n:,} |"
                for kind, n in sorted(self.skipped.items())
            ]
            parts.append("\n".join(["| Kind | Meaning | Records |", "|---|---|---|", *rows]))
        parts.append(
            f"Duplicate ids (documents whose id an earlier document has): {self.duplicate_ids:,}."
        )
        if self.renamed_ids:
            shown = len(self.renamed_ids)
            head = "They were" if shown == self.duplicate_ids else f"The first {shown} were"
            listed = "\n".join(
                f"- `{id_}` ({where}" for id_, where in map(_split, self.renamed_ids)
            )
            parts.append(f"{head} indexed under derived ids:\n\n{listed}")
        if self.utf8_replaced:
            parts.append(
                "Records kept with their bytes that are not UTF-8 replaced by U+FFFD: "
                f"{self.utf8_replaced:,}."
            )
        return "\n\n".join(parts)
