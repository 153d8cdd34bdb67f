"""Chunking documents to the embedder's token limit, and embedding chunks into an index."""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import random
import tracemalloc
from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Document
from tipqa.core.stats import StepStats
from tipqa.indexes import chunking
from tipqa.indexes.chunking import (
    ChunkSplitter,
    calibrate_chars_per_token,
    chunk_document,
    embed_chunks,
    iter_chunks,
    make_splitter,
)
from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder
from tipqa.indexes.vector_index.faiss import FaissVectorIndex

DATA = Path(__file__).resolve().parents[2] / "data" / "chunking"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "corpus"


def load_articles() -> dict[str, str]:
    """The authored test articles, by name."""
    articles: dict[str, str] = {}
    for block in (DATA / "articles.txt").read_text().split("# ")[1:]:
        name, _, body = block.partition("\n")
        articles[name.strip()] = body.strip()
    return articles


ARTICLES = load_articles()


def count_words(texts: list[str]) -> list[int]:
    """A token counter: whitespace words plus two special tokens."""
    return [len(t.split()) + 2 for t in texts]


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    """The default offline embedder, loaded once for the module."""
    return SentenceTransformerEmbedder.of()


def test_paragraphs_that_fit_stay_together() -> None:
    text = ARTICLES["honeybees"]
    splitter = make_splitter(count_words, 1000, chars_per_token=4.0)
    assert splitter.split(text) == [text]
    paragraphs = text.split("\n\n")
    longest = max(len(p.split()) for p in paragraphs)
    ratio = max(len(p) / len(p.split()) for p in paragraphs)
    tight = make_splitter(count_words, longest + 2, chars_per_token=ratio)
    assert tight.split(text) == paragraphs
    loose = make_splitter(count_words, 2 * longest, chars_per_token=ratio).split(text)
    assert 1 < len(loose) < len(paragraphs)
    assert "\n\n".join(loose) == text


def test_long_paragraph_is_split_between_words() -> None:
    text = " ".join(ARTICLES[name].replace("\n\n", " ") for name in ("the danube", "bread"))
    splitter = make_splitter(count_words, 30, chars_per_token=5.0)
    chunks = splitter.split(text)
    assert len(chunks) > 3
    assert all(count <= 30 for count in count_words(chunks))
    assert " ".join(chunks).split() == text.split()


def test_overlong_character_chunks_are_split_again() -> None:
    # a hopeless ratio: 50 characters per token makes every character chunk far too long
    splitter = make_splitter(count_words, 20, chars_per_token=50.0)
    text = ARTICLES["lighthouses"]
    chunks = splitter.split(text)
    assert splitter.resplit > 0
    assert all(count <= 20 for count in count_words(chunks))
    assert " ".join(chunks).split() == text.split()


def test_overlap_repeats_words_across_chunks() -> None:
    text = ARTICLES["volcanoes"].replace("\n\n", " ")
    chunks = make_splitter(count_words, 40, overlap_tokens=8, chars_per_token=5.0).split(text)
    assert len(chunks) > 2
    for first, second in itertools.pairwise(chunks):
        assert first.split()[-1] in second.split()[:12]


def test_chunk_ids_and_empty_documents() -> None:
    splitter = make_splitter(count_words, 40, chars_per_token=5.0)
    chunks = chunk_document(Document(id="doc7", text=ARTICLES["the danube"]), splitter)
    assert [c.id for c in chunks] == [f"doc7#{i}" for i in range(len(chunks))]
    assert {c.doc_id for c in chunks} == {"doc7"}
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert chunk_document(Document(id="e", text=""), splitter) == []
    assert chunk_document(Document(id="w", text=" \n\n \t"), splitter) == []


def test_non_string_text_is_an_input_error() -> None:
    splitter = make_splitter(count_words, 40)
    with pytest.raises(InputError, match="'bad'"):
        chunk_document(Document(id="bad", text=None), splitter)  # type: ignore[arg-type]


