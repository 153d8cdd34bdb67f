"""The explorer's data files: every question, its details in judged order, texts recomputed,
stored once, whole or as excerpts; the audit's and another build's views; the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.explorer_support import (
    Page,
    Sizes,
    confirm,
    synthetic_run,
    write_audit,
    write_judge_audit,
)

from tipqa.audit.compare import compare_runs
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_records, write_json, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Judgment, LabeledQuestion
from tipqa.report.__main__ import run as main_run
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.store import EXCERPTS, utf16
from tipqa.report.explorer.write import write_explorer


def test_every_question_and_its_evidence_are_written(tmp_path: Path) -> None:
    run, fetch = synthetic_run(tmp_path / "run", 250)
    counts = write_explorer(run, TextSource(fetch, texts=2), tmp_path / "page")
    page = Page(tmp_path / "page")
    assert {p.name for p in (tmp_path / "page").iterdir()} >= {"index.html", "explorer.js"}
    assert page.meta["questions"] == len(page.rows) == len(page.pages) == 250
    assert counts["questions"] == 250
    assert page.rows[0][:3] == ["q000000", "Who is Person000000 Example? ", "Alias000000"]
    assert page.search[2][:2] == [["Alias000002", "A.B."], ["Person000002 Example"]]
    token = page.question("q000000")
    assert token["evidence"] == {"stage": "token", "doc": "d000000-0", "unit": "d000000-0@w0"}
    assert token["why"][:4] == [
        'The first "yes" of the token stage: window ', "d000000-0@w0", " of document ", "d000000-0"
    ]  # fmt: skip
    judged = token["token"][0]["windows"][0]
    assert judged["verdict"] == "yes" and judged["start"] > 0 and judged["raw"] is None
    assert judged["text"]["whole"].startswith("Travellers wrote that Person000000 Example")
    assert judged["text"]["marked"] == [("Person000000 Example", 1), ("Alias000000", 0)]
    before, after = judged["text"]["context"]
    assert before.endswith("many years.\n\n") and after.startswith(" \n\nThe harbour")
    unanswerable = page.question("q000002")
    assert [d["doc"] for d in unanswerable["token"]] == ["d000002-0", "d000002-1", "d000002-2"]
    windows = [w for d in unanswerable["token"] for w in d["windows"]]
    assert [w["verdict"] for w in windows] == ["no", "no", "no"]
    assert [w["text"] is not None for w in windows] == [True, True, False]  # two texts a question
    assert [c["verdict"] for c in unanswerable["vector"]] == ["no", "no", "no"]
    chunk = unanswerable["vector"][0]
    assert chunk["chunk"] == "#0" and chunk["doc"] == "d000002-0"  # the chunk id without its doc
    assert page.question("q000001")["evidence"]["unit"] == "d000001-1#0"
    assert page.documents[0][page.search[2][2][0]] == "d000002-0"
    label, split = page.meta["labels"], page.meta["splits"]
    assert [(label[r[4]], r[6] == -1, r[9]) for r in page.rows[:4]] == [
        ("answerable", False, 0), ("answerable", False, 0), ("unanswerable", False, 0),
        ("discarded", True, 0),
    ]  # fmt: skip
    assert split == ["test"] and counts["texts_recomputed"] > 0
    assert page.meta["bytes"]["details"] > 0
    assert counts["data_bytes"] > sum(page.meta["bytes"].values())  # and the meta


def test_the_why_says_what_the_search_needed_and_that_nothing_had_it(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 3)
    path = run.pool("dev").partition / "unanswerable.jsonl"
    rows = read_records(path, LabeledQuestion)
    rows[0].total_matches = 0
    rows[0].keywords = ["Person000002", "Example"]
    write_records(path, rows)
    write_explorer(run, TextSource(), tmp_path / "page")
    why = Page(tmp_path / "page").question("q000002")["why"]
    assert "".join(why).startswith(
        "No document contains every keyword (Person000002 and Example) together with an alias "
        "of the answer; the judge said no to 3 windows"
    )
    assert why[1::2][:2] == ["Person000002", "Example"]  # values at odd places, to isolate


def test_the_hub_copy_keeps_excerpts_around_matches_and_the_evidence_whole(
    tmp_path: Path,
) -> None:
    words = " ".join(f"word{i}" for i in range(4000))
    sizes = Sizes(filler=words, windows=[3000, 200], chunks=[900])
    run, fetch = synthetic_run(tmp_path / "run", 8, sizes=sizes)
    write_explorer(run, TextSource(fetch), tmp_path / "local")
    write_explorer(run, TextSource(fetch), tmp_path / "hub", form=EXCERPTS)
    local, hub = Page(tmp_path / "local"), Page(tmp_path / "hub")
    assert hub.meta["texts"]["whole"] is False and local.meta["texts"]["whole"] is True
    evidence = hub.question("q000000")["token"][0]["windows"][0]["text"]
    assert len(evidence["whole"]) > 3000 and "pieces" not in evidence
    assert "context" not in evidence  # the Hub's copy keeps no context
    assert "context" in local.question("q000000")["token"][0]["windows"][0]["text"]
    window = hub.question("q000002")["token"][0]["windows"][0]["text"]
    assert "whole" not in window and len(window["pieces"]) == 2  # around the keyword, the alias
    (start, first, marks), (second_start, second, second_marks) = window["pieces"]
    assert start == 0 and marks == [("Person000002 Example", 1)] and len(first) < 300
    assert second_marks == [("Alias000002", 0)] and second_start > 2500 + len(first)
    kept = local.question("q000002")["token"][0]["windows"][0]["text"]
    assert len(kept["whole"]) == kept["length"] == window["length"] and kept["fold"] is not None
    assert [kept["whole"][a:b] for a, b in kept["fold"]] == [first, second]
    assert sum(local.meta["bytes"].values()) > 2 * sum(hub.meta["bytes"].values())


def test_shared_texts_are_stored_once_and_offsets_count_utf16_units(tmp_path: Path) -> None:
    run, fetch = synthetic_run(tmp_path / "run", 12, hostile="\U0001f600 Alias000002")
    counts = write_explorer(run, TextSource(fetch), tmp_path / "page")
    page = Page(tmp_path / "page")
    assert len(page.strings) == len(set(page.strings)) and counts["texts_shared"] > 0
    chunk = page.question("q000002")["vector"][0]["text"]
    assert chunk["marked"] if "marked" in chunk else chunk["pieces"]
    whole = chunk.get("whole") or chunk["pieces"][0][1]
    assert "\U0001f600" in whole and chunk["length"] == utf16(whole)
    marked = chunk["marked"] if "marked" in chunk else chunk["pieces"][0][2]
    assert ("Alias000002", 0) in marked  # after the emoji, at its UTF-16 offset


def test_the_audit_marks_its_questions_and_shows_its_evidence(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 12)
    audit = write_audit(run, ["q000002", "q000006", "q000010"], {"q000006": "Alias000006"})
    write_explorer(run, TextSource(), tmp_path / "page")
    page = Page(tmp_path / "page")
    marks = {row[0]: row[9] for row in page.rows}
    assert marks["q000002"] == 1 and marks["q000006"] == 3 and marks["q000000"] == 0
    assert page.pages["q000002"]["audit"] == {"found": None}
    found = page.pages["q000006"]["audit"]["found"]
    assert found["cause"] == "keywords_minus_one" and found["evidence"]["doc_id"] == "audit-q000006"
    text = page.text(found["evidence"]["text"])
    assert text["whole"] == "The audit read that the answer is Alias000006."
    assert text["marked"] == [("Alias000006", 0)]
    shown = page.meta["audit"]["dev"]
    assert shown["by_label"] == audit["by_label"] and shown["applied"] is False
    assert shown["judge_calls"] == 6 and shown["build"] == audit["build"]


def test_an_audit_of_another_schema_is_an_input_error(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 4)
    write_json(run.pool("dev").root / "audit.json", {"schema_version": 2})
    with pytest.raises(InputError, match="schema version 1"):
        write_explorer(run, TextSource(), tmp_path / "page")
    write_json(run.pool("dev").root / "audit.json", {"schema_version": 1, "found": []})
    with pytest.raises(InputError, match="without the field 'audited_ids'"):
        write_explorer(run, TextSource(), tmp_path / "page")


def test_flips_against_another_build_and_the_command_shows_them(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 8)
    other, _ = synthetic_run(tmp_path / "other", 8, relabel={0: "unanswerable", 2: "token"})
    compare = compare_runs(run.root, other.root)
    assert compare["matrix"]["answerable"] == {
        "answerable": 3, "unanswerable": 1, "discarded": 0, "undetermined": 0,
    }  # fmt: skip
    assert compare["matrix"]["unanswerable"]["answerable"] == 1
    assert compare["flips_by_stage"] == {"token -> vector": 1, "vector -> token": 1}
    assert compare["questions"] == 8
    [first, second] = compare["flips"]
    assert first["id"] == "q000000" and first["a"]["label"] == "answerable"
    assert first["a"]["evidence"]["doc_id"] == "d000000-0" and first["b"]["evidence"] is None
    assert second["b"]["evidence"]["unit_id"] == "d000002-0@w0"
    assert main_run(["explore", str(run.root), "--compare", str(other.root), "--texts", "0"]) == 0
    page = Page(run.report / "explorer")
    assert page.meta["compare"] == {
        "other": "other", "matrix": compare["matrix"], "flips_by_stage": compare["flips_by_stage"],
        "flips": 2,
    }  # fmt: skip
    assert [row[0] for row in page.rows if row[9] & 4] == ["q000000", "q000002"]
    flip = page.pages["q000002"]["flip"]
    assert flip["a"]["label"] == "unanswerable" and flip["b"]["label"] == "answerable"
    assert page.text(flip["b"]["evidence"]["text"])["marked"][-1] == ("Alias000002", 0)
    with pytest.raises(InputError, match="no build here"):
        main_run(["explore", str(run.root), "--compare", str(tmp_path / "nothing")])


def test_without_an_index_only_stored_texts_are_shown(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 8)
    counts = write_explorer(run, TextSource(), tmp_path / "page")
    assert counts["texts_recomputed"] == 0 and counts["texts_from_evidence"] == 2


def test_a_run_without_splits_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="stats file"):
        write_explorer(RunLayout(tmp_path), TextSource(), tmp_path / "page")


def test_the_command_writes_the_page_and_refuses_another_run_s_config(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 3)
    assert main_run(["explore", str(run.root), "--texts", "0", "--excerpts"]) == 0
    assert Page(run.report / "explorer").meta["texts"]["whole"] is False
    config = tmp_path / "luigi.cfg"
    config.write_text(f"[build]\nname = other\noutput_root = {tmp_path}\n")
    with pytest.raises(ConfigError, match=r"the config's run is .*other"):
        main_run(["explore", str(run.root), "--config", str(config)])


def test_a_window_recomputed_at_other_offsets_is_not_shown(tmp_path: Path) -> None:
    run, fetch = synthetic_run(tmp_path / "run", 4)
    path = run.pool("dev").shard(0).token_judgments
    judgments = read_records(path, Judgment)
    for judgment in judgments:
        if judgment.question_id == "q000002" and judgment.start is not None:
            judgment.start += 1  # as if the document had changed since it was judged
    write_records(path, judgments)
    counts = write_explorer(run, TextSource(fetch), tmp_path / "page")
    assert counts["texts_not_as_judged"] == 3 and counts["texts_recomputed"] == 6  # q1, q3


def test_a_page_without_figures_says_why(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 3)
    write_explorer(run, TextSource(), tmp_path / "hub", form=EXCERPTS)  # the Hub's copy
    assert Page(tmp_path / "hub").meta["figures_note"] == (
        "This copy of the page has no figures: the build report has them."
    )
    write_explorer(run, TextSource(), tmp_path / "page", run.report)  # the report not built
    assert "the build report was not built" in Page(tmp_path / "page").meta["figures_note"]


def test_the_second_judge_s_disputes_are_marked_with_both_verdicts(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 12)
    write_audit(run, ["q000002", "q000006"], {})
    write_explorer(run, TextSource(), tmp_path / "plain")
    plain = Page(tmp_path / "plain")
    assert "judge_audit" not in plain.meta["audit"]["dev"]
    assert not any(row[9] & 8 for row in plain.rows)
    write_judge_audit(
        run,
        {
            "q000004": ("answerable", "token", "d000004-0@w0"),
            "q000006": ("unanswerable", "vector", "d000006-1#0"),
        },
    )
    write_explorer(run, TextSource(), tmp_path / "page")
    page = Page(tmp_path / "page")
    assert [row[0] for row in page.rows if row[9] & 8] == ["q000004", "q000006"]
    answerable = page.pages["q000004"]["second_judge"]
    assert {k: answerable[k] for k in ("label", "stage", "first", "second", "judge")} == {
        "label": "answerable", "stage": "token", "first": "yes", "second": "no",
        "judge": "second-judge-70b",
    }  # fmt: skip
    assert page.text(answerable["evidence"]["text"])["whole"] == (
        "The second judge read d000004-0@w0 again."
    )
    unanswerable = page.pages["q000006"]["second_judge"]
    assert (unanswerable["first"], unanswerable["second"]) == ("no", "yes")
    figures = page.meta["audit"]["dev"]["judge_audit"]
    assert figures["by_label"]["answerable"]["disputed"] == 1
    assert figures["agreement"]["kappa"] == 0.81 and figures["judge"]["model"] == "second-judge-70b"


def test_a_confirming_judge_s_verdict_is_kept_beside_the_build_judge_s(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 4)
    confirm(run, "q000001", {"d000001-0#0": "no", "d000001-1#0": "yes"})
    write_explorer(run, TextSource(), tmp_path / "page")
    chunks = Page(tmp_path / "page").question("q000001")["vector"]
    assert [(c["verdict"], c["confirmed"], c["confirmer"]) for c in chunks] == [
        ("yes", "no", "confirm-judge"), ("yes", "yes", "confirm-judge"), ("no", None, None),
    ]  # fmt: skip
    assert Page(tmp_path / "page").question("q000002")["vector"][0]["confirmed"] is None
