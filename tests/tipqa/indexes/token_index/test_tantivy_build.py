"""The parallel tantivy build: worker processes, joined parts, duplicates, failures."""

from __future__ import annotations

import os
import random
import stat
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tipqa.core.errors import InputError
from tipqa.core.records import Document
from tipqa.core.text import tokenize
from tipqa.indexes.token_index import tantivy_build, tantivy_schema
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.indexes.token_index.tantivy_analysis import analyse, prepare, tokenization
from tipqa.indexes.token_index.tantivy_build import WorkerError

TRICKY: list[str] = orjson.loads(
    (Path(__file__).parents[3] / "data" / "token_index" / "tricky.json").read_bytes()
)
WORDS = "alpha beta gamma delta epsilon zeta eta theta".split()


def corpus(count: int, seed: int = 0) -> list[Document]:
    """Documents of random words, some ids repeated (the first text is the one indexed)."""
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        doc_id = f"d{rng.randrange(count * 2) if rng.random() < 0.1 else i + count * 2:06d}"
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 80)))
        docs.append(Document(doc_id, text, {"i": i}))
    return docs


def first_texts(docs: list[Document]) -> dict[str, Document]:
    kept: dict[str, Document] = {}
    for doc in docs:
        kept.setdefault(doc.id, doc)
    return kept


def built(path: Path, docs: list[Document], threads: int) -> TantivyTokenIndex:
    index = TantivyTokenIndex.at(path, threads=threads, heap_mb=64)
    index.build(docs)
    return index


def test_workers_build_the_index_one_writer_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tantivy_build, "BATCH_DOCS", 50)  # spread the stream over the workers
    docs = corpus(3000)
    one = built(tmp_path / "one", docs, 1)
    three = built(tmp_path / "three", docs, 3)
    kept = first_texts(docs)
    counts = three.info()["counts"]
    assert counts["workers"] == 3
    assert counts["documents"] == len(kept) == one.count() == three.count()
    assert counts["duplicates"] == len(docs) - len(kept) > 0
    assert counts["bytes"] == sum(len(d.text.encode()) for d in kept.values())
    assert {k: v for k, v in counts.items() if k != "seconds"} == {
        **{k: v for k, v in one.info()["counts"].items() if k != "seconds"},
        "workers": 3,
    }
    assert three.get(list(kept)) == kept
    for keywords, aliases in [([], ["alpha"]), (["beta gamma"], ["delta", "zeta eta"])]:
        for k in (1, 10, 5000):
            assert three.search(keywords, aliases, k) == one.search(keywords, aliases, k)
    leftovers = {p.name for p in three.path.iterdir()} - {"meta.json", "tipqa-index.json"}
    assert not [name for name in leftovers if name.startswith("part-") or "ledger" in name]


def test_a_duplicate_in_two_parts_keeps_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tantivy_build, "BATCH_DOCS", 1)
    docs = [Document("x", "first text"), Document("y", "other"), Document("x", "second text")]
    index = built(tmp_path / "i", docs, 2)
    assert index.get(["x"])["x"].text == "first text"
    assert index.search([], ["second"], 5).total == 0
    assert index.info()["counts"]["duplicates"] == 1


def failing(documents: list[Document], after: int) -> Iterator[Document]:
    """Yield `after` documents, then fail as a broken corpus file would."""
    yield from documents[:after]
    raise OSError("disk went away")


def test_a_broken_stream_leaves_nothing_and_stops_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tantivy_build, "BATCH_DOCS", 10)
    index = TantivyTokenIndex.at(tmp_path / "i", threads=2, heap_mb=64)
    with pytest.raises(OSError, match="disk went away"):
        index.build(failing(corpus(200), 150))
    assert list(tmp_path.iterdir()) == []


def test_a_failing_worker_names_its_part_and_leaves_nothing(tmp_path: Path) -> None:
    index = TantivyTokenIndex.at(tmp_path / "i", threads=2, heap_mb=64)
    docs = [*corpus(20), Document("bad", "lone surrogate \ud800 here")]
    with pytest.raises(WorkerError, match=r"(?s)part-000\d.*InputError: .*'bad'.*UTF-8"):
        index.build(docs)
    assert list(tmp_path.iterdir()) == []
    one = TantivyTokenIndex.at(tmp_path / "i", threads=1, heap_mb=64)
    with pytest.raises(InputError, match=r"'bad'.*UTF-8"):
        one.build(docs)
    assert list(tmp_path.iterdir()) == []


