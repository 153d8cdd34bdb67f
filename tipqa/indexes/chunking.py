"""Documents into embedder-sized chunks, and chunks into a vector index.

Chunks are cut by LangChain's RecursiveCharacterTextSplitter (paragraph, then line, then word,
then character, as the paper does) with a budget in characters calibrated to the embedder's
tokenizer, because measuring every candidate piece with the tokenizer is ~57x slower. Every chunk
is then counted with the real tokenizer (one batched call per document) and a chunk over the
token budget is split again with a proportionally smaller character budget, so no chunk is ever
truncated by the embedder.

A text longer than `SEGMENT_CHARS` (a one-line dump of megabytes) is cut first into segments of
at most that many characters, at a paragraph, line or word break where the segment's second half
has one, and each segment is split as above: its chunks come out while the rest waits, in memory
that does not grow with the text. `max_document_chars` ([vector_index]) caps what of a document
is chunked at all; a document cut that way is counted and named in a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Chunk, Document
from tipqa.core.stats import StepStats
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.vector_index.base import VectorIndex

TokenCounter = Callable[[list[str]], list[int]]

# Characters per token assumed when no calibration sample is given: the 1st-5th percentile of
# English Wikipedia and web text under the MiniLM (BERT WordPiece) tokenizer is 3.2-3.8.
DEFAULT_CHARS_PER_TOKEN = 3.5
CALIBRATION_QUANTILE = 0.1
MIN_TEXT_TOKENS = 8
_COUNT_BATCH = 256
_SHRINK = 0.95
SEGMENT_CHARS = 1_000_000
SEGMENT_BREAKS = ("\n\n", "\n", " ")
LONG_DOCUMENT_CHARS = 1_000_000
"""A document this long is named in a warning (its chunks take long to embed)."""
NAMED_DOCUMENTS = 5  # documents named in warnings per splitter; the others are counted

log = logging.getLogger(__name__)


def _token_overhead(count_tokens: TokenCounter) -> int:
    """Tokens the counter adds to any text (prefix and special tokens)."""
    return int(count_tokens([""])[0])


def _segments(text: str, size: int) -> Iterator[str]:
    """Consecutive pieces of about `size` characters, cut at whitespace."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        piece = text[start:end].strip()
        if piece:
            yield piece
        start = end


