"""Bad input through the readers and the real pipeline: a clear error naming the place, or a
counted skip in a stats file, and never a partial output that looks finished.

Malformed corpora and question files run through `FileCorpus` and through the luigi tasks that
read them; misbehaving OpenAI-compatible servers (errors, timeouts, garbage) answer the
pipeline's keyword extractor and judge. Pipeline runs stop at the task under test (no
embedding), so each takes a few seconds.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
import pytest
import zstandard
from support.openai_server import FakeOpenAIServer, Reply
from support.tests_support import luigi_config, run_luigi

from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.records import Decision
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.cache import LLMCache
from tipqa.sources.corpus.files import FileCorpus

NO_LOCK = {"log_level": "WARNING", "no_lock": "true"}
QUESTION = {"id": "q1", "text": "Who founded Vellmar Abbey?", "answer": "Ana Brisk", "aliases": []}


def doc(i: int, text: str | None = None) -> bytes:
    """One corpus line."""
    return orjson.dumps({"id": f"d{i}", "text": text or f"Document {i} about Vellmar."}) + b"\n"


def write_gzip(path: Path, lines: list[bytes]) -> Path:
    """A gzip file of `lines`."""
    path.write_bytes(gzip.compress(b"".join(lines)))
    return path


def write_zstd(path: Path, lines: list[bytes]) -> Path:
    """A zstandard file of `lines`."""
    path.write_bytes(zstandard.ZstdCompressor().compress(b"".join(lines)))
    return path


def truncate(path: Path) -> Path:
    """Cut a file to half its size, as an interrupted download would."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


LINES = [doc(i, f"Document {i} about Vellmar. " * 40) for i in range(400)]


# the readers


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_truncated_compressed_file_is_an_error_naming_it(tmp_path: Path, kind: str) -> None:
    writer = write_gzip if kind == "gz" else write_zstd
    path = truncate(writer(tmp_path / f"part.jsonl.{kind}", LINES))
    with pytest.raises(InputError, match="truncated or corrupt") as error:
        list(FileCorpus.of([path], progress=False))
    assert error.value.path == str(path)
    assert "complete lines" in str(error.value)


def test_bad_records_are_counted_skips(tmp_path: Path) -> None:
    path = tmp_path / "part.jsonl"
    path.write_bytes(
        b"".join(
            [
                doc(1),
                b'{"id": "d2", "text": "cut short\n',
                b"[1, 2, 3]\n",
                orjson.dumps({"id": "d4", "text": 42}) + b"\n",
                orjson.dumps({"id": ["d5"], "text": "an id that is a list"}) + b"\n",
                orjson.dumps({"id": "d6", "text": "  \n\t "}) + b"\n",
                orjson.dumps({"id": "d7"}) + b"\n",
                b'{"id": "d8", "text": "\xff\xfe not utf-8"}\n',
                doc(1, "the same id again"),
                doc(9),
            ]
        )
    )
    corpus = FileCorpus.of([path], progress=False)
    documents = list(corpus)
    assert [d.id for d in documents] == ["d1", "d8", "d1#2", "d9"]
    assert documents[1].text == "\ufffd\ufffd not utf-8", "bad bytes replaced, record kept"
    assert dict(corpus.stats.errors) == {
        "invalid_json": 1,
        "not_object": 1,
        "text_not_string": 1,
        "invalid_id": 1,
        "empty_text": 1,
        "missing_text": 1,
    }
    assert corpus.stats.counts["duplicate_ids"] == 1
    assert corpus.stats.counts["utf8_replaced"] == 1


def test_an_enormous_single_line_is_read_whole_and_indexed(tmp_path: Path) -> None:
    text = "Filler words of the enormous line. " * 250_000 + "Ana Brisk founded Vellmar Abbey."
    path = tmp_path / "big.jsonl"
    path.write_bytes(doc(1) + orjson.dumps({"id": "big", "text": text}))  # no final newline
    documents = list(FileCorpus.of([path], progress=False))
    assert [d.id for d in documents] == ["d1", "big"] and documents[1].text == text
    index = TantivyTokenIndex.at(tmp_path / "index", threads=1)
    index.build(iter(documents))
    found = index.search(["Vellmar Abbey"], ["Ana Brisk"], 5)
    assert found.total == 1 and found.hits[0].doc_id == "big"
    assert index.get(["big"])["big"].text == text


