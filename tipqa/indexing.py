"""Index builds: the corpus into the token index, and its chunks into the vector index.

Backends that index in shards (Elasticsearch: one shard per corpus file, many workers at
once, a ledger of finished shards) are built shard by shard and then finalized; embedded
backends (tantivy, faiss) are built in one pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from tipqa.chunking import embed_chunks, iter_chunks, make_splitter
from tipqa.corpus.base import Corpus
from tipqa.embedders.base import Embedder
from tipqa.records import Document
from tipqa.stats import StageStats
from tipqa.token_index.base import TokenIndex
from tipqa.vector_index.base import VectorIndex

CALIBRATION_DOCUMENTS = 200
CHECKPOINT_CHUNKS = 50_000
WHOLE_CORPUS = "all"


def builds_in_shards(index: object) -> bool:
    """True for backends that record finished shards and are finalized afterwards."""
    return all(hasattr(index, name) for name in ("shard_done", "record_shard", "finalize"))


def corpus_shards(corpus: Corpus) -> list[str]:
    """The corpus's shards: its files, or the whole corpus when it has none."""
    files = getattr(corpus, "files", None)
    return [str(path) for path in files] if files else [WHOLE_CORPUS]


def shard_documents(corpus: Corpus, shard: str) -> Iterator[Document]:
    """The documents of one shard."""
    return iter(corpus) if shard == WHOLE_CORPUS else corpus.iter_file(shard)


def build_token_index(corpus: Corpus, index: TokenIndex, stats_path: Path) -> StageStats:
    """Index every document of `corpus` in one pass; write the stats (reader skips included)."""
    stats = StageStats("token_index")
    for name, value in index.build(iter(corpus)).items():
        stats.add(name, value)
    stats.merge(corpus.stats, prefix="corpus.")
    stats.write(stats_path)
    return stats


def index_token_shard(corpus: Corpus, shard: str, index: TokenIndex) -> dict[str, float]:
    """Index one shard of the corpus (the backend records it as done)."""
    return index.build_shard(shard_documents(corpus, shard), shard)


def _embed(
    documents: Iterator[Document],
    sample: list[str],
    embedder: Embedder,
    index: VectorIndex,
    stats: StageStats,
    overlap_tokens: int,
) -> None:
    """Chunk, embed and add `documents` to `index`, counting into `stats`."""
    splitter = make_splitter(embedder, overlap_tokens=overlap_tokens, calibration_texts=sample)
    stats.info["chars_per_token"] = splitter.chars_per_token
    chunks = iter_chunks(documents, splitter, stats)
    counts = embed_chunks(embedder, chunks, index, checkpoint_every=CHECKPOINT_CHUNKS)
    for name, value in counts.items():
        stats.add(f"index.{name}", value)


def build_vector_index(
    corpus: Corpus,
    embedder: Embedder,
    index: VectorIndex,
    stats_path: Path,
    overlap_tokens: int = 0,
) -> StageStats:
    """Chunk, embed and index every document of `corpus` in one pass; write the stats."""
    stats = StageStats("vector_index", info={"embedder": embedder.name})
    sample = [doc.text for doc in islice(iter(corpus), CALIBRATION_DOCUMENTS)]
    _embed(iter(corpus), sample, embedder, index, stats, overlap_tokens)
    stats.merge(corpus.stats, prefix="corpus.")
    stats.write(stats_path)
    return stats


def index_vector_shard(
    corpus: Corpus, shard: str, embedder: Embedder, index: VectorIndex, overlap_tokens: int = 0
) -> StageStats:
    """Chunk, embed and index one shard of the corpus, then record it as done."""
    stats = StageStats("vector_index_shard", info={"shard": shard, "embedder": embedder.name})
    sample = [doc.text for doc in islice(shard_documents(corpus, shard), CALIBRATION_DOCUMENTS)]
    _embed(shard_documents(corpus, shard), sample, embedder, index, stats, overlap_tokens)
    index.record_shard(shard, dict(stats.counts))
    return stats


def finalize_index(index: object, shards: list[str], stage: str, stats_path: Path) -> StageStats:
    """Finalize a sharded index once every shard is done; write the stats."""
    stats = StageStats(stage)
    for name, value in index.finalize(shards).items():
        stats.add(name, value)
    stats.write(stats_path)
    return stats