def text_segments(text: str, size: int | None = None) -> Iterator[str]:
    """`text` in consecutive segments of at most `size` characters (`SEGMENT_CHARS` by
    default; the whole text when it is no longer), each cut at the last paragraph, line or word
    break of its second half."""
    size = size or SEGMENT_CHARS
    start = 0
    while len(text) - start > size:
        end = start + size
        for mark in SEGMENT_BREAKS:
            found = text.rfind(mark, start + size // 2, end)
            if found > start:
                end = found + len(mark)
                break
        yield text[start:end]
        start = end
    yield text[start:]


def calibrate_chars_per_token(
    count_tokens: TokenCounter,
    texts: Iterable[str],
    *,
    quantile: float = CALIBRATION_QUANTILE,
    segment_chars: int = 1000,
) -> float:
    """A conservative characters-per-token ratio: a low quantile over segments of `texts`."""
    overhead = _token_overhead(count_tokens)
    segments = [s for text in texts for s in _segments(text, segment_chars) if len(s) >= 20]
    if not segments:
        raise InputError("no text of at least 20 characters to calibrate the chunk size on")
    ratios: list[float] = []
    for start in range(0, len(segments), _COUNT_BATCH):
        batch = segments[start : start + _COUNT_BATCH]
        counts = count_tokens(batch)
        ratios.extend(len(s) / max(1, n - overhead) for s, n in zip(batch, counts, strict=True))
    return float(np.quantile(np.asarray(ratios), quantile))


class ChunkSplitter:
    """Splits text into chunks of at most `max_tokens` tokens under a token counter."""

    def __init__(
        self,
        count_tokens: TokenCounter,
        max_tokens: int,
        *,
        overlap_tokens: int = 0,
        chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
        max_document_chars: int = 0,
    ) -> None:
        self.count_tokens = count_tokens
        self.max_tokens = max_tokens
        self.overhead = _token_overhead(count_tokens)
        self.text_tokens = max_tokens - self.overhead
        if self.text_tokens < MIN_TEXT_TOKENS:
            raise ConfigError(
                f"max_tokens={max_tokens} leaves {self.text_tokens} tokens for text after the "
                f"prefix and special tokens; need at least {MIN_TEXT_TOKENS}"
            )
        if not 0 <= overlap_tokens < self.text_tokens // 2:
            raise ConfigError(
                f"overlap_tokens must be in [0, {self.text_tokens // 2}), got {overlap_tokens}"
            )
        if chars_per_token <= 0:
            raise ConfigError(f"chars_per_token must be positive, got {chars_per_token}")
        if max_document_chars < 0:
            raise ConfigError(
                f"max_document_chars must be 0 (no cap) or more, got {max_document_chars}"
            )
        self.max_document_chars = max_document_chars
        self.named = 0
        self.chars_per_token = chars_per_token
        self.max_chars = max(1, int(self.text_tokens * chars_per_token))
        self.overlap_chars = int(overlap_tokens * chars_per_token)
        self.resplit = 0
        self.oversized = 0
        self._splitter = self._character_splitter(self.max_chars, self.overlap_chars)

    @staticmethod
    def _character_splitter(chunk_chars: int, overlap_chars: int) -> Any:
        """A RecursiveCharacterTextSplitter: paragraph, line, word, character."""
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(
            separators=["\n\n", "\n", " ", ""],
            chunk_size=chunk_chars,
            chunk_overlap=min(overlap_chars, chunk_chars // 2),
        )

    def _counts(self, pieces: list[str]) -> list[int]:
        """Token counts of pieces, in batches."""
        counts: list[int] = []
        for start in range(0, len(pieces), _COUNT_BATCH):
            counts.extend(self.count_tokens(pieces[start : start + _COUNT_BATCH]))
        return counts

    def split(self, text: str) -> list[str]:
        """The chunks of `text`, in order; none for empty or whitespace-only text."""
        return list(self.iter_split(text))

    def iter_split(self, text: str) -> Iterator[str]:
        """The chunks of `text`, in order, segment by segment (see the module docstring)."""
        for segment in text_segments(text):
            if segment.strip():
                yield from self._fit(self._splitter.split_text(segment))

    def capped(self, doc_id: str, text: str) -> tuple[str, bool]:
        """The part of a document's text that is chunked (`max_document_chars`), and whether
        it was cut; a cut or a very long document is named in a warning (the first few)."""
        cut = 0 < self.max_document_chars < len(text)
        if cut or len(text) > LONG_DOCUMENT_CHARS:
            self._warn(doc_id, len(text), cut)
        return (text[: self.max_document_chars], True) if cut else (text, False)

    def _warn(self, doc_id: str, length: int, cut: bool) -> None:
        """Name a long document in a warning, up to `NAMED_DOCUMENTS` of them."""
        self.named += 1
        if self.named > NAMED_DOCUMENTS:
            return
        if cut:
            log.warning(
                "document %r has %s characters: only its first %s are chunked and embedded "
                "([vector_index] max_document_chars)",
                doc_id,
                f"{length:,}",
                f"{self.max_document_chars:,}",
            )
        else:
            log.warning(
                "document %r has %s characters, about %s chunks to embed; "
                "[vector_index] max_document_chars caps what of a document is embedded",
                doc_id,
                f"{length:,}",
                f"{length // self.max_chars:,}",
            )

    def _fit(self, pieces: list[str]) -> list[str]:
        """Keep pieces within the token budget; split the others again, smaller."""
        out: list[str] = []
        for piece, count in zip(pieces, self._counts(pieces), strict=True):
            if count <= self.max_tokens:
                out.append(piece)
                continue
            chars = int(len(piece) * self.text_tokens / max(1, count - self.overhead) * _SHRINK)
            chars = min(chars, len(piece) - 1)
            if chars < 1:
                self.oversized += 1
                out.append(piece)
                continue
            self.resplit += 1
            splitter = self._character_splitter(chars, self.overlap_chars)
            out.extend(self._fit(splitter.split_text(piece)))
        return out


@runtime_checkable
class CountsTokens(Protocol):
    """An embedder's tokenizer side: token counts and the longest sequence it embeds."""

    max_seq_length: int

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Token counts of texts (prefix included)."""
        ...


def make_splitter(
    source: Embedder | TokenCounter,
    max_tokens: int | None = None,
    *,
    overlap_tokens: int = 0,
    chars_per_token: float | None = None,
    calibration_texts: Iterable[str] | None = None,
    max_document_chars: int = 0,
) -> ChunkSplitter:
    """A splitter sized to an embedder (its max_seq_length by default) or to a token counter.

    The character budget comes from `chars_per_token` if given, else is calibrated on
    `calibration_texts` (a sample of the corpus), else is `DEFAULT_CHARS_PER_TOKEN`.
    """
    if isinstance(source, CountsTokens):
        count_tokens: TokenCounter = source.count_tokens
        limit = int(source.max_seq_length)
        if max_tokens is None:
            max_tokens = limit
        elif max_tokens > limit:
            raise ConfigError(
                f"max_tokens={max_tokens} exceeds the embedder's max_seq_length={limit}; "
                "longer chunks would be truncated"
            )
    elif callable(source):
        count_tokens = source
        if max_tokens is None:
            raise ConfigError("max_tokens is required when splitting by a token counter")
    else:
        raise ConfigError(f"expected an embedder or a token counter, got {type(source).__name__}")
    if chars_per_token is None:
        chars_per_token = (
            DEFAULT_CHARS_PER_TOKEN
            if calibration_texts is None
            else calibrate_chars_per_token(count_tokens, calibration_texts)
        )
    return ChunkSplitter(
        count_tokens,
        max_tokens,
        overlap_tokens=overlap_tokens,
        chars_per_token=chars_per_token,
        max_document_chars=max_document_chars,
    )


def chunk_document(
    doc: Document, splitter: ChunkSplitter, stats: StepStats | None = None
) -> list[Chunk]:
    """The chunks of one document, with ids f"{doc_id}#{index}"; none for an empty document.

    A document longer than the splitter's `max_document_chars` is cut there (counted in
    `stats` as `document_cut`, and named in a warning).
    """
    return list(iter_document_chunks(doc, splitter, stats))


def iter_document_chunks(
    doc: Document, splitter: ChunkSplitter, stats: StepStats | None = None
) -> Iterator[Chunk]:
    """The chunks of one document as `chunk_document` gives them, one at a time."""
    if not isinstance(doc.text, str):
        raise InputError(
            f"document {doc.id!r}: text is {type(doc.text).__name__}, not a string", field="text"
        )
    text, cut = splitter.capped(doc.id, doc.text)
    if cut and stats is not None:
        stats.error("document_cut")
    for index, piece in enumerate(splitter.iter_split(text)):
        yield Chunk(id=f"{doc.id}#{index}", doc_id=doc.id, index=index, text=piece)


def iter_chunks(
    docs: Iterable[Document], splitter: ChunkSplitter, stats: StepStats | None = None
) -> Iterator[Chunk]:
    """Stream the chunks of a stream of documents, counting documents and chunks in `stats`."""
    for doc in docs:
        resplit, oversized = splitter.resplit, splitter.oversized
        if stats is not None:
            stats.add("documents")
        count = 0
        for chunk in iter_document_chunks(doc, splitter, stats):
            count += 1
            yield chunk
        if stats is not None:
            stats.add("chunks", count)
            stats.add("chunks_resplit", splitter.resplit - resplit)
            if not count:
                stats.add("documents_empty")
            if splitter.oversized > oversized:
                stats.error("chunk_over_token_limit", splitter.oversized - oversized)


def _batches(items: Iterable[Chunk], size: int) -> Iterator[list[Chunk]]:
    """Consecutive lists of at most `size` items."""
    batch: list[Chunk] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def embed_chunks(
    embedder: Embedder,
    chunks: Iterable[Chunk],
    index: VectorIndex,
    *,
    batch_size: int = 256,
    checkpoint_every: int = 0,
    stats: StepStats | None = None,
    progress: bool = True,
) -> dict[str, float]:
    """Embed a stream of chunks into `index` in bounded memory, then checkpoint the index.

    Chunks whose ids the index already holds are not embedded again, so a rerun after a crash
    resumes; `checkpoint_every` > 0 calls `index.checkpoint()` after that many newly added
    chunks. The index is made durable, not searchable (`finish` is the caller's, once every
    part of a build is in). Returns the counts, also added to `stats` if given.
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    counts: dict[str, float] = {"chunks_seen": 0, "chunks_embedded": 0, "chunks_present": 0}
    since_checkpoint = 0
    with tqdm(desc="embedding chunks", unit="chunk", disable=not progress) as bar:
        for batch in _batches(chunks, batch_size):
            counts["chunks_seen"] += len(batch)
            present = index.present_ids([c.id for c in batch])
            todo = [c for c in batch if c.id not in present]
            counts["chunks_present"] += len(batch) - len(todo)
            if todo:
                index.add(todo, embedder.encode_passages([c.text for c in todo]))
                counts["chunks_embedded"] += len(todo)
                since_checkpoint += len(todo)
            if checkpoint_every > 0 and since_checkpoint >= checkpoint_every:
                index.checkpoint()
                since_checkpoint = 0
            bar.update(len(batch))
    counts.update(index.checkpoint())
    if stats is not None:
        for name, value in counts.items():
            stats.add(name, value)
    return counts
