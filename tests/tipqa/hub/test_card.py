"""The dataset card: metadata, statistics, construction parameters, citation."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from support.partition_fixtures import CONFIG, INFO, build_splits, provenance

from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json
from tipqa.core.steps import Step
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.hub.card import PAPER_AUTHORS, PAPER_TITLE, size_category
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings
from tipqa.llm.prompts import load_template

HUB = HubSettings(repo_id="someone/tip-demo", license="apache-2.0")


def card(tmp_path: Path, **kwargs) -> str:
    settings = kwargs.pop("settings", HUB)
    run = build_splits(tmp_path, **kwargs)
    build_hub_folder(run, settings, StepRecord(Step.HUB_FOLDER, {}))
    return (run.hub / "README.md").read_text()


def table_row(text: str, first: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {first} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_size_categories() -> None:
    assert size_category(0) == "n<1K"
    assert size_category(999) == "n<1K"
    assert size_category(1_000) == "1K<n<10K"
    assert size_category(48_056) == "10K<n<100K"
    assert size_category(20_000_000) == "10M<n<100M"


def test_statistics_like_table_2(tmp_path: Path) -> None:
    text = card(tmp_path, per_label=3)
    info = read_json(tmp_path / "splits" / "stats.json")["info"]
    instances = str(info["splits"]["train"]["instances"])
    assert table_row(text, "Train") == ["Train", "train", "11", "5", "16", instances]
    assert table_row(text, "Validation")[2:4] == ["3", "3"]
    assert table_row(text, "Test")[:5] == ["Test", "dev", "9", "4", "13"]
    assert table_row(text, "dev") == ["dev", "16", "2", "1"]
    assert table_row(text, "train") == ["train", "27", "3", "2"]
    outcomes = table_row(text, "pool dev")
    assert outcomes[1:] == ["6", "3", "4", "2", "0", "1"]
    assert "3 answerable and 3 unanswerable questions of pool `train`" in text


def test_construction_parameters_and_citation(tmp_path: Path) -> None:
    corpus = tmp_path / "someone" / "pile" / "part-00.jsonl.zst"
    corpus.parent.mkdir(parents=True)
    corpus.write_bytes(b"")
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": "q1", "text": "Q?", "answer": "A", "aliases": ["A"]}\n')
    pool = {"source": "tipqa-jsonl", "paths": str(questions)}
    files = {"corpus": {"source": "files", "paths": str(corpus)}, "pool.dev": pool}
    sections = {**CONFIG, **files, "pool.train": pool}
    text = card(tmp_path / "run", build=provenance(sections))
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["license"] == "apache-2.0"
    assert meta["task_categories"] == ["question-answering"]
    assert meta["size_categories"] == ["n<1K"]
    assert table_row(text, "k1 (token-stage documents judged at most)")[1] == "20"
    assert table_row(text, "k2 (vector-stage chunks judged)")[1] == "3"
    keywords = table_row(text, "keyword extractor")[1]
    assert "gpt-4o-mini" in keywords and load_template("keywords-v1").sha256 in keywords
    assert "offline rules" in table_row(text, "relevance judge")[1]
    assert "all-MiniLM-L6-v2" in table_row(text, "embedder")[1]
    assert "0.1.0" in table_row(text, "tipqa version")[1]
    assert "part-00.jsonl.zst" in table_row(text, "corpus")[1] and str(tmp_path) not in text
    assert "Warning: the judge of this build was offline rules" in text
    assert PAPER_TITLE in text and all(author in text for author in PAPER_AUTHORS)
    bibtex = re.search(r"```bibtex\n(.*?)```", text, re.S).group(1)
    assert "title" in bibtex and "author" in bibtex
    assert not re.search(r"year|booktitle|journal", bibtex)
    assert 'load_dataset("someone/tip-demo", "questions")' in text


def test_short_validation_and_missing_train_pool_are_explained(tmp_path: Path) -> None:
    text = card(tmp_path / "short", per_label=100)
    assert "100 per label were asked for" in text
    assert "8 unanswerable questions" in text
    text = card(tmp_path / "test-only", train=False, settings=HubSettings())
    assert "No train pool was configured" in text
    assert 'load_dataset("<user>/<name>", "questions")' in text
    assert "license" not in yaml.safe_load(text.split("---\n")[1])


def test_the_card_says_what_the_corpus_reader_skipped(tmp_path: Path) -> None:
    reading = CorpusReading(300, {"invalid_json": 2, "invalid_utf8": 1}, duplicate_ids=4)
    text = card(tmp_path / "read", build={**INFO, "corpus_reading": reading.to_dict()})
    section = text.split("## Corpus records\n", 1)[1].split("\n## ", 1)[0]
    assert "The corpus reader read 300 documents and skipped 3 records, by kind:" in section
    assert table_row(section, "`invalid_json`") == ["`invalid_json`", "not valid JSON", "2"]
    assert table_row(section, "`invalid_utf8`")[1:] == ["bytes that are not UTF-8", "1"]
    assert "Duplicate ids (documents whose id an earlier document has): 4." in section
    assert text.index("## Statistics") < text.index("## Corpus records")
    assert "## Corpus records" not in card(tmp_path / "unrecorded")