def test_iter_chunks_streams_and_counts() -> None:
    docs = [Document(id=name, text=text) for name, text in ARTICLES.items()]
    docs.insert(2, Document(id="empty", text=""))
    stats = StepStats("chunk")
    splitter = make_splitter(count_words, 60, chars_per_token=5.0)
    stream = iter_chunks(iter(docs), splitter, stats)
    first = next(stream)
    assert first.id == "lighthouses#0"
    assert stats.counts["documents"] == 1
    chunks = [first, *stream]
    assert stats.counts["documents"] == len(docs)
    assert stats.counts["documents_empty"] == 1
    assert stats.counts["chunks"] == len(chunks)
    assert {c.doc_id for c in chunks} == set(ARTICLES)


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="max_tokens is required"):
        make_splitter(count_words)
    with pytest.raises(ConfigError, match="tokens for text"):
        make_splitter(count_words, 5)
    with pytest.raises(ConfigError, match="overlap_tokens"):
        make_splitter(count_words, 40, overlap_tokens=30)
    with pytest.raises(ConfigError, match="embedder or a token counter"):
        make_splitter(42)  # type: ignore[arg-type]


def test_calibration_measures_characters_per_token() -> None:
    texts = list(ARTICLES.values())
    ratio = calibrate_chars_per_token(count_words, texts)
    words = [len(w) + 1 for t in texts for w in t.split()]
    assert 0.7 * sum(words) / len(words) < ratio <= sum(words) / len(words) * 1.1
    with pytest.raises(InputError, match="calibrate"):
        calibrate_chars_per_token(count_words, ["", "short"])


def test_embedder_splitter_fits_the_model(embedder: SentenceTransformerEmbedder) -> None:
    splitter = make_splitter(embedder, calibration_texts=ARTICLES.values())
    assert isinstance(splitter, ChunkSplitter)
    assert splitter.max_tokens == embedder.max_seq_length
    assert splitter.overhead == 2
    assert 3.0 < splitter.chars_per_token < 6.0
    text = "\n\n".join(ARTICLES.values())
    chunks = splitter.split(text)
    counts = embedder.count_tokens(chunks)
    assert len(chunks) >= 4
    assert max(counts) <= embedder.max_seq_length
    assert sum(counts) / len(counts) > 0.5 * embedder.max_seq_length
    paragraphs = text.split("\n\n")
    assert all(any(p in chunk for chunk in chunks) for p in paragraphs)
    with pytest.raises(ConfigError, match="max_seq_length"):
        make_splitter(embedder, 512)


def test_prefix_tokens_are_reserved(embedder: SentenceTransformerEmbedder) -> None:
    prefixed = SentenceTransformerEmbedder.of(passage_prefix="passage: ")
    splitter = make_splitter(prefixed, 64)
    assert splitter.overhead == embedder.count_tokens(["passage:"])[0]
    chunks = splitter.split("\n\n".join(ARTICLES.values()))
    assert max(prefixed.count_tokens(chunks)) <= 64


def test_unbroken_text_and_numbers_fit(embedder: SentenceTransformerEmbedder) -> None:
    splitter = make_splitter(embedder, 128)
    text = "".join(str(n) for n in range(3000)) + " " + "é" * 3000
    chunks = splitter.split(text)
    assert max(embedder.count_tokens(chunks)) <= 128
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "")


def shared_corpus_texts() -> list[str]:
    """Real Wikipedia passages and web documents from the shared samples."""
    texts = [
        json.loads(line)["contents"]
        for line in (SHARED / "wikipedia-passages-1000.jsonl").open(encoding="utf-8")
    ]
    for path in sorted((SHARED / "web-cc").iterdir()):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            texts.extend(json.loads(line)["text"] for line in handle if line.strip())
    return texts


@pytest.mark.skipif(not SHARED.exists(), reason="shared corpus samples are absent")
def test_no_chunk_of_real_text_is_truncated(embedder: SentenceTransformerEmbedder) -> None:
    texts = shared_corpus_texts()
    splitter = make_splitter(embedder, calibration_texts=texts[:100])
    stats = StepStats("chunk")
    docs = (Document(id=str(i), text=t) for i, t in enumerate(texts))
    chunks = list(iter_chunks(docs, splitter, stats))
    counts = embedder.count_tokens([c.text for c in chunks])
    assert max(counts) <= embedder.max_seq_length
    assert stats.errors == {}
    # re-splitting is the exception: the calibrated character budget fits most chunks
    assert stats.counts["chunks_resplit"] < 0.05 * len(chunks)


