"""The SQLite LLM cache: keys, persistence, concurrent writers, bad files."""

from __future__ import annotations

import multiprocessing
import pickle
import sqlite3

import pytest

from tipqa.errors import InputError
from tipqa.llm.cache import LLMCache, cache_key


def test_key_depends_on_every_part_but_not_on_order() -> None:
    identity = {"model": "m", "prompt_sha256": "abc", "t": 1}
    base = cache_key("judge:openai", identity, {"question": "q", "answer": "a"})
    same = cache_key(
        "judge:openai", dict(reversed(identity.items())), {"answer": "a", "question": "q"}
    )
    assert base == same and len(base) == 64
    variants = [
        cache_key("keywords:openai", identity, {"question": "q", "answer": "a"}),
        cache_key("judge:openai", {**identity, "model": "n"}, {"question": "q", "answer": "a"}),
        cache_key(
            "judge:openai", {**identity, "prompt_sha256": "abd"}, {"question": "q", "answer": "a"}
        ),
        cache_key("judge:openai", identity, {"question": "q", "answer": "b"}),
        cache_key("judge:openai", {**identity, "t": 2}, {"question": "q", "answer": "a"}),
        cache_key(
            "judge:openai", {"model": "m", "prompt_sha256": "abc"}, {"question": "q", "answer": "a"}
        ),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_a_cache_of_another_schema_is_refused_with_its_path(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(InputError, match=r"schema 1, this version reads 2.*move the file away"):
        LLMCache(path)


def test_round_trip_and_persistence(tmp_path) -> None:
    path = tmp_path / "sub" / "llm.sqlite"
    with LLMCache(path) as cache:
        assert cache.get("k1") is None
        cache.put("k1", "judge", {"label": "yes", "p_yes": 0.75})
        assert cache.put_many([("k2", "judge", {"label": "no"}), ("k3", "kw", {"x": [1]})]) == 2
        cache.put("k1", "judge", {"label": "no"})
    with LLMCache(path) as cache:
        assert len(cache) == 3
        assert cache.get_many(["k1", "k3", "missing", "k1"]) == {
            "k1": {"label": "no"},
            "k3": {"x": [1]},
        }
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_many_keys_are_looked_up_in_chunks(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put_many([(f"k{i}", "b", {"i": i}) for i in range(1200)])
    found = cache.get_many(f"k{i}" for i in range(0, 2400, 2))
    assert len(found) == 600 and found["k1198"] == {"i": 1198}


def test_unreadable_entry_is_a_miss(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    cache.put("good", "b", {"v": 1})
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO llm_cache VALUES ('bad', 'b', x'7b6e6f', 0)")
        raw.execute("INSERT INTO llm_cache VALUES ('list', 'b', '[1]', 0)")
    assert cache.get_many(["good", "bad", "list"]) == {"good": {"v": 1}}


def test_a_file_that_is_not_sqlite_names_the_path(tmp_path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are not the pages of a database\n" * 200)
    with pytest.raises(InputError, match=r"notes\.sqlite"):
        LLMCache(path)


def _writer(cache: LLMCache, worker: int, count: int) -> None:
    for i in range(count):
        cache.put(f"w{worker}-{i}", "test", {"worker": worker, "i": i})


def test_several_processes_write_at_once(tmp_path) -> None:
    cache = LLMCache(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(cache, w, 150)) for w in range(4)]
    for process in workers:
        process.start()
    _writer(cache, 99, 150)
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert len(cache) == 5 * 150
    assert cache.get("w3-149") == {"worker": 3, "i": 149}


def test_pickles_by_path(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put("k", "b", {"v": 1})
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.path == cache.path and copy.get("k") == {"v": 1}
