"""The candidate vector stage: BM25 candidates from the token index, embedded once, exact k2."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.records import Document, Question
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.chunking import chunk_document
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.indexes.vector_index.candidates import CandidateSettings, CandidateVectorIndex
from tipqa.indexes.vector_index.faiss import FaissSettings, FaissVectorIndex

TOPICS = ["harbour", "lighthouse", "comet", "bookshop", "choir", "bridge", "museum", "captain"]


def corpus() -> list[Document]:
    """Forty documents of two to five sentences, each about two of eight topics."""
    documents = []
    for number in range(40):
        first, second = TOPICS[number % 8], TOPICS[(number * 3 + 1) % 8]
        sentences = [
            f"The {first} of town {number} was painted blue by the keeper.",
            f"People visited the {second} every summer to see the old {first}.",
            f"Record {number} says the {second} opened in year {1900 + number}.",
        ][: 2 + number % 2]
        documents.append(Document(f"d{number:02d}", " ".join(sentences)))
    return documents


class CountingEmbedder:
    """An embedder double whose tokens are words and whose vectors are seeded by the text.

    Every text it returned a vector for is appended to `log` (one line each), so that a test
    can count what was embedded, across processes too.
    """

    name = "words"
    dimension = 8
    max_seq_length = 24
    similarity = "cosine"

    def __init__(self, log: Path, kill_at_call: int | None = None) -> None:
        self.log = log
        self.kill_at_call = kill_at_call
        self.calls = 0

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(text.split()) + 2 for text in texts]

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.kill_at_call:
            os.kill(os.getpid(), signal.SIGKILL)
        vectors = self.encode_queries(texts)
        with open(self.log, "a") as out:
            out.writelines(text.replace("\n", " ") + "\n" for text in texts)
        return vectors


def questions() -> list[Question]:
    """Questions about the topics, and one whose words no document has."""
    asked = [
        Question(f"q{n}", f"Who painted the {topic} blue?", "the keeper", ["keeper"])
        for n, topic in enumerate(TOPICS[:5])
    ]
    return [*asked, Question("q-none", "Zyzzyva quux?", "x", ["x"])]


@pytest.fixture(scope="module")
def token_index(tmp_path_factory: pytest.TempPathFactory) -> TantivyTokenIndex:
    """The token index of the corpus."""
    index = TantivyTokenIndex.at(tmp_path_factory.mktemp("token") / "index", threads=1)
    index.build(iter(corpus()))
    return index


def stage(folder: Path, **settings: object) -> CandidateVectorIndex:
    """A candidate stage in `folder`."""
    return CandidateVectorIndex(CandidateSettings(**settings), IndexPlace(folder), 8)  # type: ignore[arg-type]


def prepared(folder: Path, embedder: CountingEmbedder, **settings: object) -> CandidateVectorIndex:
    """A candidate stage, calibrated on the corpus."""
    index = stage(folder, **settings)
    index.prepare(corpus()[:20], embedder, overlap_tokens=0)
    return index


def test_with_every_document_a_candidate_the_hits_are_the_full_index_s(
    tmp_path: Path, token_index: TantivyTokenIndex
) -> None:
    embedder = CountingEmbedder(tmp_path / "embedded.txt")
    candidates = prepared(tmp_path / "candidates", embedder, candidates=40)
    stats = StepStats("vector_search")
    found = candidates.search_questions(questions(), token_index, embedder, 4, stats)
    splitter = candidates.splitter(embedder)
    full = FaissVectorIndex(FaissSettings(kind="flat"), IndexPlace(tmp_path / "faiss"), 8)
    chunks = [chunk for document in corpus() for chunk in chunk_document(document, splitter)]
    full.add(chunks, embedder.encode_queries([c.text for c in chunks]))
    full.finish()
    asked = questions()[:-1]
    exact = full.search(embedder.encode_queries([q.text for q in asked]), 4)
    for mine, theirs in zip(found, exact, strict=False):
        assert [h.chunk_id for h in mine.hits] == [h.chunk_id for h in theirs]
        assert [h.score for h in mine.hits] == pytest.approx([h.score for h in theirs], abs=1e-5)
    assert found[-1].hits == [] and stats.counts["questions_without_candidates"] == 1


def test_chunks_are_embedded_once_and_reused_by_later_questions_and_runs(
    tmp_path: Path, token_index: TantivyTokenIndex
) -> None:
    log = tmp_path / "embedded.txt"
    embedder = CountingEmbedder(log)
    folder = tmp_path / "candidates"
    first = StepStats("vector_search")
    prepared(folder, embedder, candidates=5).search_questions(
        questions()[:3], token_index, embedder, 3, first
    )
    embedded = log.read_text().splitlines()
    assert first.counts["chunks_embedded"] == len(embedded) > 0
    again = StepStats("vector_search")
    reopened = stage(folder, candidates=5)
    reopened.search_questions(questions(), token_index, embedder, 3, again)
    total = log.read_text().splitlines()
    assert len(total) == reopened.count(), "every chunk embedded once, and kept"
    assert again.counts["documents_reused"] > 0 and again.counts["chunks_reused"] > 0
    assert again.counts["candidates"] <= 5 * len(questions())


def test_a_kill_during_embedding_loses_no_embedded_chunk(
    tmp_path: Path, token_index: TantivyTokenIndex
) -> None:
    log, folder = tmp_path / "embedded.txt", tmp_path / "candidates"
    prepared(folder, CountingEmbedder(log), candidates=40, batch_size=8)
    script = f"""