def test_embed_chunks_into_an_index_and_resume(tmp_path, embedder) -> None:
    docs = [Document(id=name, text=text) for name, text in ARTICLES.items()]
    splitter = make_splitter(embedder, 96, calibration_texts=ARTICLES.values())
    chunks = list(iter_chunks(docs, splitter))
    index = FaissVectorIndex.at(tmp_path / "vi", embedder.dimension, kind="flat")
    stats = StepStats("vector_index")
    counts = embed_chunks(
        embedder, iter(chunks), index, batch_size=4, checkpoint_every=8, stats=stats
    )
    assert counts["chunks_embedded"] == len(chunks) == index.count()
    assert stats.counts["chunks"] == len(chunks)
    query = embedder.encode_queries(["Which moon of Jupiter is the largest in the solar system?"])
    hits = index.search(query, 3)[0]
    assert hits[0].doc_id == "moons of jupiter"
    assert "Ganymede" in hits[0].text
    index.close()

    again = FaissVectorIndex.at(tmp_path / "vi", embedder.dimension, kind="flat")
    counts = embed_chunks(embedder, iter(chunks), again, batch_size=5, progress=False)
    assert counts["chunks_present"] == len(chunks)
    assert counts["chunks_embedded"] == 0
    assert again.count() == len(chunks)


def one_line_text(characters: int, seed: int = 0) -> str:
    """A generated one-line text of about `characters` characters (words, no line break)."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    rng = random.Random(seed)
    return " ".join(rng.choice(words) for _ in range(characters // 6))


def test_a_long_one_line_document_is_chunked_a_segment_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chunking, "SEGMENT_CHARS", 50_000)
    text = one_line_text(1_000_000)
    splitter = make_splitter(count_words, 60, chars_per_token=5.0)
    tracemalloc.start()
    try:
        stream = chunking.iter_document_chunks(Document("huge", text), splitter)
        first = next(stream)
        _, after_first = tracemalloc.get_traced_memory()
        count = 1 + sum(1 for _ in stream)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first.id == "huge#0" and count > 3000
    assert after_first < 2 * len(text), "the first chunk comes before the whole text is split"
    assert peak < 4 * len(text), f"chunking took {peak:,} bytes for {len(text):,} characters"
    pieces = splitter.split(text)
    assert len(pieces) == count and all(n <= 60 for n in count_words(pieces))
    assert " ".join(pieces).split() == text.split(), "every word kept, in order"


def test_a_text_no_longer_than_a_segment_is_split_as_a_whole() -> None:
    text = one_line_text(20_000)
    assert list(chunking.text_segments(text, 20_000)) == [text]
    segments = list(chunking.text_segments(text, 3_000))
    assert "".join(segments) == text and all(len(s) <= 3_000 for s in segments)
    assert all(s.endswith(" ") for s in segments[:-1]), "cut after a word"


def test_max_document_chars_cuts_a_document_and_names_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    splitter = make_splitter(count_words, 60, chars_per_token=5.0, max_document_chars=2_000)
    stats = StepStats("chunk")
    long, short = Document("long-one", one_line_text(10_000)), Document("short", "A few words.")
    with caplog.at_level(logging.WARNING):
        chunks = list(iter_chunks([long, short], splitter, stats))
    cut = [c for c in chunks if c.doc_id == "long-one"]
    assert sum(len(c.text) for c in cut) <= 2_000 < sum(len(c.text) for c in cut) + 200
    assert stats.errors == {"document_cut": 1}
    said = f"document 'long-one' has {len(long.text):,} characters: only its first 2,000 are"
    assert said in caplog.text and "max_document_chars" in caplog.text
    assert "'short'" not in caplog.text
    with pytest.raises(ConfigError, match="max_document_chars"):
        make_splitter(count_words, 60, max_document_chars=-1)
