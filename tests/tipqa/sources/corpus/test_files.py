"""Tests of the local-file corpus reader."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from tipqa.core.errors import InputError
from tipqa.sources.corpus import CORPUS_READERS, Corpus
from tipqa.sources.corpus.files import FileCorpus

DATA = Path(__file__).parents[3] / "data" / "corpus"
PILE = DATA / "pile.jsonl"
SHARED = Path("/work/shared/data/corpus")


def jsonl(records: list[object]) -> bytes:
    """JSON lines of `records`."""
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


RECORDS = [
    {"id": "d1", "text": "Alpha beta gamma.", "meta": {"lang": "en", "n": 1}},
    {"id": "d2", "text": "Delta epsilon.", "meta": {"lang": "de", "n": 2}},
    {"id": "d3", "text": "Zeta eta theta.", "meta": {"lang": "en", "n": 3}},
]


def test_pile_format_derives_ids_and_keeps_meta() -> None:
    corpus = FileCorpus.of(PILE)
    docs = list(corpus)
    assert [d.id for d in docs] == ["pile.jsonl:1", "pile.jsonl:2", "pile.jsonl:3", "pile.jsonl:4"]
    assert docs[1].meta == {"meta": {"pile_set_name": "Wikipedia (en)"}}
    assert docs[0].text.startswith("The lighthouse keeper of Varnholm")
    assert corpus.stats.counts["documents"] == 4
    assert corpus.stats.counts["derived_ids"] == 4
    assert corpus.stats.counts["text_bytes"] == sum(len(d.text.encode()) for d in docs)
    assert not corpus.stats.errors
    assert corpus.files == [PILE]
    assert isinstance(corpus, Corpus)


def test_registry_builds_file_corpus_with_dotted_meta_field() -> None:
    values = {"paths": str(PILE), "meta_fields": "meta.pile_set_name"}
    corpus = CORPUS_READERS.create("files", CORPUS_READERS.parse("files", "corpus", values))
    docs = list(corpus)
    assert [d.meta for d in docs][:3] == [
        {"meta.pile_set_name": "Pile-CC"},
        {"meta.pile_set_name": "Wikipedia (en)"},
        {"meta.pile_set_name": "Github"},
    ]


def test_dotted_text_and_id_fields(tmp_path: Path) -> None:
    path = tmp_path / "nested.jsonl"
    path.write_bytes(
        jsonl([{"doc": {"body": "Hello there.", "key": 7}}, {"doc": {"body": "Bye."}}])
    )
    docs = list(FileCorpus.of(path, text_field="doc.body", id_field="doc.key", meta_fields=[]))
    assert [(d.id, d.text, d.meta) for d in docs] == [
        ("7", "Hello there.", {}),
        ("nested.jsonl:2", "Bye.", {}),
    ]


def test_id_field_none_always_derives(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl(RECORDS))
    docs = list(FileCorpus.of(path, id_field=None))
    assert [d.id for d in docs] == ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3"]
    assert docs[0].meta == {"id": "d1", "meta": {"lang": "en", "n": 1}}


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".json.gz", ".jsonl.zst", ".parquet", ".json"])
def test_formats_give_the_same_documents(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"part{suffix}"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(jsonl(RECORDS)))
    elif suffix.endswith(".zst"):
        path.write_bytes(zstandard.ZstdCompressor().compress(jsonl(RECORDS)))
    elif suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(RECORDS), path)
    else:
        path.write_bytes(jsonl(RECORDS))
    docs = list(FileCorpus.of(path, meta_fields=["meta.lang"]))
    assert [(d.id, d.text, d.meta) for d in docs] == [
        (r["id"], r["text"], {"meta.lang": r["meta"]["lang"]}) for r in RECORDS
    ]


def test_parquet_without_id_uses_row_number(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    table = pa.Table.from_pylist([{"body": f"Row {i} text.", "n": i} for i in range(2500)])
    pq.write_table(table, path, row_group_size=1000)
    corpus = FileCorpus.of(path, text_field="body")
    docs = list(corpus)
    assert len(docs) == 2500
    assert docs[0].id == "rows.parquet:1"
    assert docs[2499].id == "rows.parquet:2500" and docs[2499].text == "Row 2499 text."
    assert docs[10].meta == {"n": 10}


def test_parquet_missing_text_column_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([{"body": "x"}]), path)
    with pytest.raises(InputError, match=r"rows\.parquet.*field 'text'.*body"):
        list(FileCorpus.of(path))


def test_zstd_with_several_frames(tmp_path: Path) -> None:
    path = tmp_path / "multi.jsonl.zst"
    compressor = zstandard.ZstdCompressor()
    path.write_bytes(
        compressor.compress(jsonl(RECORDS[:2])) + compressor.compress(jsonl(RECORDS[2:]))
    )
    assert [d.id for d in FileCorpus.of(path)] == ["d1", "d2", "d3"]


def test_globs_directories_sorted_and_single_file_iteration(tmp_path: Path) -> None:
    for name, records in [("b.jsonl", RECORDS[1:]), ("a.jsonl.gz", RECORDS[:1])]:
        data = jsonl(records)
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (tmp_path / "notes.txt").write_text("not a corpus file")
    by_glob = FileCorpus.of(str(tmp_path / "*.json*"))
    assert [p.name for p in by_glob.files] == ["a.jsonl.gz", "b.jsonl"]
    assert [d.id for d in by_glob] == ["d1", "d2", "d3"]
    by_dir = FileCorpus.of(tmp_path)
    assert by_dir.files == by_glob.files
    assert [d.id for d in by_dir.iter_file(by_dir.files[1])] == ["d2", "d3"]
    assert by_dir.stats.counts["files"] == 1


def test_pattern_matching_nothing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="matches no file"):
        FileCorpus.of(str(tmp_path / "*.jsonl"))
    with pytest.raises(InputError, match="no such file"):
        FileCorpus.of(tmp_path / "absent.jsonl")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="unsupported file type"):
        FileCorpus.of(tmp_path / "x.csv")


BAD_LINES = [
    b'{"id": "ok1", "text": "Fine text."}',
    b'{"id": "bad-json", "text": "unterminated',
    b'["a", "list"]',
    b'{"id": "no-text"}',
    b'{"id": "num-text", "text": 42}',
    b'{"id": "latin1", "text": "caf\xe9"}',
    b'{"id": "empty", "text": "   \\n "}',
    b'{"id": {"a": 1}, "text": "id is an object"}',
    b"",
    b'{"id": "ok1", "text": "Same id again."}',
    b'{"id": "ok2", "text": "Fine too."}',
]


def test_bad_records_are_counted_skips(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(BAD_LINES) + b"\n")
    corpus = FileCorpus.of(path, bad_utf8="skip")
    with caplog.at_level(logging.WARNING):
        docs = list(corpus)
    assert [d.id for d in docs] == ["ok1", "ok1#2", "ok2"]
    assert dict(corpus.stats.errors) == {
        "invalid_json": 1,
        "not_object": 1,
        "missing_text": 1,
        "text_not_string": 1,
        "invalid_utf8": 1,
        "empty_text": 1,
        "invalid_id": 1,
    }
    assert corpus.stats.counts["duplicate_ids"] == 1
    assert corpus.stats.counts["blank_lines"] == 1
    assert "bad.jsonl, line 2" in caplog.text and "invalid_json" in caplog.text
    assert "bad.jsonl, line 6" in caplog.text


@pytest.mark.parametrize(
    ("line", "kind", "field"),
    [
        (2, "invalid JSON", None),
        (4, "no text field", "text"),
        (6, "not UTF-8", None),
        (7, "empty text", "text"),
        (5, "must be a string", "text"),
    ],
)
def test_strict_raises_naming_file_line_and_field(
    tmp_path: Path, line: int, kind: str, field: str | None
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(BAD_LINES[0] + b"\n" + BAD_LINES[line - 1] + b"\n")
    with pytest.raises(InputError, match=kind) as info:
        list(FileCorpus.of(path, strict=True))
    assert info.value.path == str(path)
    assert info.value.line == 2
    assert info.value.field == field


def test_max_chars_skips_huge_documents(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(jsonl([{"id": "s", "text": "short"}, {"id": "h", "text": "word " * 1000}]))
    corpus = FileCorpus.of(path, max_chars=100)
    assert [d.id for d in corpus] == ["s"]
    assert corpus.stats.errors["too_long"] == 1


def test_wrong_text_field_is_an_error_not_an_empty_corpus(tmp_path: Path) -> None:
    path = tmp_path / "passages.jsonl"
    path.write_bytes(jsonl([{"id": "1", "contents": "A passage."}] * 3))
    with pytest.raises(InputError, match="none of the 3 records") as info:
        list(FileCorpus.of(path))
    assert info.value.field == "text"


def test_truncated_gzip_names_file_and_lines(tmp_path: Path) -> None:
    records = [{"id": str(i), "text": f"Document number {i} " * 20} for i in range(3000)]
    data = gzip.compress(jsonl(records))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    corpus = FileCorpus.of(path)
    seen = []
    with pytest.raises(
        InputError, match=r"cut\.jsonl\.gz.*truncated or corrupt gzip file after \d+"
    ) as info:
        seen.extend(corpus)
    assert 0 < len(seen) < 3000
    assert f"after {len(seen)} complete lines" in str(info.value)


def test_truncated_zstd_names_file_and_lines(tmp_path: Path) -> None:
    records = [{"id": str(i), "text": f"Document number {i} " * 20} for i in range(3000)]
    data = zstandard.ZstdCompressor().compress(jsonl(records))
    path = tmp_path / "cut.jsonl.zst"
    path.write_bytes(data[: len(data) // 2])
    seen = []
    with pytest.raises(
        InputError, match=r"cut\.jsonl\.zst.*truncated or corrupt zstd file"
    ) as info:
        seen.extend(FileCorpus.of(path))
    assert 0 < len(seen) < 3000
    assert f"after {len(seen)} complete lines" in str(info.value)


def test_corrupt_zstd_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl.zst"
    path.write_bytes(b"this is not zstandard data at all" * 10)
    with pytest.raises(InputError, match=r"junk\.jsonl\.zst"):
        list(FileCorpus.of(path))


def test_new_pass_resets_stats_and_duplicate_check() -> None:
    corpus = FileCorpus.of(PILE)
    list(corpus)
    list(corpus)
    assert corpus.stats.counts["documents"] == 4
    assert corpus.stats.counts["duplicate_ids"] == 0


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared sample data absent")
def test_real_wikipedia_passages() -> None:
    corpus = FileCorpus.of(SHARED / "wikipedia-passages-1000.jsonl", text_field="contents")
    docs = list(corpus)
    assert len(docs) == 1000
    assert len({d.id for d in docs}) == 1000
    assert not corpus.stats.errors
    assert all(d.text.strip() for d in docs)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared sample data absent")
def test_real_dolma_web_files() -> None:
    corpus = FileCorpus.of(
        str(SHARED / "web-cc" / "*"), meta_fields=["source", "metadata.language"]
    )
    docs = list(corpus)
    assert [p.name for p in corpus.files] == [
        "cc_en_head-0091.jsonl",
        "cc_en_head-0174.jsonl",
        "provided_documents_000.json.gz",
    ]
    assert len(docs) == 30
    assert all(d.id.startswith("http") for d in docs)
    assert not corpus.stats.errors
    assert corpus.stats.counts["files"] == 3


def test_the_progress_bar_counts_bytes_against_the_files_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_bytes(jsonl(RECORDS * 200))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(jsonl(RECORDS)))
    total = sum(path.stat().st_size for path in tmp_path.iterdir())
    docs = list(FileCorpus.of(sorted(tmp_path.iterdir()), progress=True, id_field=None))
    assert len(docs) == 603
    shown = capsys.readouterr().err
    assert f"corpus: 100%|██████████| {total / 1000:.1f}k/{total / 1000:.1f}k " in shown
    assert "documents=603" in shown
