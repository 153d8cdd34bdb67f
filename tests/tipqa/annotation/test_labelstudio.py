"""Push to, label in and pull from a real Label Studio; the agreement the known labels give.

Runs against the session's Label Studio (`label_studio` fixture: skipped without
TIPQA_LABEL_STUDIO_VENV). The export is made in the test from an authored finished pool (a demo
build takes minutes), with one long, tricky window so that the labelling page must scroll.
"""

from __future__ import annotations

import shutil
import urllib.parse
import uuid
from collections import Counter
from pathlib import Path

import pytest
from support.label_studio_server import listening_addresses
from support.webdriver import headless_chromium

from tipqa.annotation.export import export_annotation, write_exports
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.labelstudio import (
    PullIncomplete,
    assignment,
    project_items,
    pull_annotation,
    push_annotation,
)
from tipqa.annotation.labelstudio_server import (
    LabelStudioError,
    LabelStudioServer,
    LabelStudioSettings,
    TokenRefused,
)
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.report import agreement_report
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.stats import StepStats

pytestmark = pytest.mark.labelstudio

A, B, C = "annotator-01", "annotator-02", "annotator-03"
SETTINGS = SamplingSettings(40, 10, 3, seed=5)
MIDDLE = "The lighthouse keeper counted 4,321 gulls on the last Tuesday of Brumaire."
Label = tuple[str, bool, str]


def _long_text(item: AnnotationItem) -> str:
    """About 1,800 words: quotes, HTML-like text, non-ASCII, the answer and a keyword inside."""
    filler = 'Zoë\'s café in Zürich — 東京 — serves "strong" coffee & <b>cake</b>. ' * 10
    paragraphs = [filler] * 8 + [f"{MIDDLE} {item.keywords[0]} was run by {item.answer}."]
    return "\n\n".join(paragraphs + [filler] * 8)


@pytest.fixture
def exported(make_pool, tmp_path: Path) -> AnnotationLayout:
    """An export of an authored pool for three annotators; A's first item has a long window."""
    pool = make_pool()
    out = AnnotationLayout(tmp_path / "outputs" / "t" / "annotation" / "dev")
    export_annotation(pool.layout, out, pool.fetch, SETTINGS)
    items = read_records(out.key, AnnotationItem)
    first = next(i for i in items if i.item_id == assignment(out)[A][0])
    first.text = _long_text(first)
    write_exports(Sample(items, [A, B, C]), SETTINGS, out, StepStats("t"))
    return out


@pytest.fixture
def server(label_studio, monkeypatch) -> LabelStudioServer:
    """Our client of the session's Label Studio, URL and personal access token from the env."""
    monkeypatch.setenv("LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    return LabelStudioServer(LabelStudioSettings())


def _prefix() -> str:
    """A project prefix of its own for each test (the server is shared by the session)."""
    return f"t-{uuid.uuid4().hex[:8]}"


def _client(label_studio):
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=label_studio.url, api_key=label_studio.token)


def _result(label: Label) -> list[dict]:
    relevant, problematic, comment = label
    result = [_choice("relevant", [relevant])]
    if problematic:
        result.append(_choice("problematic", ["problematic question"]))
    if comment:
        result.append(
            {"from_name": "comment", "to_name": "document", "type": "textarea",
             "value": {"text": [comment]}}
        )  # fmt: skip
    return result


def _choice(name: str, choices: list[str]) -> dict:
    return {
        "from_name": name,
        "to_name": "document",
        "type": "choices",
        "value": {"choices": choices},
    }


def _annotate(label_studio, server, layout: AnnotationLayout, labels: dict) -> dict[str, int]:
    """Submit every annotator's labels through the API; their project ids."""
    client = _client(label_studio)
    projects = read_json(layout.label_studio_projects)
    for annotator, entry in projects.items():
        tasks = project_items(server, entry["project"], entry["title"])
        for item, task in tasks.items():
            client.annotations.create(id=task, result=_result(labels[item, annotator]))
    return {annotator: entry["project"] for annotator, entry in projects.items()}