def test_max_chars_turns_an_enormous_line_into_a_counted_skip(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(doc(1) + orjson.dumps({"id": "big", "text": "word " * 100_000}) + b"\n")
    corpus = FileCorpus.of([path], progress=False, max_chars=10_000)
    assert [d.id for d in corpus] == ["d1"]
    assert corpus.stats.errors["too_long"] == 1


# the pipeline: corpus


def corpus_config(
    tmp_path: Path, corpus: Path, reader: dict[str, str] | None = None, **overrides: dict[str, str]
) -> Path:
    """A config whose corpus is the files under `corpus` (read with `reader`'s keys) and whose
    questions are one file."""
    questions = tmp_path / "questions.jsonl"
    if not questions.exists():
        questions.write_bytes(orjson.dumps(QUESTION) + b"\n")
    pools = {"dev": {"source": "tipqa-jsonl", "paths": [str(questions)]}}
    return luigi_config(
        tmp_path,
        core=NO_LOCK,
        questions={"pools": json.dumps(pools)},
        corpus={"source": "files", "paths": json.dumps([str(corpus)]), **(reader or {})},
        **overrides,
    )


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_the_index_task_fails_on_a_truncated_file_and_leaves_nothing_finished(
    tmp_path: Path, kind: str
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    writer = write_gzip if kind == "gz" else write_zstd
    writer(corpus / f"a.jsonl.{kind}", LINES)
    damaged = truncate(writer(corpus / f"b.jsonl.{kind}", LINES))
    result = run_luigi(corpus_config(tmp_path, corpus), "BuildTokenIndex")
    assert result.returncode == 30, result.stderr[-2000:]
    assert str(damaged) in result.stderr and "truncated or corrupt" in result.stderr
    run = tmp_path / "outputs" / "t"
    assert not (run / "index" / "token.stats.json").exists()
    assert not (run / "index" / "token").exists()
    assert not list((run / "index").glob(".token.building-*"))


def test_bad_records_are_counted_in_the_index_stats(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(
        doc(1)
        + b"not json at all\n"
        + orjson.dumps({"id": "d3", "text": None}) + b"\n"
        + orjson.dumps({"id": "d4", "text": ""}) + b"\n"
        + orjson.dumps({"id": {"x": 1}, "text": "odd id"}) + b"\n"
        + doc(1, "a duplicate id")
        + doc(7)
    )  # fmt: skip
    result = run_luigi(corpus_config(tmp_path, corpus), "BuildTokenIndex")
    assert result.returncode == 0, result.stderr[-2000:]
    stats = read_json(tmp_path / "outputs" / "t" / "index" / "token.stats.json")
    assert stats["errors"] == {
        "invalid_json": 1,
        "missing_text": 1,
        "empty_text": 1,
        "invalid_id": 1,
    }
    assert stats["counts"]["documents"] == 3, "the repeated id is kept under a derived id"
    assert stats["counts"]["duplicates"] == 0
    assert stats["counts"]["corpus.duplicate_ids"] == 1
    assert stats["info"]["corpus.renamed_ids"] == [f"d1#2 ({corpus / 'a.jsonl'}, line 6)"]
    assert f"id 'd1' repeats an earlier document's: indexed as 'd1#2' at {corpus}" in result.stderr
    index = TantivyTokenIndex.at(tmp_path / "outputs" / "t" / "index" / "token")
    assert index.get(["d1#2"])["d1#2"].text == "a duplicate id"


@pytest.mark.parametrize(("policy", "documents"), [("first", 2), ("refuse", None)])
def test_duplicate_ids_first_or_refuse(tmp_path: Path, policy: str, documents: int | None) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(doc(1) + doc(1, "a duplicate id") + doc(7))
    config = corpus_config(tmp_path, corpus, {"duplicate_ids": policy})
    result = run_luigi(config, "BuildTokenIndex")
    if documents is None:
        assert result.returncode == 30, result.stderr[-2000:]
        assert f"{corpus / 'a.jsonl'}, line 2: id 'd1' repeats an earlier document's" in (
            result.stderr
        )
        return
    assert result.returncode == 0, result.stderr[-2000:]
    stats = read_json(tmp_path / "outputs" / "t" / "index" / "token.stats.json")
    assert stats["counts"]["documents"] == documents
    assert stats["errors"] == {"duplicate_id": 1}


@pytest.mark.slow
def test_a_failed_index_build_leaves_no_finished_record_and_is_redone(tmp_path: Path) -> None:
    """The build that failed removed the last build's index; its record must go with it, so
    that going back to the last settings rebuilds the index, and the steps after it run."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(doc(1) + b"not json\n" + doc(2))
    index = tmp_path / "outputs" / "t" / "index"
    build = corpus_config(tmp_path, corpus, splits={"train_pool": ""})
    assert run_luigi(build, "CreateDataset").returncode == 0
    failed = run_luigi(corpus_config(tmp_path, corpus, {"strict": "true"}), "BuildTokenIndex")
    assert failed.returncode == 30 and "invalid JSON" in failed.stderr, failed.stderr[-2000:]
    assert not (index / "token.stats.json").exists()
    again = run_luigi(corpus_config(tmp_path, corpus, splits={"train_pool": ""}), "CreateDataset")
    assert again.returncode == 0, again.stderr[-2000:]
    assert (index / "token.stats.json").is_file() and (index / "token").is_dir()
    other_k1 = corpus_config(tmp_path, corpus, build={"k1": "5"})
    searched = run_luigi(other_k1, "TokenSearch", "--pool", "dev", "--shard", "0")
    assert searched.returncode == 0, searched.stderr[-2000:]


# the pipeline: questions


@pytest.mark.parametrize(
    ("line", "message", "field"),
    [
        (b'{"id": "q2", "text": "Who', "invalid JSON", None),
        (orjson.dumps({**QUESTION, "id": "q2", "aliases": "Ana"}), "list", "aliases"),
        (orjson.dumps({**QUESTION, "id": "q2", "text": "   "}), "empty question", "text"),
        (orjson.dumps({**QUESTION, "id": "q2", "answer": 7}), "empty answer", "answer"),
        (orjson.dumps(QUESTION), "duplicate question id", None),
        (b'{"id": "q2", "text": "caf\xe9?", "answer": "x"}', "not UTF-8 at byte 26 (0xe9)", None),
    ],
    ids=[
        "invalid-json",
        "aliases-not-a-list",
        "empty-text",
        "answer-not-a-string",
        "duplicate",
        "not-utf8",
    ],
)
def test_a_bad_question_file_fails_naming_file_and_line(
    tmp_path: Path, line: bytes, message: str, field: str | None
) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes(orjson.dumps(QUESTION) + b"\n" + line + b"\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(doc(1))
    result = run_luigi(corpus_config(tmp_path, corpus), "PrepareQuestions", "--pool", "dev")
    assert result.returncode == 30, result.stderr[-2000:]
    assert f"{questions}" in result.stderr and message in result.stderr
    assert "line 2" in result.stderr
    said = result.stderr[result.stderr.rindex("tipqa: ") :]
    assert "line 2" in said and "line 1" not in said, "one line number: the file's"
    assert "surrogates" not in said
    if field:
        assert f"field '{field}'" in result.stderr
    pool = tmp_path / "outputs" / "t" / "pools" / "dev"
    assert not (pool / "questions.stats.json").exists()
    assert not (pool / "questions.jsonl").exists()


# the pipeline: misbehaving LLM servers


def broken(reply: Reply):
    """A server rule that always answers `reply` (keyword prompts included)."""
    return lambda body, attempt, headers: reply


def healthy_keywords(reply: Reply):
    """Keyword prompts answered from the question's capitalised words; judge prompts: `reply`."""
    from tipqa.llm.keywords.rules import extract_keywords

    def rule(body, attempt, headers):
        content = body["messages"][-1]["content"]
        if "Passage:" not in content:
            return Reply(text=", ".join(extract_keywords(content)))
        return reply

    return rule


def llm_config(tmp_path: Path, server: FakeOpenAIServer, **judge: str) -> Path:
    """A small demo world whose keywords and judgments go to `server`."""
    endpoint = {"backend": "openai", "model": "x", "base_url": server.base_url}
    return luigi_config(
        tmp_path,
        core=NO_LOCK,
        build={"name": "t", "shard_size": "40", "k1": "5", "k2": "10"},
        demo={"documents": "300", "seed": "5", "files": "1"},
        keywords={**endpoint, "max_retries": "0"},
        judge={**endpoint, "max_retries": "0", "parse_retries": "1", **judge},
    )


def token_decisions(tmp_path: Path) -> list[Decision]:
    """The token-stage decisions of the only shard."""
    shard = tmp_path / "outputs" / "t" / "pools" / "dev" / "shards" / "shard-00000"
    return read_records(shard / "token_decisions.jsonl", Decision)


def judge_stats(tmp_path: Path) -> dict:
    """The token judge's stats file."""
    shard = tmp_path / "outputs" / "t" / "pools" / "dev" / "shards" / "shard-00000"
    return read_json(shard / "token_judge.stats.json")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reply", "judge", "error"),
    [
        (Reply(status=500, message="overloaded"), {}, "http_500"),
        (Reply(text="yes", delay=3.0), {"timeout": "0.3"}, "timeout"),
        (Reply(text="maybe, it depends"), {}, "unparseable"),
        (Reply(body=b"<html>not json</html>"), {}, "bad_response"),
    ],
    ids=["http-500", "timeout", "garbage", "not-json"],
)
@pytest.mark.needs("openai")
def test_a_misbehaving_judge_server_gives_undetermined_questions_and_counted_errors(
    tmp_path: Path, reply: Reply, judge: dict, error: str
) -> None:
    with FakeOpenAIServer(healthy_keywords(reply)) as server:
        result = run_luigi(
            llm_config(tmp_path, server, **judge), "TokenJudge", "--pool", "dev", "--shard", "0"
        )
    assert result.returncode == 0, result.stderr[-2000:]
    decisions = token_decisions(tmp_path)
    judged = [d for d in decisions if d.judged]
    assert judged and all(d.label == "undetermined" for d in judged)
    assert all(error in d.reason for d in judged)
    assert not [d for d in decisions if d.label in ("answerable", "discarded")]
    stats = judge_stats(tmp_path)
    assert sum(v for k, v in stats["errors"].items() if k.startswith("judgment_")) > 0
    assert stats["counts"]["outcome_undetermined"] == len(judged)
    import sqlite3

    backends = []
    for file in LLMCache(tmp_path / "outputs" / "t" / "llm-cache").files():
        with sqlite3.connect(file) as db:
            backends += [row[0] for row in db.execute("SELECT backend FROM llm_cache")]
    assert backends and all("judge" not in b for b in backends)  # only keyword answers stored


@pytest.mark.needs("openai")
@pytest.mark.slow
def test_a_failing_keyword_server_makes_every_question_undetermined(tmp_path: Path) -> None:
    with FakeOpenAIServer(broken(Reply(status=503, message="down"))) as server:
        result = run_luigi(
            llm_config(tmp_path, server), "TokenJudge", "--pool", "dev", "--shard", "0"
        )
    assert result.returncode == 0, result.stderr[-2000:]
    decisions = token_decisions(tmp_path)
    assert decisions and all(d.label == "undetermined" for d in decisions)
    assert all(
        "keyword extraction failed" in d.reason and "http_503" in d.reason for d in decisions
    )
    shard = tmp_path / "outputs" / "t" / "pools" / "dev" / "shards" / "shard-00000"
    stats = read_json(shard / "keywords.stats.json")
    assert stats["errors"]["extraction_failed"] == len(decisions)
    assert read_json(shard / "token_search.stats.json")["counts"]["skipped_keyword_error"] == len(
        decisions
    )
