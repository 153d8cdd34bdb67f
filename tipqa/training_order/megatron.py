"""The `megatron` training order: a tokenized training stream and the model's tokenizer.

The stream is a Megatron / GPT-NeoX indexed dataset of training sequences in training order
(Pythia: `document.idx` + `document.bin` of the preshuffled deduplicated Pile, 146,432,000
sequences of 2,049 tokens, 1,024 per batch, so 143,000 steps), or the same stream as Parquet
rows of token ids with their batch index. One streaming pass builds the stream's anchor index
(`anchors`, resumable, parallel over ranges), which is kept and reused; each call then
tokenizes only the wanted documents and finds their spans through it (`locate`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.extras import TOKENIZERS, Extra
from tipqa.core.fingerprint import content_hash, files_stat
from tipqa.core.settings import Settings, knob, setting
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.sources.corpus.paths import expand_paths
from tipqa.training_order.anchors import build_anchor_index
from tipqa.training_order.base import SpanStep, WantedSpan
from tipqa.training_order.joins import Joins
from tipqa.training_order.locate import SpanFinder, span_steps
from tipqa.training_order.megatron_format import dataset_paths
from tipqa.training_order.streams import MegatronStream, ParquetStream, TokenStream
from tipqa.training_order.wanted import eod_id, load_tokenizer, prepare_documents

MB = 1 << 20
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MegatronOrderSettings(Settings):
    """Where the training stream and tokenizer are, the stream's shape, how to match."""

    path: str = setting(
        "", doc="the stream: a Megatron dataset prefix (`.idx` + `.bin`), or Parquet files"
    )
    layout: Literal["megatron", "parquet"] = setting("megatron", doc="the stream's format")
    tokenizer: str = setting("", doc="the model's `tokenizer.json`")
    seq_length: int = setting(2049, doc="tokens per training sequence (Pythia: 2049)")
    batch_size: int = setting(1024, doc="sequences per step (Pythia: 1024; megatron layout)")
    overlap: int = setting(1, doc="tokens consecutive samples share (Megatron: 1, else 0)")
    eod_token: str = setting("<|endoftext|>", doc="the end-of-document token")
    eod_id: int | None = setting(None, doc="its id (empty: looked up in the tokenizer)")
    match_tokens: int = setting(16, doc="tokens hashed after each document start")
    tokens_column: str = setting("token_ids", doc="Parquet column of the token ids")
    batch_column: str = setting("batch_idx", doc="Parquet column of the batch index")
    index_dir: str = knob("", doc="folder of the anchor index (empty: one per stream, shared)")
    workers: int = knob(1, doc="processes of the index pass")
    range_mb: int = knob(256, doc="MB of stream per unit of work (names the index's files)")
    block_mb: int = knob(16, doc="MB read at once")
    keys_per_round: int = knob(16_000_000, doc="wanted keys matched per pass over the index")
    progress: bool = knob(True, doc="progress bars")

    def extras(self) -> tuple[Extra, ...]:
        """The `tokenizers` package, which reads the model's tokenizer."""
        return (TOKENIZERS,)

    def files(self) -> list[Path]:
        """The stream's files (`.idx` and `.bin`, or the Parquet files), sorted."""
        if not self.path:
            raise ConfigError("[training_order] `path` (the training stream) is not set")
        if self.layout == "parquet":
            return expand_paths(self.path, accept=lambda p: p.suffix.lower() == ".parquet")
        found = list(dataset_paths(self.path))
        for file in found:
            if not file.is_file():
                raise InputError("no such file (the training stream)", path=str(file))
        return found

    def index_identity(self) -> dict[str, Any]:
        """What decides the stream's anchor index (besides its files)."""
        shape: dict[str, Any] = {"layout": self.layout, "seq_length": self.seq_length}
        if self.layout == "parquet":
            shape["columns"] = [self.tokens_column, self.batch_column]
        else:
            shape["batch_size"] = self.batch_size
        eod: dict[str, Any] = {"eod_id": self.eod_id}
        if self.eod_id is None:
            eod = {"eod_token": self.eod_token, "tokenizer_sha256": self._tokenizer_hash()}
        return {**shape, **eod, "match_tokens": self.match_tokens}

    def inputs(self) -> dict[str, Any]:
        """The stream's files by path, size and time; the tokenizer by content."""
        return {"stream": files_stat(self.files()), "tokenizer_sha256": self._tokenizer_hash()}

    def _tokenizer_hash(self) -> str:
        if not self.tokenizer:
            raise ConfigError(
                "[training_order] `tokenizer` (the model's tokenizer.json) is not set"
            )
        if not Path(self.tokenizer).is_file():
            raise InputError("no such file (the tokenizer)", path=self.tokenizer)
        return content_hash(self.tokenizer)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.overlap not in (0, 1):
            raise ValueError(f"overlap must be 0 or 1 (Megatron: 1), not {self.overlap}")
        if self.seq_length < 2 or self.batch_size < 1:
            raise ValueError("seq_length must be at least 2 and batch_size at least 1")
        if not 1 <= self.match_tokens <= self.seq_length:
            raise ValueError(f"match_tokens must be in 1 .. seq_length, not {self.match_tokens}")


