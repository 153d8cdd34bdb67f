"""The explorer's data files: every question, its details in judged order, texts recomputed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from explorer_support import synthetic_run

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Judgment
from tipqa.report.__main__ import run as main_run
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import DETAILS_PER_FILE, write_explorer


def _calls(folder: Path, pattern: str) -> list[list]:
    """The arguments of every data file's call, as JSON (the files are `tipqa.f(i,{...});`)."""
    calls = []
    for path in sorted(folder.glob(pattern)):
        body = re.fullmatch(r"tipqa\.\w+\((?:(\d+),)?(.*)\);\n", path.read_text(), re.S)
        assert body is not None, path
        calls.append([body.group(1) and int(body.group(1)), json.loads(body.group(2))])
    return calls


def test_every_question_and_its_evidence_are_written(tmp_path: Path) -> None:
    run, fetch = synthetic_run(tmp_path / "run", 250)
    counts = write_explorer(run, TextSource(fetch, texts=2), tmp_path / "page")
    page = tmp_path / "page"
    assert {p.name for p in page.iterdir()} >= {"index.html", "explorer.js", "explorer.css"}
    [[_, meta]] = _calls(page / "data", "meta.js")
    rows = [row for _, chunk in _calls(page / "data", "rows-*.js") for row in chunk]
    assert meta["questions"] == len(rows) == counts["questions"] == 250
    details = {}
    for index, chunk in _calls(page / "data", "details-*.js"):
        assert all(rows[index * DETAILS_PER_FILE + n][0] == q for n, q in enumerate(chunk))
        details.update(chunk)
    assert len(details) == 250
    token = details["q000000"]
    assert token["label"] == "answerable" and token["why"].startswith('First "yes"')
    judged = token["token"][0]["windows"][0]
    assert token["evidence"] == {
        "stage": "token", "doc": "d000000-0", "unit": "d000000-0@w0",
        "start": judged["start"], "end": judged["end"],
    }  # fmt: skip
    assert judged["start"] > 0 and judged["verdict"] == "yes"
    unanswerable = details["q000002"]
    assert [d["doc"] for d in unanswerable["token"]] == ["d000002-0", "d000002-1", "d000002-2"]
    windows = [w for d in unanswerable["token"] for w in d["windows"]]
    assert [w["verdict"] for w in windows] == ["no", "no", "no"]
    assert [w["text"] is not None for w in windows] == [True, True, False]  # two texts a question
    assert "Alias000002" in windows[0]["text"]
    assert [c["verdict"] for c in unanswerable["vector"]] == ["no", "no", "no"]
    assert unanswerable["why"].startswith("All no: 3 token-stage windows")
    assert details["q000003"]["why"].startswith("Discarded: all 3 judged documents no")
    assert details["q000001"]["evidence"]["unit"] == "d000001-1#0"
    label, split = meta["labels"], meta["splits"]
    assert [(label[r[4]], r[6] == -1) for r in rows[:4]] == [
        ("answerable", False), ("answerable", False), ("unanswerable", False), ("discarded", True)
    ]  # fmt: skip
    assert split == ["test"] and counts["texts_recomputed"] > 0


def test_without_an_index_only_stored_texts_are_shown(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 8)
    counts = write_explorer(run, TextSource(), tmp_path / "page")
    assert counts["texts_recomputed"] == 0 and counts["texts_from_evidence"] == 2


def test_a_run_without_splits_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="stats file"):
        write_explorer(RunLayout(tmp_path), TextSource(), tmp_path / "page")


def test_the_command_writes_the_page_and_refuses_another_run_s_config(tmp_path: Path) -> None:
    run, _ = synthetic_run(tmp_path / "run", 3)
    assert main_run(["explore", str(run.root), "--texts", "0"]) == 0
    assert (run.report / "explorer" / "index.html").is_file()
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
