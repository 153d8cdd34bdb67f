"""A corpus of several file groups, each read with its own settings; plain-text files."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.errors import ConfigError, InputError
from tipqa.sources.corpus.files import FileCorpus, FileCorpusSettings, FileGroupSettings


def world(root: Path) -> dict[str, Path]:
    """Wikipedia-style passages (`contents`), Dolma-style records (`text`), two text files."""
    passages, web, evidence = root / "passages.jsonl", root / "web", root / "evidence"
    passages.write_bytes(orjson.dumps({"id": "p1", "contents": "Ana Brisk\nfounded it."}) + b"\n")
    web.mkdir()
    (web / "cc.jsonl").write_bytes(orjson.dumps({"id": "w1", "text": "A web page."}) + b"\n")
    for name, text in [("wikipedia/Ana_Brisk.txt", "Ana Brisk."), ("web/7/7_1.txt", "Caf\xe9")]:
        (evidence / name).parent.mkdir(parents=True, exist_ok=True)
        (evidence / name).write_bytes(text.encode("latin-1"))
    (evidence / ".hidden").write_text("editor state")
    return {"passages": passages, "web": web, "evidence": evidence}


def sections(paths: dict[str, Path], **corpus: str) -> dict[str, dict[str, str]]:
    """Config sections: one group per kind of file."""
    return {
        "corpus": {"source": "files", **corpus},
        "corpus.wiki": {"paths": str(paths["passages"]), "text_field": "contents"},
        "corpus.web": {"paths": str(paths["web"])},
        "corpus.evidence": {"paths": str(paths["evidence"]), "format": "text"},
    }


def test_each_group_is_read_with_its_own_settings(tmp_path: Path) -> None:
    config = read_config(sections(world(tmp_path), max_chars="1000"))
    corpus = FileCorpus(config.corpus.settings, progress=False)
    documents = {d.id: d.text for d in corpus}
    assert documents == {
        "p1": "Ana Brisk\nfounded it.",
        "w1": "A web page.",
        "web/7/7_1.txt": "Caf\ufffd",
        "wikipedia/Ana_Brisk.txt": "Ana Brisk.",
    }
    assert corpus.stats.counts["utf8_replaced"] == 1 and not corpus.stats.errors
    groups = dict(config.corpus.settings.groups)
    assert groups["web"].max_chars == 1000, "[corpus] reader keys are every group's defaults"
    assert groups["wiki"].text_field == "contents" and groups["web"].text_field == "text"


def test_groups_are_part_of_the_corpus_identity(tmp_path: Path) -> None:
    paths = world(tmp_path)
    first = Plan(read_config(sections(paths))).token_index.fingerprint
    changed = sections(paths)
    changed["corpus.web"]["bad_utf8"] = "skip"
    assert Plan(read_config(changed)).token_index.fingerprint != first
    (paths["evidence"] / "wikipedia" / "Another.txt").write_text("More evidence.")
    assert Plan(read_config(sections(paths))).token_index.fingerprint != first


def test_bad_utf8_skip_drops_the_record_and_counts_it(tmp_path: Path) -> None:
    path = tmp_path / "part.jsonl"
    path.write_bytes(b'{"id": "a", "text": "caf\xe9"}\n{"id": "b", "text": "fine"}\n')
    corpus = FileCorpus.of(path, bad_utf8="skip")
    assert [d.id for d in corpus] == ["b"] and corpus.stats.errors["invalid_utf8"] == 1


def test_duplicate_ids_are_counted_across_groups(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.jsonl").write_text(json.dumps({"id": "same", "text": name}) + "\n")
    groups = tuple((n, FileGroupSettings(paths=(str(tmp_path / n),))) for n in ("a", "b"))
    corpus = FileCorpus(FileCorpusSettings(groups=groups))
    assert [d.text for d in corpus] == ["a", "b"] and corpus.stats.counts["duplicate_ids"] == 1


def test_mistakes_in_groups_are_named(tmp_path: Path) -> None:
    paths = world(tmp_path)
    both = sections(paths)
    both["corpus.again"] = {"paths": str(paths["web"])}
    with pytest.raises(InputError, match="in two groups of the corpus: web and again"):
        read_config(both).corpus.settings.files()
    with pytest.raises(ConfigError, match=r"\[corpus.wiki\] a group of corpus files needs"):
        read_config({"corpus": {"source": "files"}, "corpus.wiki": {"text_field": "contents"}})
    with pytest.raises(ConfigError, match="needs \\[corpus\\] source = files"):
        read_config({"corpus.wiki": {"paths": str(paths["passages"])}})
    with pytest.raises(ConfigError, match=r"\[corpus.web\] unknown key 'text_feild'"):
        read_config(
            {"corpus": {"source": "files"}, "corpus.web": {"paths": "x", "text_feild": "t"}}
        )
    with pytest.raises(ConfigError, match=r"\[corpus\] unknown key 'groups'"):
        read_config({"corpus": {"source": "files", "paths": "x", "groups": "wiki"}})
    with pytest.raises(InputError, match="unsupported file type"):
        FileCorpus.of(paths["evidence"] / "wikipedia" / "Ana_Brisk.txt")
