"""The LLM cache's store: persistence, one file per writer, older files, bad files."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sqlite3

import pytest

from tipqa.core.errors import InputError
from tipqa.llm.cache import _CREATE, SCHEMA, LLMCache


def test_a_cache_of_another_schema_is_refused_with_its_path(tmp_path) -> None:
    member = tmp_path / "cache" / "otherhost-7.sqlite"
    member.parent.mkdir()
    with sqlite3.connect(member) as conn:
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(InputError, match=r"otherhost-7.*schema 1, this version reads 2.*move"):
        LLMCache(tmp_path / "cache")


def test_round_trip_and_persistence_in_the_writers_own_file(tmp_path) -> None:
    path = tmp_path / "sub" / "llm"
    with LLMCache(path) as cache:
        assert cache.get("k1") is None and cache.files() == []
        cache.put("k1", "judge", {"label": "yes", "p_yes": 0.75})
        assert cache.put_many([("k2", "judge", {"label": "no"}), ("k3", "kw", {"x": [1]})]) == 2
        cache.put("k1", "judge", {"label": "no"})
    with LLMCache(path) as cache:
        assert len(cache) == 3
        assert cache.get_many(["k1", "k3", "missing", "k1"]) == {
            "k1": {"label": "no"},
            "k3": {"x": [1]},
        }
        [file] = cache.files()
    assert file.name.endswith(f"-{os.getpid()}.sqlite")
    mode = sqlite3.connect(file).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "delete", "no WAL: its shared memory does not work across hosts"


def test_an_older_single_file_cache_is_read_and_never_written(tmp_path) -> None:
    old = tmp_path / "llm-cache.sqlite"
    with sqlite3.connect(old) as conn:
        conn.execute(_CREATE)
        conn.execute(f"PRAGMA user_version = {SCHEMA}")
        conn.execute("INSERT INTO llm_cache VALUES ('old', 'b', '{\"v\": 1}', 0)")
    before = old.read_bytes()
    cache = LLMCache(tmp_path / "llm-cache")
    cache.put("new", "b", {"v": 2})
    assert cache.get_many(["old", "new"]) == {"old": {"v": 1}, "new": {"v": 2}}
    assert old.read_bytes() == before


def test_many_keys_are_looked_up_in_chunks(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    cache.put_many([(f"k{i}", "b", {"i": i}) for i in range(1200)])
    found = cache.get_many(f"k{i}" for i in range(0, 2400, 2))
    assert len(found) == 600 and found["k1198"] == {"i": 1198}


def test_unreadable_entry_is_a_miss(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    cache.put("good", "b", {"v": 1})
    [file] = cache.files()
    with sqlite3.connect(file) as raw:
        raw.execute("INSERT INTO llm_cache VALUES ('bad', 'b', x'7b6e6f', 0)")
        raw.execute("INSERT INTO llm_cache VALUES ('list', 'b', '[1]', 0)")
    assert cache.get_many(["good", "bad", "list"]) == {"good": {"v": 1}}


def test_a_file_where_the_folder_belongs_names_the_path(tmp_path) -> None:
    path = tmp_path / "notes"
    path.write_text("these are not the pages of a database\n" * 200)
    with pytest.raises(InputError, match=r"notes: LLM cache: a folder"):
        LLMCache(path)


def test_an_older_file_that_is_not_sqlite_names_the_path(tmp_path) -> None:
    (tmp_path / "c.sqlite").write_text("these are not the pages of a database\n" * 200)
    with pytest.raises(InputError, match=r"c\.sqlite: LLM cache: not a usable SQLite file"):
        LLMCache(tmp_path / "c")


def _writer(cache: LLMCache, worker: int, count: int) -> None:
    for i in range(count):
        cache.put(f"w{worker}-{i}", "test", {"worker": worker, "i": i})
        if i % 50 == 49:
            cache.get_many(f"w{other}-{i}" for other in range(5))


def test_several_processes_write_at_once_each_to_its_own_file(tmp_path) -> None:
    cache = LLMCache(tmp_path / "shared")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(cache, w, 150)) for w in range(4)]
    for process in workers:
        process.start()
    _writer(cache, 4, 150)
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    files = cache.files()
    assert len(files) == 5
    for file in files:
        assert sqlite3.connect(file).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    reread = LLMCache(tmp_path / "shared")
    assert len(reread) == 5 * 150
    found = reread.get_many(f"w{w}-{i}" for w in range(5) for i in range(150))
    assert found == {f"w{w}-{i}": {"worker": w, "i": i} for w in range(5) for i in range(150)}


def test_pickles_by_path(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    cache.put("k", "b", {"v": 1})
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.path == cache.path and copy.get("k") == {"v": 1}
