"""The end-of-run summary, read from the partitions' and the splits' stats files."""

from __future__ import annotations

from pathlib import Path

from support.partition_fixtures import INFO, build_splits

from tipqa.builder.summary import summarize, write_summary
from tipqa.core.jsonl import read_json, write_json
from tipqa.dataset.corpus_reading import CorpusReading


def test_the_summary_says_what_the_corpus_reader_skipped(tmp_path: Path) -> None:
    reading = CorpusReading(300, {"invalid_utf8": 1, "invalid_json": 2}, duplicate_ids=4)
    run = build_splits(tmp_path / "read", build={**INFO, "corpus_reading": reading.to_dict()})
    text = write_summary(run, summarize(run, ["dev", "train"]))
    assert run.summary.read_text() == text
    assert (
        "- corpus: 300 documents read, 3 records skipped (invalid_json 2, invalid_utf8 1), "
        "4 duplicate ids\n"
    ) in text
    assert text.index("- split **") < text.index("- corpus: ")
    unrecorded = build_splits(tmp_path / "unrecorded")
    assert "- corpus:" not in summarize(unrecorded, ["dev", "train"])


def test_the_summary_counts_the_engines_the_shard_steps_started(tmp_path: Path) -> None:
    run = build_splits(tmp_path / "engines")
    assert "engines started" not in summarize(run, ["dev", "train"])
    for pool, starts in (("dev", 2), ("train", 3)):
        path = run.pool(pool).partition_stats
        stats = read_json(path)
        assert isinstance(stats, dict)
        stats["info"]["llm_engine_starts"] = starts
        write_json(path, stats)
    assert "- vLLM offline engines started: 5 (each loads the model)\n" in summarize(
        run, ["dev", "train"]
    )


def test_the_summary_names_the_confirming_judge_whose_answers_failed(tmp_path: Path) -> None:
    run = build_splits(tmp_path / "failed")
    path = run.pool("dev").partition_stats
    stats = read_json(path)
    assert isinstance(stats, dict)
    stats["counts"]["undetermined"] = 2
    stats["info"]["llm_failures"] = {"confirmation_connection": 2}
    write_json(path, stats)
    text = summarize(run, ["dev", "train"])
    assert "LLM calls that failed, by kind: confirmation_connection ×2." in text
    assert "The server of [judge.confirm] (the confirming judge) was unreachable" in text
    assert "To retry them" not in text and "of [judge] and [keywords]" not in text


def test_the_summary_counts_the_questions_left_without_keywords_with_a_hint(
    tmp_path: Path,
) -> None:
    run = build_splits(tmp_path / "keywords")
    assert "without keywords" not in summarize(run, ["dev", "train"])
    path = run.pool("dev").partition_stats
    stats = read_json(path)
    assert isinstance(stats, dict)
    stats["info"]["no_keywords"] = 73
    write_json(path, stats)
    text = summarize(run, ["dev", "train"])
    assert "73 without keywords" in text
    assert "an LLM keyword extractor" in text and "cased questions" in text


def test_the_summary_names_only_outputs_that_exist(tmp_path: Path) -> None:
    run = build_splits(tmp_path / "shown")
    text = summarize(run, ["dev", "train"])
    assert f"Splits: {run.splits}\n" in text
    assert str(run.hub) not in text and str(run.report) not in text
    assert "Hub-ready folder: missing (run the build again to make it)" in text
    (run.report).mkdir(parents=True)
    (run.report / "report.md").write_text("# report\n")
    run.hub.mkdir()
    text = summarize(run, ["dev", "train"])
    assert f"Hub-ready folder: {run.hub} (publish: " in text
    assert f"Report: {run.report / 'report.md'}\n" in text
