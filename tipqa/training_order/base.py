"""The training-order seam: when did the model first consume a piece of its corpus?

A `TrainingOrder` takes `WantedSpan`s (a corpus document, and optionally the judged text of
it that matters: a judge window or a vector chunk) and returns for each the earliest training
*step* by which it had been consumed, or None when it never was.

Steps count from 1, as checkpoint names do: batch b (from 0) is consumed during step b + 1,
so the checkpoint `step s` has consumed batches 0 .. s - 1, and a span with step <= s was in
it. Step 0 is the untrained model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tipqa.core.records import Record
from tipqa.core.registry import Registry
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments

Matched = Literal["window", "document", "table", "missing_document"]


def step_of_batch(batch: int) -> int:
    """The training step during which batch `batch` (from 0) was consumed."""
    return batch + 1


@dataclass
class WantedSpan(Record):
    """A document, or the part of it given by `text`, whose first training step is wanted."""

    span_id: str
    doc_id: str
    text: str | None = None


@dataclass
class SpanStep(Record):
    """When a wanted span was first consumed, and how that was established.

    `step` is None when it never was. `tokens` is the span's length in the model's tokens,
    `unlocated` how many of them were found in no training sequence (then `step` is when the
    located ones had all been consumed), `sequences` in how many training sequences it was
    found. `exact` is False when a few of its first or last tokens could not be placed for
    certain: they were placed among several equally possible sequences and the latest was
    taken (then `step` is an upper bound), or they are `unlocated` though a sequence begins
    with them (a short tail whose piece before was not found: it may be another document's
    end). `matched` says what was looked for: the span's own tokens ("window"), the whole
    document ("document": no text was given, or the text was not found in the document), a
    table entry ("table"), or nothing ("missing_document": the corpus has no document with
    that id).
    """

    span_id: str
    doc_id: str
    step: int | None
    matched: Matched
    tokens: int = 0
    unlocated: int = 0
    sequences: int = 0
    exact: bool = True


class TrainingOrder(Protocol):
    """Maps corpus documents (or parts of them) to the step at which they were consumed."""

    def first_steps(
        self, spans: Sequence[WantedSpan], fetch: FetchDocuments
    ) -> dict[str, SpanStep]:
        """The first step of every span, by span id (`fetch` gives the documents' text)."""
        ...


@runtime_checkable
class BuildsIndex(Protocol):
    """A training order that first indexes its stream (once per stream, reused by every build)."""

    def build_index(self) -> StepStats:
        """Index what of the stream is not indexed yet; return the pass's counts."""
        ...


@runtime_checkable
class OrderSettings(Protocol):
    """A training order's settings: what its raw inputs are, known without reading them."""

    def inputs(self) -> dict[str, Any]:
        """Its files by path, size and time (small ones by content), for fingerprints."""
        ...


@runtime_checkable
class IndexedOrderSettings(Protocol):
    """Settings of a training order that keeps an index of its stream (`BuildsIndex`)."""

    index_dir: str

    def files(self) -> list[Path]:
        """The stream's files."""
        ...

    def index_identity(self) -> dict[str, Any]:
        """What decides the index besides the stream's files."""
        ...


TRAINING_ORDERS: Registry[TrainingOrder] = Registry("training order")
TRAINING_ORDERS.add(
    "megatron",
    "tipqa.training_order.megatron:MegatronOrder",
    settings="tipqa.training_order.megatron:MegatronOrderSettings",
)
TRAINING_ORDERS.add(
    "table",
    "tipqa.training_order.table:TableOrder",
    settings="tipqa.training_order.table:TableOrderSettings",
)
