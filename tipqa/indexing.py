"""Index builds: the corpus into the token index, and its chunks into the vector index."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from tipqa.chunking import embed_chunks, iter_chunks, make_splitter
from tipqa.corpus.base import Corpus
from tipqa.embedders.base import Embedder
from tipqa.stats import StageStats
from tipqa.token_index.base import TokenIndex
from tipqa.vector_index.base import VectorIndex

CALIBRATION_DOCUMENTS = 200


def build_token_index(corpus: Corpus, index: TokenIndex, stats_path: Path) -> StageStats:
    """Index every document of `corpus`; write the stats (reader skips included)."""
    stats = StageStats("token_index")
    for name, value in index.build(iter(corpus)).items():
        stats.add(name, value)
    stats.merge(corpus.stats, prefix="corpus.")
    stats.write(stats_path)
    return stats


def build_vector_index(
    corpus: Corpus,
    embedder: Embedder,
    index: VectorIndex,
    stats_path: Path,
    overlap_tokens: int = 0,
) -> StageStats:
    """Chunk, embed and index every document of `corpus`; write the stats."""
    stats = StageStats("vector_index", info={"embedder": embedder.name})
    sample = [doc.text for doc in islice(iter(corpus), CALIBRATION_DOCUMENTS)]
    splitter = make_splitter(embedder, overlap_tokens=overlap_tokens, calibration_texts=sample)
    stats.info["chars_per_token"] = splitter.chars_per_token
    counts = embed_chunks(embedder, iter_chunks(iter(corpus), splitter, stats), index)
    for name, value in counts.items():
        stats.add(f"index.{name}", value)
    stats.merge(corpus.stats, prefix="corpus.")
    stats.write(stats_path)
    return stats