def test_workers_run_this_code_whatever_the_working_folder_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "checkout"
    (stale / "tipqa").mkdir(parents=True)
    (stale / "tipqa" / "__init__.py").write_text("raise ImportError('the stale copy ran')\n")
    monkeypatch.chdir(stale)  # where `python -m` would import `tipqa` from
    monkeypatch.setattr(tantivy_build, "BATCH_DOCS", 20)
    docs = corpus(200)
    index = built(tmp_path / "i", docs, 3)
    assert index.info()["counts"]["workers"] == 3
    assert index.count() == len(first_texts(docs))


def test_a_worker_that_dies_at_start_is_reported_with_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "orjson.py").write_text("raise RuntimeError('orjson is broken here')\n")
    monkeypatch.syspath_prepend(broken)  # this process has orjson already; its workers do not
    index = TantivyTokenIndex.at(tmp_path / "i", threads=2, heap_mb=64)
    with pytest.raises(WorkerError) as failed:
        index.build(corpus(500))
    message = str(failed.value)
    assert "its worker exited with code 1" in message
    assert "RuntimeError: orjson is broken here" in message
    assert "orjson.py" in message  # the worker's traceback, not only its last line
    assert [p.name for p in tmp_path.iterdir()] == ["broken"]  # the build folder is gone...
    logged = [r.getMessage() for r in caplog.records if r.name == tantivy_build.__name__]
    assert any("Traceback" in m and "orjson is broken here" in m for m in logged)  # ...not its log


def test_exit_status_names_signals() -> None:
    assert tantivy_build.exit_status(3) == "exited with code 3"
    assert tantivy_build.exit_status(-9) == "was killed by SIGKILL (out of memory?)"
    assert tantivy_build.exit_status(-15) == "was killed by SIGTERM"


@pytest.mark.parametrize("extra", [1, 2, 63, 64, 65, 127, 128, 1000, 123_457])
def test_repeats_terms_add_up_to_the_frequency(extra: int) -> None:
    terms = tantivy_schema.value_terms("tok", extra)
    assert sum(tantivy_schema.term_value(t, len("tok") + 1) for t in terms) == extra
    assert len(terms) <= 1 + extra.bit_length()


def test_repeats_field_is_the_same_for_ascii_and_other_text() -> None:
    text = "b a b c a b " * 30 + "d " * 70 + "e"
    tokens = tokenize(text)
    ascii_terms = tantivy_schema.repeat_terms_ascii(tantivy_schema.ascii_tokens(text.encode()))
    assert sorted(ascii_terms.split()) == sorted(tantivy_schema.repeat_terms(tokens).split())
    assert sorted(ascii_terms.split()) == ["a:59", "b:25", "b^0", "c:29", "d:5", "d^0"]


@pytest.mark.parametrize("text", [*TRICKY, "Plain ASCII, with " + "z" * 45 + " a long run."])
def test_analyse_equals_prepare_and_tokenize(text: str) -> None:
    mode = tokenization()
    prepared, repeats = analyse(text, mode.blank)
    assert tokenize(prepared) == tokenize(prepare(text, mode.blank)) == tokenize(text)
    counts = Counter(tokenize(text))
    values: Counter[str] = Counter()
    for term in repeats.split():
        for separator in (tantivy_schema.LOW, tantivy_schema.HIGH):
            token, found, _ = term.rpartition(separator)
            if found and token:
                values[token] += tantivy_schema.term_value(term, len(token) + 1)
                break
    assert values == Counter({t: n - 1 for t, n in counts.items() if n > 1})


def test_the_index_folder_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        index = built(tmp_path / "index", corpus(50), 1)
    finally:
        os.umask(old)
    assert stat.S_IMODE(index.path.stat().st_mode) == 0o775
    for path in index.path.rglob("*"):
        expected = 0o775 if path.is_dir() else 0o664
        assert stat.S_IMODE(path.stat().st_mode) & expected == expected, path
