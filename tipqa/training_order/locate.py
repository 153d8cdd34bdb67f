"""Where wanted spans were consumed: matching documents against a stream's anchor index.

**The stream.** A GPT-NeoX / Megatron training stream (Pythia's preshuffled data) is built by
concatenating the tokenized documents, each followed by an EOD token, in a shuffled order
(the epochs' documents shuffled together), cutting the concatenation into samples of
`seq_length` tokens that start every `seq_length - overlap` tokens (Megatron's samples are
2,049 tokens long and overlap by one), then *shuffling the samples* and training on the first
ones (Pythia's deduplicated run: 1.5 epochs). So a sequence is a contiguous piece of the
concatenation, but the next sequence in training order is usually an unrelated piece: a
document longer than a sequence is spread over sequences at unrelated steps (its end may be
read before its beginning), a document can occur once per epoch, and some of its pieces may
never be trained on. Whether the model "saw" a judged window is a question about its pieces.

**What is matched.** The tokens of each wanted span (a judged window or chunk; the whole
document when no text is given): its first step is the earliest step by which *every* token
of it had been in some training sequence, in its document's context. Matching only a
document's first tokens would date the document's first piece, which says nothing about a
window on its third page. A *piece* is a run of a sequence equal to the document's tokens
from an anchor to the sequence's end or the document's EOD (`tipqa.training_order.anchors`):

* a piece that begins the document follows an EOD: looked up among the EOD anchors by the
  hash of the document's first `match_tokens` tokens;
* any other piece begins a sequence: looked up among the sequence heads by the hash of the
  document's tokens from each offset from which a piece could overlap the span (the span's
  offsets and the `seq_length` before it). Keys are made in rounds of at most
  `keys_per_round`, each round one scan of the index, so memory stays bounded;
* a document start within the last `match_tokens` tokens of a sequence (an *opening* of
  fewer tokens than a key) is placed once a head piece of the same occurrence is found at
  offset o < match_tokens: it must be the truncated EOD anchor at position
  `seq_length - overlap - o` holding the document's first o + overlap tokens. If several
  sequences hold such an opening, the latest is taken and the span is marked not `exact`
  (its step is then an upper bound).

Every hit is confirmed on the stream's tokens, the whole piece: a sequence whose tokens
differ from the document's anywhere after the anchor is not a piece of it. Tokens in no
piece are `unlocated` (never trained on, or trained text that differs from the corpus copy);
a span's step is then when its located tokens had all been consumed, and a span with no
located token has no step. Where the pieces found before any short one is placed meet at a
sample join, they show whether the samples share a token there, a check of `overlap`
(`tipqa.training_order.joins`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tipqa.core.stats import StepStats
from tipqa.training_order.anchors import Anchors, UnitAnchors, iter_index
from tipqa.training_order.base import SpanStep, step_of_batch
from tipqa.training_order.joins import Covering, Joins, count_joins
from tipqa.training_order.streams import TokenStream
from tipqa.training_order.wanted import Keys, WantedDocument, make_keys


@dataclass(frozen=True)
class SpanCandidate:
    """A key hit: document `doc` from `offset` on may sit at (sequence, position)."""

    sequence: int
    position: int
    doc: int
    offset: int
    key_length: int
    batch: int


class SpanFinder:
    """Finds the wanted documents' pieces in one stream's anchor index."""

    def __init__(
        self,
        stream: TokenStream,
        folder: Path,
        *,
        width: int,
        eod: int,
        overlap: int,
        sequences_per_unit: int,
        keys_per_round: int = 16_000_000,
    ) -> None:
        self.stream = stream
        self.folder = folder
        self.width = width
        self.eod = eod
        self.overlap = overlap
        self.stride = stream.seq_length - overlap
        self.sequences_per_unit = sequences_per_unit
        self.keys_per_round = keys_per_round
        self.stats = StepStats("training_order_match")
        self.coverings: dict[int, list[Covering]] = defaultdict(list)
        self.ambiguous: dict[int, list[tuple[int, int]]] = defaultdict(list)
        self.joins = Joins()

    def find(self, documents: Sequence[WantedDocument]) -> dict[int, list[Covering]]:
        """Every confirmed piece of every document, by document index."""
        self.coverings = defaultdict(list)
        self.ambiguous = defaultdict(list)
        self._offset_cache: dict[int, np.ndarray] = {}
        reach = max(1, self.width - self.overlap)
        openings: set[tuple[int, int]] = set()
        tails: dict[tuple[int, int], list[Covering]] = defaultdict(list)
        for group in self._rounds(documents):
            self.stats.add("rounds")
            pieces = np.concatenate(
                [np.zeros((0, 2), dtype=np.int64)]
                + [np.column_stack((np.full(len(o), d), o)) for d in group
                   if len(o := self._offsets(documents[d]))]
            )  # fmt: skip
            self.stats.add("piece_keys", len(pieces))
            heads = self._keys(documents, pieces)
            starts = self._keys(documents, [(d, 0) for d in group])
            for unit in self._units():
                found = self._from_anchors(unit.complete, unit, starts)
                found += self._from_heads(unit, heads)
                for candidate, covering in self._confirm(documents, found):
                    doc, offset = candidate.doc, candidate.offset
                    if self._is_tail(documents[doc], covering):
                        tails[(doc, offset)].append(covering)
                        continue
                    self.coverings[doc].append(covering)
                    heading = covering.position == 0 and 0 < offset < reach
                    if heading and self._needs_opening(documents[doc], offset):
                        openings.add((doc, offset))
        self.joins = count_joins(documents, self.coverings, self.stream.seq_length)
        unplaced = self._place_tails(tails)
        if openings:
            self._place_openings(documents, sorted(openings))
        for doc, ranges in unplaced.items():
            for low, high in ranges:
                self.ambiguous[doc].extend(uncovered(low, high, self.coverings.get(doc, [])))
        return self.coverings

    def _is_tail(self, doc: WantedDocument, covering: Covering) -> bool:
        """A sequence head holding only the document's last few tokens (fewer than a key)."""
        short = covering.stop - covering.start < self.width
        return covering.position == 0 and covering.start > 0 and short

    def _place_tails(
        self, tails: dict[tuple[int, int], list[Covering]]
    ) -> dict[int, list[tuple[int, int]]]:
        """Keep the short tails that continue a piece found of the same occurrence.

        A few tokens and an EOD at a sequence's head are too short to tell this document
        from another that ends alike; the piece before a true tail begins `stride` tokens
        earlier (or is the document's start, `stride - offset` tokens into a sequence) and
        holds the tail's first `overlap` tokens too. A tail without one is left out and
        returned: spans over the tokens of it that no other piece holds are not exact.
        """
        unplaced: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for (doc, offset), options in sorted(tails.items()):
            found = self.coverings.get(doc, [])
            before = any(
                (c.position == 0 and c.start == offset - self.stride)
                or (c.start == 0 and c.position == self.stride - offset)
                for c in found
            )
            if not before:
                self.stats.add("tails_uncorroborated")
                unplaced[doc].append((offset, max(c.stop for c in options)))
                continue
            self.stats.add("tails_placed")
            self._choose(doc, options, shared=self.overlap)
        return unplaced

    def _choose(self, doc: int, options: list[Covering], shared: int = 0) -> None:
        """Keep the latest of equally possible coverings (an upper bound when they differ).

        When they differ, a covering's first `shared` tokens, which the piece that
        corroborates it holds, are left to that piece: only the rest is ambiguous.
        """
        latest = max(options, key=lambda c: (c.batch, c.sequence))
        if len({c.batch for c in options}) > 1:
            self.stats.add("fragments_ambiguous")
            held = min(shared, latest.stop - latest.start)
            latest = replace(latest, start=latest.start + held, position=latest.position + held)
            self.ambiguous[doc].append((latest.start, latest.stop))
        self.coverings[doc].append(latest)

    def _rounds(self, documents: Sequence[WantedDocument]) -> Iterator[list[int]]:
        """Documents in groups whose piece keys fit in `keys_per_round`."""
        group: list[int] = []
        size = 0
        for index, doc in enumerate(documents):
            count = len(self._offsets(doc))
            if group and size + count > self.keys_per_round:
                yield group
                group, size = [], 0
            group.append(index)
            size += count
        if group:
            yield group

    def _offsets(self, doc: WantedDocument) -> np.ndarray:
        """Offsets whose sequence-heading pieces could overlap a span or place its opening."""
        cached = self._offset_cache.get(id(doc))
        if cached is not None:
            return cached
        reach = self.stream.seq_length - 1
        near = max(1, self.width - self.overlap)
        bounds = sorted(
            (max(0, start - reach), min(max(stop, near if start < near else 0), doc.length))
            for _, start, stop in doc.spans
            if stop > start
        )
        merged: list[tuple[int, int]] = []
        for low, high in bounds:
            if merged and low <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
            elif high > low:
                merged.append((low, high))
        offsets = np.concatenate(
            [np.zeros(0, dtype=np.int64)] + [np.arange(a, b) for a, b in merged]
        )
        self._offset_cache[id(doc)] = offsets
        return offsets

    def _needs_opening(self, doc: WantedDocument, offset: int) -> bool:
        """Whether a span holds tokens before `offset` (only in an occurrence's opening)."""
        return any(start < offset and stop > start for _, start, stop in doc.spans)

    def _place_openings(
        self, documents: Sequence[WantedDocument], found: list[tuple[int, int]]
    ) -> None:
        """Find the short openings of occurrences whose next piece begins at offset o."""
        keys = self._keys(
            documents, [(d, 0) for d, _ in found], limits=[o + self.overlap for _, o in found]
        )
        placed: dict[tuple[int, int], list[Covering]] = defaultdict(list)
        for unit in self._units():
            candidates = self._from_anchors(unit.truncated, unit, keys, at_end=True)
            for candidate, covering in self._confirm(documents, candidates):
                placed[(candidate.doc, covering.stop)].append(covering)
        for (doc, _), options in sorted(placed.items()):
            self.stats.add("openings_placed")
            self._choose(doc, options)

    def _keys(
        self,
        documents: Sequence[WantedDocument],
        wanted: list[tuple[int, int]] | np.ndarray,
        limits: list[int] | None = None,
    ) -> Keys:
        return make_keys(documents, wanted, width=self.width, eod=self.eod, limits=limits)

    def _units(self) -> Iterator[UnitAnchors]:
        return iter_index(self.stream, self.folder, self.sequences_per_unit)

    def _from_anchors(
        self, anchors: Anchors, unit: UnitAnchors, keys: Keys, *, at_end: bool = False
    ) -> list[SpanCandidate]:
        """Key hits among EOD anchors; `at_end`: only windows that end the sequence there."""
        out = []
        for hit in keys.lookup(anchors.hashes):
            row, position = int(anchors.rows[hit]), int(anchors.positions[hit])
            for key in keys.owners(anchors.hashes[hit]):
                length = int(keys.lengths[key])
                if at_end and position + length != self.stream.seq_length:
                    continue
                doc, offset = int(keys.docs[key]), int(keys.offsets[key])
                batch = int(unit.batches[row])
                out.append(SpanCandidate(unit.first + row, position, doc, offset, length, batch))
        return out

    def _from_heads(self, unit: UnitAnchors, keys: Keys) -> list[SpanCandidate]:
        """Key hits among the sequence heads."""
        out = []
        for row in keys.lookup(unit.heads):
            batch = int(unit.batches[row])
            for key in keys.owners(unit.heads[row]):
                doc, offset = int(keys.docs[key]), int(keys.offsets[key])
                length = int(keys.lengths[key])
                out.append(SpanCandidate(unit.first + int(row), 0, doc, offset, length, batch))
        return out

    def _confirm(
        self, documents: Sequence[WantedDocument], candidates: list[SpanCandidate]
    ) -> list[tuple[SpanCandidate, Covering]]:
        """The candidates whose whole piece matches the document, with what each covers."""
        if not candidates:
            return []
        tokens = self.stream.sequences([c.sequence for c in candidates])
        out = []
        for candidate in candidates:
            self.stats.add("candidates")
            doc = documents[candidate.doc]
            sequence = tokens[candidate.sequence]
            available = min(len(sequence) - candidate.position, doc.length - candidate.offset)
            seen = sequence[candidate.position : candidate.position + available]
            if not np.array_equal(seen, doc.tokens(candidate.offset, candidate.offset + available)):
                self.stats.add("candidates_rejected")
                continue
            self.stats.add("pieces_confirmed")
            end = candidate.offset + available
            covering = Covering(
                candidate.offset, end, candidate.batch, candidate.sequence, candidate.position
            )
            out.append((candidate, covering))
        return out