import sys
sys.path[:0] = {json.dumps([str(Path(__file__).parent), *sys.path])}
from pathlib import Path
from test_candidates import CountingEmbedder, questions, stage
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
embedder = CountingEmbedder(Path({str(log)!r}), kill_at_call=3)
index = TantivyTokenIndex.at({str(token_index.path)!r}, threads=1)
stage(Path({str(folder)!r}), candidates=40, batch_size=8).search_questions(
    questions(), index, embedder, 3, StepStats("vector_search"))
"""
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    before = log.read_text().splitlines()
    assert before, "two batches were embedded and stored before the kill"
    resumed = StepStats("vector_search")
    embedder = CountingEmbedder(log)
    again = stage(folder, candidates=40, batch_size=8)
    again.search_questions(questions(), token_index, embedder, 3, resumed)
    embedded = log.read_text().splitlines()
    assert len(embedded) == again.count(), "every chunk embedded once, and kept"
    assert resumed.counts["chunks_reused"] == len(before)


class ForgetsOne:
    """A token index whose stored documents lost one id (the corpus changed under it)."""

    def __init__(self, index: TantivyTokenIndex, lost: str) -> None:
        self.index = index
        self.lost = lost

    def rank_texts(self, texts: list[str], n: int) -> list[list[str]]:
        return self.index.rank_texts(texts, n)

    def get(self, doc_ids: list[str]) -> dict[str, Document]:
        return {k: v for k, v in self.index.get(doc_ids).items() if k != self.lost}


def test_a_candidate_that_cannot_be_read_is_a_counted_error_naming_it(
    tmp_path: Path, token_index: TantivyTokenIndex
) -> None:
    embedder = CountingEmbedder(tmp_path / "embedded.txt")
    lost = token_index.rank_texts([questions()[0].text], 1)[0][0]
    stats = StepStats("vector_search")
    found = prepared(tmp_path / "candidates", embedder, candidates=10).search_questions(
        questions()[:1],
        ForgetsOne(token_index, lost),
        embedder,
        3,
        stats,  # type: ignore[arg-type]
    )
    assert stats.errors["candidate_missing"] == 1
    assert stats.info["candidates_missing"] == [lost]
    assert found[0].hits and all(hit.doc_id != lost for hit in found[0].hits)


def test_the_candidate_count_reruns_vector_search_and_keeps_the_store() -> None:
    def plan(embedder: dict[str, str] | None = None, **vector: str) -> Plan:
        sections = {"vector_index": {"backend": "candidates", **vector}, "embedder": embedder or {}}
        return Plan(read_config(sections))

    base, more, other = plan(), plan(candidates="200"), plan({"passage_prefix": '"passage: "'})
    assert more.vector_index.fingerprint == base.vector_index.fingerprint, "the store is kept"
    search = [p.pool_step("dev", Step.VECTOR_SEARCH).fingerprint for p in (base, more)]
    assert search[0] != search[1]
    assert other.vector_index.fingerprint != base.vector_index.fingerprint, "re-embedded"
    assert Step.TOKEN_INDEX in base.pool_step("dev", Step.VECTOR_SEARCH).record.inputs


def test_a_shard_with_no_open_question_embeds_nothing(
    tmp_path: Path, token_index: TantivyTokenIndex
) -> None:
    embedder = CountingEmbedder(tmp_path / "embedded.txt")
    stats = StepStats("vector_search")
    found = prepared(tmp_path / "candidates", embedder).search_questions(
        [], token_index, embedder, 3, stats
    )
    assert found == [] and embedder.calls == 0 and not stats.counts


class BatchRecorder(CountingEmbedder):
    """The counting embedder, also recording how many passages each call embedded."""

    def __init__(self, log: Path) -> None:
        super().__init__(log)
        self.sizes: list[int] = []

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        self.sizes.append(len(texts))
        return super().encode_passages(texts)


def test_a_long_candidate_is_embedded_in_bounded_batches_with_a_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = Document("long", " ".join(["The harbour keeper painted it blue again."] * 400))
    index = TantivyTokenIndex.at(tmp_path / "token", threads=1)
    index.build(iter([*corpus(), long]))
    embedder = BatchRecorder(tmp_path / "embedded.txt")
    candidates = prepared(tmp_path / "candidates", embedder, candidates=41, batch_size=8)
    stats = StepStats("vector_search")
    candidates.search_questions(questions()[:1], index, embedder, 3, stats)
    chunks = chunk_document(long, candidates.splitter(embedder))
    total = int(stats.counts["chunks_embedded"])
    assert len(chunks) > 100 and total > len(chunks)
    assert max(embedder.sizes) == 8 and sum(embedder.sizes) == total
    assert candidates.count() == total, "every document stored, the long one whole"
    assert f"/{total} " in capsys.readouterr().err, "the bar has a total"


def test_a_cap_on_a_document_s_length_is_in_the_vector_index_fingerprint_when_set() -> None:
    def fingerprint(**vector: str) -> str:
        sections = {"vector_index": {"backend": "candidates", **vector}}
        return Plan(read_config(sections)).vector_index.fingerprint

    assert fingerprint(max_document_chars="0") == fingerprint()
    assert fingerprint(max_document_chars="100000") != fingerprint()


@pytest.mark.slow
def test_a_huge_one_line_candidate_shows_progress_and_stops_at_ctrl_c(tmp_path: Path) -> None:
    words = "harbour keeper painted the lighthouse blue every summer again".split()
    huge = " ".join(words[i % len(words)] for i in range(600_000))  # about 4 MB, one line
    index = TantivyTokenIndex.at(tmp_path / "token", threads=1)
    index.build(iter([*corpus(), Document("huge", huge)]))
    folder = tmp_path / "candidates"
    script = f"""
