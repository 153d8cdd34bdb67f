"""The split protocol: test from one pool, a balanced validation sample and train from another."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from partition_fixtures import DEV, INFO, TRAIN, write_pool

from tipqa.errors import ConfigError, InputError
from tipqa.jsonl import read_json, read_records, write_records
from tipqa.llm.prompts import load_template
from tipqa.records import LabeledQuestion, VectorInstance
from tipqa.splits import (
    SplitProtocol,
    SplitsLayout,
    construction_parameters,
    make_splits,
    sample_validation,
)


@pytest.fixture
def pools(tmp_path: Path) -> tuple[Path, Path]:
    """A dev and a train partition with disjoint ids."""
    dev, train = tmp_path / "dev", tmp_path / "train"
    write_pool(dev, "dev", DEV)
    write_pool(train, "train", TRAIN)
    return dev, train


def ids(path: Path) -> list[str]:
    return [r.id for r in read_records(path, LabeledQuestion)]


def test_protocol_from_configuration() -> None:
    both = SplitProtocol.configured("dev", "train", 5, 1, ["dev", "train"])
    assert both.splits == ("train", "validation", "test")
    assert SplitProtocol.configured("dev", "train", 5, 1, ["dev"]).train_pool is None
    assert SplitProtocol.configured("dev", "", 5, 1, ["dev", "train"]).splits == ("test",)
    with pytest.raises(ConfigError, match=r"test_pool 'test'.*dev, train"):
        SplitProtocol.configured("test", "train", 5, 1, ["dev", "train"])
    with pytest.raises(ConfigError, match="both 'dev'"):
        SplitProtocol("dev", "dev")
    with pytest.raises(ConfigError, match="validation_per_label"):
        SplitProtocol("dev", "train", -1)


def test_splits_follow_the_protocol(pools: tuple[Path, Path], tmp_path: Path) -> None:
    dev, train = pools
    out = tmp_path / "splits"
    stats = make_splits(dev, train, SplitProtocol("dev", "train", 5, seed=3), out)
    layout = SplitsLayout(out)
    test_rows = read_records(layout.questions("test"), LabeledQuestion)
    validation = read_records(layout.questions("validation"), LabeledQuestion)
    train_rows = read_records(layout.questions("train"), LabeledQuestion)

    assert {r.label for r in test_rows} == {"answerable", "unanswerable"}
    assert len(test_rows) == DEV["answerable"] + DEV["unanswerable"]
    assert all(r.id.startswith("dev-") for r in test_rows)
    assert sum(r.label == "answerable" for r in validation) == 5
    assert sum(r.label == "unanswerable" for r in validation) == 5
    assert len(train_rows) == TRAIN["answerable"] + TRAIN["unanswerable"] - 10
    every = [r.id for rows in (test_rows, validation, train_rows) for r in rows]
    assert len(every) == len(set(every))
    assert not any(r.label in ("discarded", "undetermined") for r in [*validation, *train_rows])

    info = stats.info
    assert info["splits"]["test"]["answerable"] == 9
    assert info["splits"]["train"]["unanswerable"] == 3
    assert info["pools"]["train"]["discarded"] == 3
    assert info["pools"]["dev"]["undetermined"] == 1
    assert info["pools"]["dev"]["left_out"] == 3
    assert info["validation"]["short"] is False
    by_stage = info["splits"]["test"]["by_stage"]
    assert sum(by_stage.values()) == len(test_rows)
    assert by_stage["unanswerable_vector"] == 4
    assert read_json(layout.stats)["counts"]["validation.answerable"] == 5


def test_instances_go_with_their_questions(pools: tuple[Path, Path], tmp_path: Path) -> None:
    dev, train = pools
    out = tmp_path / "splits"
    stats = make_splits(dev, train, SplitProtocol("dev", "train", 4), out)
    layout = SplitsLayout(out)
    for split in ("train", "validation", "test"):
        questions = set(ids(layout.questions(split)))
        instances = read_records(layout.instances(split), VectorInstance)
        vector = {
            r.id for r in read_records(layout.questions(split), LabeledQuestion)
            if r.stage == "vector"
        }  # fmt: skip
        assert {i.question_id for i in instances} == vector <= questions
        assert len(instances) == 3 * len(vector) == stats.info["splits"][split]["instances"]
    relevance = stats.info["splits"]["test"]["instance_relevance"]
    assert relevance["unknown"] == 0 and relevance["yes"] == 3


def test_validation_sample_is_seeded(pools: tuple[Path, Path], tmp_path: Path) -> None:
    dev, train = pools
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        make_splits(dev, train, SplitProtocol("dev", "train", 4, seed), tmp_path / name)
        runs[name] = ids(SplitsLayout(tmp_path / name).questions("validation"))
    assert runs["a"] == runs["b"]
    assert runs["a"] != runs["c"]


def test_short_validation_stays_balanced_and_is_reported(
    pools: tuple[Path, Path], tmp_path: Path
) -> None:
    dev, train = pools
    stats = make_splits(dev, train, SplitProtocol("dev", "train", 1000), tmp_path / "s")
    validation = stats.info["validation"]
    assert validation["short"] is True
    assert validation["taken_per_label"] == TRAIN["unanswerable"]
    assert stats.info["splits"]["validation"]["answerable"] == TRAIN["unanswerable"]
    assert stats.info["splits"]["train"]["unanswerable"] == 0
    assert stats.counts["validation.short_per_label"] == 1000 - TRAIN["unanswerable"]


def test_sample_validation_with_nothing_on_one_side() -> None:
    chosen, info = sample_validation(["q1", "q2", "q3"], [], 3, 0)
    assert chosen == set() and info["taken_per_label"] == 0 and info["short"]
    chosen, info = sample_validation(["q1", "q2", "q3"], ["u1", "u2"], 0, 0)
    assert chosen == set() and not info["short"]


def test_without_a_train_pool_only_test_is_made(pools: tuple[Path, Path], tmp_path: Path) -> None:
    dev, _ = pools
    out = tmp_path / "splits"
    stats = make_splits(dev, None, SplitProtocol("dev"), out)
    assert list(stats.info["splits"]) == ["test"]
    assert stats.info["validation"] is None and list(stats.info["pools"]) == ["dev"]
    assert sorted(p.name for p in out.iterdir()) == ["stats.json", "test"]


def test_pools_sharing_questions_are_refused(tmp_path: Path) -> None:
    write_pool(tmp_path / "dev", "same", DEV)
    write_pool(tmp_path / "train", "same", TRAIN)
    with pytest.raises(InputError, match=r"'same-\w+-\d+' is in split 'test' and in split"):
        make_splits(
            tmp_path / "dev", tmp_path / "train", SplitProtocol("dev", "train", 2), tmp_path / "s"
        )
    assert not (tmp_path / "s" / "stats.json").exists()


def test_pools_built_otherwise_are_refused(tmp_path: Path) -> None:
    other = copy.deepcopy(INFO)
    other["build"]["k1"] = 100
    write_pool(tmp_path / "dev", "dev", DEV)
    write_pool(tmp_path / "train", "train", TRAIN, info=other)
    with pytest.raises(ConfigError, match=r"different k1: 20 vs 100"):
        make_splits(
            tmp_path / "dev", tmp_path / "train", SplitProtocol("dev", "train", 2), tmp_path / "s"
        )


def test_bad_partitions_name_the_file(pools: tuple[Path, Path], tmp_path: Path) -> None:
    dev, train = pools
    (train / "undetermined.jsonl").unlink()
    with pytest.raises(InputError, match=r"undetermined\.jsonl"):
        make_splits(dev, train, SplitProtocol("dev", "train", 2), tmp_path / "s")
    rows = read_records(dev / "unanswerable.jsonl", LabeledQuestion)
    write_records(dev / "answerable.jsonl", rows)
    with pytest.raises(InputError, match=r"answerable.jsonl.*labelled 'unanswerable'"):
        make_splits(dev, None, SplitProtocol("dev"), tmp_path / "s")


def test_construction_parameters_hash_the_llm_prompts() -> None:
    params = construction_parameters(INFO)
    assert params["k1"] == 20 and params["k2"] == 3
    assert params["keywords"]["prompt_sha256"] == load_template("keywords-v1").sha256
    assert params["keywords"]["model"] == "gpt-4o-mini"
    assert params["judge"] == {"backend": "rules", "max_words": 500, "max_windows": 16}
    assert params["embedder"]["model"] == "all-MiniLM-L6-v2"