def uncovered(low: int, high: int, coverings: list[Covering]) -> list[tuple[int, int]]:
    """The runs of tokens [low, high) that no covering holds."""
    gaps = []
    at = low
    for covering in sorted(coverings, key=lambda c: c.start):
        if covering.start >= high:
            break
        if covering.start > at:
            gaps.append((at, covering.start))
        at = max(at, covering.stop)
    if at < high:
        gaps.append((at, high))
    return gaps


def span_step(start: int, stop: int, coverings: list[Covering]) -> tuple[int | None, int, int]:
    """When tokens [start, stop) had all been consumed; how many never were; sequences used.

    When some tokens were never found, the step is when the found ones all had been.
    """
    seen = np.zeros(max(0, stop - start), dtype=bool)
    last_new: int | None = None
    sequences: set[int] = set()
    for covering in sorted(coverings, key=lambda c: (c.batch, c.sequence)):
        low, high = max(start, covering.start) - start, min(stop, covering.stop) - start
        if high <= low:
            continue
        sequences.add(covering.sequence)
        if not seen[low:high].all() and not seen.all():
            seen[low:high] = True
            last_new = covering.batch
    unlocated = int(seen.size - seen.sum())
    step = None if last_new is None else step_of_batch(last_new)
    return step, unlocated, len(sequences)


def span_steps(documents: Sequence[WantedDocument], finder: SpanFinder) -> list[SpanStep]:
    """The step of every span of every document from what `finder.find` found."""
    out = []
    for index, doc in enumerate(documents):
        for span_id, start, stop in doc.spans:
            step, unlocated, sequences = span_step(start, stop, finder.coverings.get(index, []))
            out.append(
                SpanStep(
                    span_id,
                    doc.doc_id,
                    step,
                    "document" if span_id in doc.by_document else "window",
                    tokens=stop - start,
                    unlocated=unlocated,
                    sequences=sequences,
                    exact=not any(
                        low < stop and start < high for low, high in finder.ambiguous.get(index, [])
                    ),
                )
            )
    return out