import sys
sys.path[:0] = {json.dumps([str(Path(__file__).parent), *sys.path])}
from pathlib import Path
from test_candidates import corpus, questions, stage
from tipqa.core.stats import StepStats
from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
embedder = SentenceTransformerEmbedder.of()
vectors = stage(Path({str(folder)!r}), candidates=41, batch_size=64)
vectors.dimension = embedder.dimension
vectors.prepare(corpus(), embedder, overlap_tokens=0)
index = TantivyTokenIndex.at({str(index.path)!r}, threads=1)
vectors.search_questions(questions()[:1], index, embedder, 3, StepStats("vector_search"))
"""
    run = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, bufsize=1
    )
    assert run.stderr is not None
    shown = ""
    deadline = time.monotonic() + 240
    while not re.search(r"embedding candidate chunks: +\d+%\|.*\| [1-9]\d*/\d+ \[", shown):
        assert run.poll() is None and time.monotonic() < deadline, shown[-2000:]
        shown += run.stderr.read(1)
    total = int(re.findall(r"\| \d+/(\d+) \[", shown)[-1])
    assert total > 1000, "the bar counts every chunk of the candidates, the huge one's too"
    stopped = time.monotonic()
    run.send_signal(signal.SIGINT)
    run.communicate(timeout=60)
    assert time.monotonic() - stopped < 5, "Ctrl-C stops the embedding within seconds"
    assert run.returncode in (-signal.SIGINT, 1)