class MegatronOrder:
    """First training steps of corpus spans from a tokenized training stream."""

    def __init__(self, settings: MegatronOrderSettings, index_dir: Path | None = None) -> None:
        if not settings.path:
            raise ConfigError("training order: `path` (the training stream) is not set")
        if not settings.tokenizer:
            raise ConfigError("training order: `tokenizer` (the model's tokenizer.json) is not set")
        folder = settings.index_dir or (str(index_dir) if index_dir else "")
        if not folder:
            raise ConfigError("training order: `index_dir` (for the anchor index) is not set")
        self.settings = settings
        self.index_dir = Path(folder)
        self.stats = StepStats("training_order", info={"backend": "megatron"})
        self._tokenizer = load_tokenizer(settings.tokenizer)
        self.eod = (
            settings.eod_id
            if settings.eod_id is not None
            else eod_id(self._tokenizer, settings.eod_token)
        )
        self.stream = self._open_stream()

    def _open_stream(self) -> TokenStream:
        s = self.settings
        if s.layout == "parquet":
            return ParquetStream(
                s.path, s.seq_length, tokens_column=s.tokens_column, batch_column=s.batch_column
            )
        return MegatronStream(s.path, s.seq_length, s.batch_size)

    @property
    def sequences_per_unit(self) -> int:
        """Sequences per work unit (from `range_mb`)."""
        itemsize = getattr(self.stream, "dtype", None)
        size = itemsize.itemsize if itemsize is not None else 2
        return max(1, self.settings.range_mb * MB // (self.settings.seq_length * size))

    def build_index(self) -> StepStats:
        """The one streaming pass: index every range of the stream not yet indexed."""
        s = self.settings
        block = max(1, s.block_mb * MB // (s.seq_length * 8))
        stats = build_anchor_index(
            self.stream,
            self.index_dir,
            width=s.match_tokens,
            eod=self.eod,
            workers=s.workers,
            sequences_per_unit=self.sequences_per_unit,
            block_sequences=block,
            progress=s.progress,
        )
        self.stats.info["index"] = dict(sorted(stats.counts.items()))
        return stats

    def first_steps(
        self, spans: Sequence[WantedSpan], fetch: FetchDocuments
    ) -> dict[str, SpanStep]:
        """The first step of each span (the index is built first where it is incomplete)."""
        s = self.settings
        self.build_index()
        doc_ids = sorted({span.doc_id for span in spans})
        documents = fetch(doc_ids)
        out = {
            span.span_id: SpanStep(span.span_id, span.doc_id, None, "missing_document")
            for span in spans
            if span.doc_id not in documents
        }
        self.stats.add("spans", len(spans))
        self.stats.add("documents", len(doc_ids))
        self.stats.error("missing_document", len({s.doc_id for s in out.values()}))
        wanted = prepare_documents(
            spans,
            documents,
            self._tokenizer,
            eod=self.eod,
            seq_length=s.seq_length,
            width=s.match_tokens,
        )
        finder = SpanFinder(
            self.stream,
            self.index_dir,
            width=s.match_tokens,
            eod=self.eod,
            overlap=s.overlap,
            sequences_per_unit=self.sequences_per_unit,
            keys_per_round=s.keys_per_round,
        )
        finder.find(wanted)
        self.stats.merge(finder.stats)
        unlocated = 0
        for step in span_steps(wanted, finder):
            out[step.span_id] = step
            unlocated += step.unlocated
            self.stats.add(f"matched_{step.matched}")
            self.stats.add("spans_found" if step.step is not None else "spans_not_found")
            self.stats.add("tokens", step.tokens)
            self.stats.add("tokens_unlocated", step.unlocated)
            self.stats.add("spans_upper_bound", int(not step.exact))
        self._check_overlap(finder.joins, unlocated)
        return out

    def _check_overlap(self, joins: Joins, unlocated: int) -> None:
        """Count the sample joins the pieces show; warn when they contradict `overlap`."""
        for name, value in joins.counts().items():
            self.stats.add(name, value)
        warning = joins.warning(self.settings.overlap, unlocated)
        if warning is not None:
            log.warning("%s", warning)
            warnings = self.stats.info.setdefault("warnings", [])
            if warning not in warnings:
                warnings.append(warning)