def _flip(label: str) -> str:
    return {"yes": "no", "no": "yes"}[label]


def known_labels(items: list[AnnotationItem]) -> dict[tuple[str, str], Label]:
    """Labels with known disagreements: a double item split, one where both overrule the judge,
    every third single item flipped; a flag and a comment with quotes and non-ASCII."""
    items = sorted(items, key=lambda i: i.item_id)
    doubles = [i for i in items if len(i.annotators) == 2]
    singles = [i for i in items if len(i.annotators) == 1]
    labels = {(i.item_id, a): (i.judge_label, False, "") for i in items for a in i.annotators}
    split = doubles[1]
    labels[split.item_id, split.annotators[0]] = (_flip(split.judge_label), True, 'Zoë: "odd"')
    for annotator in doubles[2].annotators:
        labels[doubles[2].item_id, annotator] = (_flip(doubles[2].judge_label), False, "")
    for item in singles[::3]:
        labels[item.item_id, item.annotators[0]] = (_flip(item.judge_label), False, "")
    return labels


def _kappa(first: list[str], second: list[str]) -> float:
    """Cohen's kappa from its definition: (observed - chance) / (1 - chance)."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    one, two = Counter(first), Counter(second)
    chance = sum(one[k] * two[k] for k in ("yes", "no")) / n**2
    return (observed - chance) / (1 - chance)


def _alpha(units: list[list[str]]) -> float:
    """Krippendorff's alpha (nominal) from the coincidence matrix of the pairable units."""
    coincidences: Counter[tuple[str, str]] = Counter()
    for values in units:
        if len(values) < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidences[a, b] += 1 / (len(values) - 1)
    totals: Counter[str] = Counter()
    for (a, _), value in coincidences.items():
        totals[a] += value
    n = sum(totals.values())
    observed = sum(v for (a, b), v in coincidences.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (n - 1)
    return 1 - observed / expected


def expected_statistics(items: list[AnnotationItem], labels: dict) -> dict[str, float]:
    """What the known labels give, computed here by hand (not with the report's libraries)."""
    judge = [i.judge_label for i in items for a in i.annotators]
    human = [labels[i.item_id, a][0] for i in items for a in i.annotators]
    doubles = [i for i in items if len(i.annotators) == 2]
    first = [labels[i.item_id, i.annotators[0]][0] for i in doubles]
    second = [labels[i.item_id, i.annotators[1]][0] for i in doubles]
    people = [[labels[i.item_id, a][0] for a in i.annotators] for i in items]
    return {
        "llm_human_agreement": 100 * sum(map(str.__eq__, judge, human)) / len(judge),
        "llm_human_kappa": _kappa(judge, human),
        "inter_agreement": 100 * sum(map(str.__eq__, first, second)) / len(first),
        "inter_kappa": _kappa(first, second),
        "alpha_humans": _alpha(people),
        "alpha_with_judge": _alpha(
            [[i.judge_label, *p] for i, p in zip(items, people, strict=True)]
        ),
    }


def _check_page(label_studio, project: int, task: int, item: AnnotationItem, shot: Path) -> None:
    """Log in with headless Chromium and check what annotator-01's labelling page shows."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no chromium / chromedriver (Debian: apt-get install chromium chromium-driver)")
    with headless_chromium(chromium, driver) as browser:
        browser.open(f"{label_studio.url}/user/login/")
        browser.type("input[name=email]", label_studio.email)
        browser.type("input[name=password]", label_studio.password)
        browser.click("button[type=submit]")
        browser.wait_for_text("Projects")
        browser.open(f"{label_studio.url}/projects/{project}/data?task={task}")
        text = browser.wait_for_text("Does the document contain the information needed")
        document = browser.script(
            "const d = document.querySelector('.document');"
            "const s = getComputedStyle(d);"
            "return {text: d.innerText, scroll: d.scrollHeight, height: d.clientHeight,"
            " overflow: s.overflowY, answers: d.querySelectorAll('mark.answer').length,"
            " keywords: d.querySelectorAll('mark.keyword').length};"
        )
        browser.screenshot(shot)
    assert item.question in text and item.answer in text
    assert "a reader who knows only this document" in text
    assert MIDDLE in document["text"] and "Zoë's café in Zürich — 東京" in document["text"]
    assert '"strong" coffee & <b>cake</b>.' in document["text"]
    assert document["overflow"] == "auto" and document["scroll"] > 2 * document["height"]
    assert document["answers"] >= 1 and document["keywords"] >= 1
    assert "judge" not in text.lower() and "answerable" not in text.lower()
    assert shot.read_bytes().startswith(b"\x89PNG")


def test_push_page_annotate_pull_and_the_agreement_of_known_labels(
    label_studio, server, exported, tmp_path
) -> None:
    layout, prefix = exported, _prefix()
    config = LabelStudioSettings().label_config_text()
    first = push_annotation(server, layout, prefix, config)
    assert dict(first.counts) == {
        "projects": 3,
        "projects_created": 3,
        "tasks_imported": 50,
        "tasks_already_present": 0,
    }
    again = push_annotation(server, layout, prefix, config)
    assert dict(again.counts) == {"projects": 3, "tasks_imported": 0, "tasks_already_present": 50}
    projects = read_json(layout.label_studio_projects)
    for annotator, ids in assignment(layout).items():
        entry = projects[annotator]
        assert [p.id for p in server.projects_titled(entry["title"])] == [entry["project"]]
        assert sorted(project_items(server, entry["project"], entry["title"])) == sorted(ids)
    assert label_studio.token not in layout.push_stats.read_text()

    items = read_records(layout.key, AnnotationItem)
    long_item = next(i for i in items if MIDDLE in i.text)
    tasks = project_items(server, projects[A]["project"], projects[A]["title"])
    shot = tmp_path / "labelling-page.png"
    _check_page(label_studio, projects[A]["project"], tasks[long_item.item_id], long_item, shot)

    labels = known_labels(items)
    _annotate(label_studio, server, layout, labels)
    completed = tmp_path / "completed"
    pulled = pull_annotation(server, layout, prefix, completed)
    assert pulled.counts["annotators_pulled"] == 3 and pulled.counts["annotations_pulled"] == 50
    assert pulled.counts["annotators_updated"] == 3
    assert sorted(p.name for p in completed.iterdir()) == [f"{a}.json" for a in (A, B, C)]
    times = {p.name: p.stat().st_mtime_ns for p in completed.iterdir()}
    unchanged = pull_annotation(server, layout, prefix, completed)
    assert unchanged.counts["annotators_unchanged"] == 3
    assert "annotators_updated" not in unchanged.counts
    assert {p.name: p.stat().st_mtime_ns for p in completed.iterdir()} == times

    agreement_report(layout, completed, resamples=20, seed=0)
    report = read_json(layout.report_json)
    expected = expected_statistics(items, labels)
    assert report["llm_human"]["pairs"] == 50 and report["inter_annotator"]["pairs"] == 10
    got = {
        "llm_human_agreement": report["llm_human"]["agreement"]["value"],
        "llm_human_kappa": report["llm_human"]["kappa"]["value"],
        "inter_agreement": report["inter_annotator"]["agreement"]["value"],
        "inter_kappa": report["inter_annotator"]["kappa"]["value"],
        "alpha_humans": report["krippendorff_alpha"]["humans"]["value"],
        "alpha_with_judge": report["krippendorff_alpha"]["humans_and_judge"]["value"],
    }
    assert got == pytest.approx(expected, abs=1e-9)
    assert expected["inter_agreement"] == 90.0 and expected["llm_human_agreement"] < 90
    flipped = {item for (item, _), label in labels.items() if label[0] != _judge(items, item)}
    assert {d["item_id"] for d in report["disagreements"]} == flipped
    assert report["problematic"]["annotations_flagged"] == 1


def _judge(items: list[AnnotationItem], item_id: str) -> str:
    return next(i.judge_label for i in items if i.item_id == item_id)


def test_push_refuses_a_project_holding_tasks_of_another_annotator(server, exported) -> None:
    layout, prefix = exported, _prefix()
    config = LabelStudioSettings().label_config_text()
    push_annotation(server, layout, prefix, config)
    projects = read_json(layout.label_studio_projects)
    foreign = read_json(layout.label_studio(B))[0]
    assert server.import_tasks(projects[A]["project"], [foreign]) == 1
    with pytest.raises(LabelStudioError) as error:
        push_annotation(server, layout, prefix, config)
    assert f"project '{prefix} {A}'" in str(error.value)
    assert f"holds 1 task(s) that are not {A}'s items" in str(error.value)
    assert foreign["data"]["item_id"] in str(error.value)


def test_pull_names_every_incomplete_project_and_keeps_what_was_pulled(
    label_studio, server, exported, tmp_path
) -> None:
    layout, prefix = exported, _prefix()
    config = LabelStudioSettings().label_config_text()
    push_annotation(server, layout, prefix, config)
    items = read_records(layout.key, AnnotationItem)
    agreeing = {(i.item_id, a): (i.judge_label, False, "") for i in items for a in i.annotators}
    projects = _annotate(label_studio, server, layout, agreeing)
    completed = tmp_path / "completed"
    pull_annotation(server, layout, prefix, completed)
    before = {p.name: p.read_bytes() for p in completed.iterdir()}

    client = _client(label_studio)
    tasks = {a: project_items(server, p, f"{prefix} {a}") for a, p in projects.items()}
    missing_item, missing_task = next(iter(tasks[A].items()))
    client.tasks.delete(str(missing_task))
    stray = {"data": {**read_json(layout.label_studio(B))[0]["data"], "item_id": "it-unknown0000"}}
    server.import_tasks(projects[B], [stray])
    stray_task = project_items(server, projects[B], f"{prefix} {B}")["it-unknown0000"]
    client.annotations.create(id=stray_task, result=_result(("yes", False, "")))
    open_item, open_task = next(iter(tasks[C].items()))
    for annotation in client.annotations.list(id=open_task):
        client.annotations.delete(annotation.id)

    with pytest.raises(PullIncomplete) as error:
        pull_annotation(server, layout, prefix, completed)
    message = str(error.value)
    assert message.startswith("3 of 3 annotators are not complete")
    assert f"- {A}: project '{prefix} {A}' lacks 1 of {A}'s" in message and missing_item in message
    assert f"- {B}: project '{prefix} {B}' holds 1 task(s) of unknown items" in message
    assert "it-unknown0000" in message
    count = len(assignment(layout)[C])
    assert f"- {C}: 1 of {C}'s {count} tasks are not annotated yet" in message
    assert open_item in message
    assert {p.name: p.read_bytes() for p in completed.iterdir()} == before
    raw = read_json(layout.pulled(B))
    assert "it-unknown0000" in {t["data"]["item_id"] for t in raw}

    with pytest.raises(LabelStudioError, match=f"not {B}'s items in this export"):
        push_annotation(server, layout, prefix, config)
    assert missing_item in project_items(server, projects[A], f"{prefix} {A}")


def test_a_wrong_token_is_a_clear_error_that_does_not_show_it(
    label_studio, exported, monkeypatch
) -> None:
    wrong = "0badc0de" * 4
    monkeypatch.setenv("LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", wrong)
    config = LabelStudioSettings().label_config_text()
    with pytest.raises(TokenRefused) as error:
        push_annotation(LabelStudioServer(LabelStudioSettings()), exported, _prefix(), config)
    message = str(error.value)
    assert f"Label Studio at {label_studio.url} refused the API token in LABEL_STUDIO_API_KEY" in (
        message
    )
    assert wrong not in message and error.value.__cause__ is None
    assert not exported.push_stats.exists()


def test_the_server_listens_on_loopback_only(label_studio) -> None:
    port = urllib.parse.urlsplit(label_studio.url).port
    assert port is not None and listening_addresses(port) == {"127.0.0.1"}
