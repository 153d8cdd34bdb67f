"""The explorer page in real headless Chromium and Firefox ESR, opened from disk as a researcher
opens it: keyboard, layout with real scrollbars, hostile strings, state in the URL, export,
the audit's and another build's views. One browser per engine for the module; the screenshots
go to the folder the run names at its end."""

from __future__ import annotations

import configparser
import csv
import io
import json
import shutil
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.explorer_support import (
    PARAMETERS,
    Page,
    confirm,
    synthetic_run,
    write_audit,
    write_judge_audit,
)
from support.tests_support import luigi_config, run_luigi
from support.webdriver import Browser, Driver, headless_chromium

from tipqa.audit.compare import compare_runs
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.records import LabeledQuestion
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.store import EXCERPTS
from tipqa.report.explorer.write import FIGURES, write_explorer

pytestmark = [pytest.mark.slow]

QUESTIONS = 10_000
HOSTILE = (
    '<script>window.tipqaPwned = "script";</script>'
    '<img src="x" onerror="window.tipqaPwned = \'onerror\'">'
    '<a href="javascript:window.tipqaPwned = 2">link</a>'
    '<b onmouseover="window.tipqaPwned = 1">bold</b> '
    + "W" * 10_000
    + " \u2067isolate \u202eoverride"
)
HOSTILE_ID = "\u202ejavascript:window.tipqaPwned=3;" + "I" * 10_000
FOUND = {"q000006": "Alias000006", "q000010": "Alias000010"}
DISPUTED = {
    "q000004": ("answerable", "token", "d000004-0@w0"),
    "q000006": ("unanswerable", "vector", "d000006-1#0"),
}
"""The questions the judge audit's second judge disputes: label, stage, unit."""
WHITE, HOVER = (255, 255, 255), (231, 245, 255)
ROW_IDS = (
    "return Array.from(document.querySelectorAll('#grid-space .grid-row a'))"
    ".map(a => a.textContent);"
)
SEARCHED = "return window.tipqaSearchReady"
LAYOUT = """
var g = document.getElementById('grid');
g.scrollLeft = 60;
var box = c => [c.getBoundingClientRect().left, c.getBoundingClientRect().right];
var head = Array.from(document.querySelectorAll('#grid-head > *')).filter(c => c.offsetWidth);
var row = document.querySelector('#grid-space .grid-row');
var cells = Array.from(row.children).filter(c => c.offsetWidth);
return {bar: g.offsetWidth - g.clientWidth - 2, page: document.documentElement.scrollWidth,
  width: innerWidth, sideways: g.scrollLeft, room: g.scrollWidth - g.clientWidth,
  head: head.map(box), cells: cells.map(box),
  right: g.getBoundingClientRect().left + g.clientLeft + g.clientWidth};
"""
"""Where the table's header cells and first row's cells are, with the grid scrolled sideways."""
HOSTILE_CHECK = """
document.querySelectorAll('details').forEach(d => d.open = true);
document.querySelectorAll('main *').forEach(
  e => e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})));
var injected = 'main script, main img:not(.figure), main b, main iframe';
return {injected: document.querySelectorAll(injected).length,
  links: Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))
    .filter(h => !(h || '#').startsWith('#')),
  wide: Math.max(0, document.documentElement.scrollWidth - innerWidth),
  pwned: window.tipqaPwned === undefined ? null : String(window.tipqaPwned)};
"""
"""What corpus text could have done to a question's page: elements, links, width, scripts run."""
LEFT_TO_RIGHT = """
var t = document.querySelector('.why-text bdi:nth-of-type(2)').nextSibling;
var r = document.createRange(), xs = [];
for (var i = 2; i < 10; i++) {
  r.setStart(t, i); r.setEnd(t, i + 1); xs.push(r.getBoundingClientRect().left);
}
return [t.textContent.slice(2, 10), xs];
"""
"""The letters after the why's second value (a document id): where each one starts."""
NAMED = "llm-foundry-triviaqa-validation-{}"
NAMED_QUESTIONS = 120
FILES = [f"/datasets/the_pile/train/{i:02d}.jsonl.zst" for i in range(120)]
LONG_QUESTION = "Which " + " ".join(f"word{i:03d}" for i in range(30)) + "?"
FORMULAS = {
    0: "=HYPERLINK(\"http://example.com\",\"x\")", 1: "+1+1", 2: "-1+1", 3: "@SUM(A1:A2)",
    4: "\tTab first", 5: "\rReturn first", 6: LONG_QUESTION,
}  # fmt: skip
"""The named page's questions by index: what a spreadsheet would read as a formula, and one
question long enough to fold on a phone but not on a desktop."""
ID_CELLS = """
return Array.from(document.querySelectorAll('#grid-space .grid-row')).map(function (row) {
  var cell = row.querySelector('.c-id'), tail = cell.querySelector('.id-tail');
  var head = cell.querySelector('.id-head'), c = cell.getBoundingClientRect();
  var t = tail ? tail.getBoundingClientRect() : {left: 0, right: 1e9};
  return {id: cell.textContent, tail: tail ? tail.textContent : null,
    inside: t.left >= c.left - 1 && t.right <= c.right + 1,
    cut: head ? head.scrollWidth > head.clientWidth : false};
});
"""
"""Each drawn row's id: its text, its always shown end, whether that end lies inside the cell,
and whether the head before it is cut."""
SORT_NAME = """
function pseudo(node, which) {
  var c = getComputedStyle(node, which).content;
  return c === 'none' || c === 'normal' ? '' : c.replace(/^"|"$/g, '');
}
function named(node) {
  if (node.nodeType === 3) return node.textContent;
  if (node.getAttribute('aria-hidden') === 'true') return '';
  return pseudo(node, '::before') + Array.from(node.childNodes).map(named).join('')
    + pseudo(node, '::after');
}
var cell = document.querySelectorAll('#grid-head [role=columnheader]')[0];
var drawn = Array.from(cell.querySelectorAll('*')).map(e => pseudo(e, '::after')).join('');
return {name: named(cell.querySelector('.sort')), sort: cell.getAttribute('aria-sort'),
  drawn: drawn};
"""
"""The id header's name as a screen reader reads it (text and generated content, outside
aria-hidden), its aria-sort, and the arrow drawn for the eye."""


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("chromium", marks=pytest.mark.chromium),
        pytest.param("firefox", marks=pytest.mark.firefox),
    ],
)
def browser(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Driver]:
    """One headless browser of each engine for the module (skipped where it is not installed)."""
    downloads = tmp_path_factory.mktemp(f"downloads-{request.param}")
    if request.param == "chromium":
        chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
        if not chromium or not driver:
            pytest.skip(
                "no chromium / chromedriver (Debian: apt-get install chromium chromium-driver)"
            )
        with headless_chromium(chromium, driver, downloads) as session:
            yield session
    else:
        firefox = shutil.which("firefox-esr") or shutil.which("firefox")
        if not firefox:
            pytest.skip("no firefox (Debian: apt-get install firefox-esr)")
        pytest.importorskip("websockets", reason="the dev extra is not installed")
        from support.bidi import headless_firefox

        with headless_firefox(firefox, downloads) as session:
            yield session


def _png(path: Path) -> None:
    """A one-pixel PNG, as a report figure."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    """A 10,000-question page: hostile strings in its first 4 questions, an audit with a judge
    audit, flips of its first 20 questions against another build, a figure."""
    root = tmp_path_factory.mktemp("explorer")
    run, _ = synthetic_run(root / "run", QUESTIONS, HOSTILE, hostile_first=4, hostile_id=HOSTILE_ID)
    same, _ = synthetic_run(root / "same", 20)  # the page's first 20 questions, as built
    other, _ = synthetic_run(root / "other", 20, relabel={8: "unanswerable", 14: "token"})
    write_audit(run, ["q000002", "q000006", "q000010", "q000014"], FOUND)
    write_judge_audit(run, DISPUTED)
    report = root / "report"
    report.mkdir()
    _png(report / "funnel.png")
    write_explorer(
        run, TextSource(), root / "page", report, compare=compare_runs(same.root, other.root)
    )
    return Page(root / "page")


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Page:
    """A 120-question page as the Hub's copy (excerpts, no figures): ids with a long shared
    prefix and no zero padding, questions a spreadsheet would read as formulas, a long
    question, a long unbroken list of corpus files in its settings, an audit, a confirming
    judge's verdicts on two "yes" answers of question 1."""
    root = tmp_path_factory.mktemp("named")
    parameters = {**PARAMETERS, "corpus": {"files": FILES}}
    run, fetch = synthetic_run(
        root / "run", NAMED_QUESTIONS, id_format=NAMED, parameters=parameters
    )
    for path in run.pool("dev").partition.glob("*.jsonl"):
        rows = read_records(path, LabeledQuestion)
        for row in rows:
            row.question = FORMULAS.get(int(row.id.rsplit("-", 1)[1]), row.question)
        write_records(path, rows)
    write_audit(run, [NAMED.format(i) for i in (2, 6, 10)], {NAMED.format(6): "Alias000006"})
    confirm(run, NAMED.format(1), {"d000001-0#0": "no", "d000001-1#0": "yes"})
    write_explorer(run, TextSource(fetch, texts=2), root / "page", form=EXCERPTS)
    return Page(root / "page")


def url(page: Page, fragment: str = "") -> str:
    """The page's file URL, with a fragment."""
    return (page.folder / "index.html").as_uri() + fragment


def opened(browser: Driver, address: str) -> None:
    """Open the page at `address` and wait for all its rows."""
    browser.open("about:blank")
    browser.open(address)
    browser.wait_for("return window.tipqaAllRows")


def focused(browser: Driver) -> dict[str, Any]:
    """What has the focus: its role, row index, text, and whether it is in the grid's view."""
    return browser.script(
        "var e = document.activeElement, g = document.getElementById('grid');"
        "var r = e.getBoundingClientRect(), v = g.getBoundingClientRect();"
        "var s = getComputedStyle(e);"
        "return {role: e.getAttribute('role'), row: Number(e.getAttribute('aria-rowindex')),"
        " id: e.firstChild && e.firstChild.textContent, tag: e.tagName, text: e.textContent,"
        " visible: r.top >= v.top && r.bottom <= v.top + g.clientHeight + 1,"
        " outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2,"
        " scroll: g.scrollTop};"
    )


def contrast(one: tuple[int, ...], two: tuple[int, ...]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours."""

    def luminance(rgb: tuple[int, ...]) -> float:
        linear = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in (v / 255 for v in rgb)
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted([luminance(one), luminance(two)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_row_is_reachable_and_openable_by_keyboard(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 800)
    opened(browser, url(page))
    rows = browser.script("return document.getElementById('grid').getAttribute('aria-rowcount')")
    assert rows == str(QUESTIONS + 1)
    browser.script("document.getElementById('f-search').focus();")
    browser.keys("Tab", "Tab", "Tab")
    sort = focused(browser)
    assert sort["tag"] == "BUTTON" and sort["text"] == "id" and sort["outline"]
    browser.keys(*["Tab"] * 9)
    first = focused(browser)
    assert first["role"] == "row" and first["row"] == 2 and first["visible"] and first["outline"]
    browser.keys("PageDown", "PageDown")
    paged = focused(browser)
    assert paged["row"] > 30 and paged["visible"] and paged["scroll"] > 0
    browser.keys("End")
    last = focused(browser)
    assert last["row"] == QUESTIONS + 1 and last["visible"] and last["id"] == "q009999"
    browser.screenshot(screenshots / f"{engine}-last-row.png")
    browser.keys("Enter")
    browser.wait_for("return document.querySelector('.why-text')")
    assert "Person009999" in browser.script("return document.title")
    assert browser.script("return location.hash") == "#q=q009999"
    browser.script("document.querySelector('.back').focus();")
    browser.keys("Enter")
    browser.wait_for("return !document.getElementById('table-view').hidden")
    back = focused(browser)
    assert back["row"] == QUESTIONS + 1 and back["visible"]
    browser.script("document.getElementById('f-search').focus();")
    browser.script("document.getElementById('grid').scrollTop = 140000;")
    time.sleep(0.3)
    browser.keys(*["Tab"] * 12)
    middle = focused(browser)
    assert middle["role"] == "row" and middle["visible"] and middle["scroll"] == 140000
    assert 5000 < middle["row"] < 5030
    browser.script("document.querySelectorAll('#grid-head .sort')[1].focus();")
    browser.keys("Enter")
    sorts = browser.script(
        "return Array.from(document.querySelectorAll('[role=columnheader]'))"
        ".map(c => c.getAttribute('aria-sort'));"
    )
    assert sorts == ["none", "ascending", *["none"] * 7]
    colours = browser.script(
        "var out = {};"
        "['answerable', 'unanswerable', 'discarded', 'undetermined'].forEach(function (l) {"
        " var b = document.createElement('span'); b.className = 'badge label-' + l;"
        " document.body.appendChild(b); out[l] = getComputedStyle(b).color; b.remove(); });"
        "return out;"
    )
    for label, colour in colours.items():
        rgb = tuple(int(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3])
        assert min(contrast(rgb, WHITE), contrast(rgb, HOVER)) >= 4.5, (label, colour)
    browser.open(url(page, "#view=build"))
    alts = browser.wait_for(
        "return Array.from(document.querySelectorAll('img.figure')).map(i => i.alt);"
    )
    assert alts == [FIGURES["funnel.png"]]


def test_headers_stay_on_their_columns_with_a_real_scrollbar_at_any_width(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    for width, height in ((800, 700), (720, 700), (390, 800)):
        browser.resize(width, height)
        opened(browser, url(page, "#sort=question"))
        layout = browser.script(LAYOUT)
        browser.screenshot(screenshots / f"{engine}-table-{width}px.png")
        assert layout["bar"] > 0, layout  # a scrollbar that takes room, as on desktop Linux
        assert layout["page"] <= layout["width"], layout
        assert len(layout["head"]) == len(layout["cells"]) >= 3
        for head, cell in zip(layout["head"], layout["cells"], strict=True):
            assert abs(head[0] - cell[0]) <= 1 and abs(head[1] - cell[1]) <= 1, (width, layout)
        if width == 800:
            assert layout["room"] == 0 and layout["head"][-1][1] <= layout["right"] + 1
        assert layout["sideways"] == min(60, layout["room"])  # the header went sideways too
    browser.resize(1280, 800)


def test_hostile_strings_neither_run_nor_break_the_layout(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(800, 700)
    opened(browser, url(page))
    assert browser.script("return document.documentElement.scrollWidth <= innerWidth") is True
    for number in range(4):
        qid = f"q{number:06d}{HOSTILE_ID}"
        browser.script(f"location.hash = 'q=' + encodeURIComponent({json.dumps(qid)});")
        browser.wait_for("return document.querySelector('.why-text')")
        text = browser.text()
        assert "<script>window.tipqaPwned" in text and 'onerror="window.tipqaPwned' in text
        found = browser.script(HOSTILE_CHECK)
        assert found == {"injected": 0, "links": [], "wide": 0, "pwned": None}, found
    # the id's right-to-left override stays inside its box: the words after it read left to right
    browser.script(
        f"location.hash = 'q=' + encodeURIComponent({json.dumps(f'q000000{HOSTILE_ID}')});"
    )
    browser.wait_for("return document.querySelector('.why-text')")
    ltr = browser.script(LEFT_TO_RIGHT)
    assert ltr[0] == "judgment" and ltr[1] == sorted(ltr[1]), ltr
    browser.screenshot(screenshots / f"{engine}-hostile-question-800px.png")
    browser.resize(390, 800)
    browser.script("window.scrollTo(0, 0);")
    assert browser.script("return document.documentElement.scrollWidth <= innerWidth") is True
    browser.screenshot(screenshots / f"{engine}-hostile-question-phone.png")
    browser.resize(1280, 800)
    browser.open(url(page, "#q=%E0%A4%A"))
    browser.wait_for_text("No question")
    assert browser.script("return document.querySelector('.why-text')") is None


def _expected(page: Page, label: str, needle: str) -> list[dict[str, Any]]:
    """The rows the page should list for a label and a search, as the export writes them."""
    labels, pools, stages, splits = (page.meta[k] for k in ("labels", "pools", "stages", "splits"))
    rows = []
    for i, row in enumerate(page.rows):
        aliases, keywords, documents = page.search[i]
        file = i // page.meta["rows_per_file"]
        haystack = [*row[:3], *aliases, *keywords, *(page.documents[file][d] for d in documents)]
        if labels[row[4]] == label and any(needle in str(h).lower() for h in haystack):
            audit = "found" if row[9] & 2 else "audited" if row[9] & 1 else None
            split = None if row[6] == -1 else splits[row[6]]
            rows.append({
                "id": row[0], "question": row[1], "answer": row[2], "pool": pools[row[3]],
                "label": label, "stage": stages[row[5]], "split": split, "total": row[7],
                "judged": row[8], "audit": audit, "disputed": bool(row[9] & 8),
                "flipped": bool(row[9] & 4),
            })  # fmt: skip
    return sorted(rows, key=lambda r: r["question"], reverse=True)


def _download(browser: Driver, button: str, name: str) -> str:
    assert browser.downloads is not None
    path = browser.downloads / name
    path.unlink(missing_ok=True)
    browser.click(button)
    deadline = time.monotonic() + 20
    while not path.is_file() or path.stat().st_size == 0:
        assert time.monotonic() < deadline, f"no {path} after 20 s"
        time.sleep(0.1)
    time.sleep(0.2)
    return path.read_bytes().decode("utf-8")  # as written: a carriage return stays one


def test_the_url_restores_the_view_and_the_export_equals_the_list(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 800)
    fragment = "#label=unanswerable&search=person00001&sort=question&order=descending"
    opened(browser, url(page, fragment))
    browser.wait_for(SEARCHED)
    expected = _expected(page, "unanswerable", "person00001")
    state = browser.script(
        "return {label: document.getElementById('f-label').value,"
        " search: document.getElementById('f-search').value,"
        " shown: document.getElementById('shown').textContent,"
        " sort: document.querySelectorAll('[role=columnheader]')[1].getAttribute('aria-sort'),"
        " first: document.querySelector('#grid-space .grid-row a').textContent};"
    )
    assert state["label"] == "unanswerable" and state["search"] == "person00001"
    assert state["sort"] == "descending" and state["first"] == expected[0]["id"]
    assert state["shown"].startswith(f"{len(expected)} of 10,000")
    jsonl = _download(browser, "#export-jsonl", "run-questions.jsonl")
    assert [json.loads(line) for line in jsonl.splitlines()] == expected
    exported = _download(browser, "#export-csv", "run-questions.csv")
    assert exported.startswith("\ufeff")  # a byte-order mark: spreadsheets read it as UTF-8
    table = list(csv.DictReader(io.StringIO(exported[1:], newline="")))
    assert [r["id"] for r in table] == [r["id"] for r in expected]
    assert table[0] == {
        k: "" if v is None else json.dumps(v).strip('"') for k, v in expected[0].items()
    }
    browser.script("document.querySelector('#grid-space .grid-row').focus();")
    browser.keys("ArrowDown", "Enter")
    browser.wait_for("return document.querySelector('.why-text')")
    address = browser.script("return location.href")
    assert address.endswith(fragment + "&q=" + expected[1]["id"])
    opened(browser, address)  # a reload, or the link shared
    browser.wait_for("return document.querySelector('.question-nav .position')")
    nav = browser.script(
        "return {position: document.querySelector('.question-nav .position').textContent,"
        " next: document.querySelector('.question-nav a[rel=next]').getAttribute('href')};"
    )
    assert nav["position"] == f"2 of {len(expected)}" and nav["next"].endswith(
        "&q=" + expected[2]["id"]
    )
    browser.screenshot(screenshots / f"{engine}-question-in-a-list.png")
    opened(browser, url(page, "#search=d000010-2"))
    browser.wait_for(SEARCHED)
    ids = browser.script(ROW_IDS)
    assert ids == ["q000010"]  # found by one of its documents' ids


def test_the_audit_s_and_the_other_build_s_views(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 900)
    opened(browser, url(page, "#audit=found"))
    ids = browser.script(ROW_IDS)
    assert ids == list(FOUND)
    browser.click("#grid-space .grid-row")
    browser.wait_for("return document.querySelector('.audit .found')")
    audit = browser.script("return document.querySelector('.audit').innerText")
    assert "Found answerable (it was labelled unanswerable): cause keywords_minus_one" in audit
    assert "audit-q000006" in audit
    marks = browser.script(
        "return Array.from(document.querySelectorAll('.audit mark')).map(m => m.textContent);"
    )
    assert marks == ["Alias000006"]
    browser.screenshot(screenshots / f"{engine}-audit-question.png")
    opened(browser, url(page, "#flip=flipped"))
    ids = browser.script(ROW_IDS)
    assert ids == ["q000008", "q000014"]
    browser.open(url(page, "#flip=flipped&q=q000014"))
    browser.wait_for("return document.querySelector('.flip')")
    flip = browser.script("return document.querySelector('.flip').innerText")
    assert (
        "Flipped against other" in flip
        and "this build: unanswerable" in flip
        and "other: answerable" in flip
    )
    browser.screenshot(screenshots / f"{engine}-flipped-question.png")
    browser.open(url(page, "#view=build"))
    build = browser.wait_for_text("Label audit")
    assert "What the audit found, by pool and label" in build and "Against other" in build


def test_the_second_judge_s_disputes_filter_and_show_both_verdicts(
    browser: Driver, page: Page, named: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 900)
    opened(browser, url(page, "#judge=disputed"))
    assert browser.script(ROW_IDS) == list(DISPUTED)
    browser.script("document.querySelector('#grid-space .grid-row').focus();")
    browser.keys("Enter")
    box = browser.wait_for("return document.querySelector('.second-judge')")
    assert box
    shown = browser.script(
        "var b = document.querySelector('.second-judge');"
        "return {text: b.innerText, verdicts: Array.from(b.querySelectorAll('.verdicts dd'))"
        ".map(d => d.textContent)};"
    )
    assert shown["verdicts"] == ["yes", "no"], shown
    assert "second-judge-70b" in shown["text"] and "d000004-0@w0" in shown["text"], shown
    assert "The second judge read d000004-0@w0 again." in shown["text"], shown
    browser.screenshot(screenshots / f"{engine}-disputed-question.png")
    browser.open(url(page, "#judge=disputed&q=q000006"))
    browser.wait_for("return document.querySelector('.second-judge .verdicts')")
    verdicts = browser.script(
        "return Array.from(document.querySelectorAll('.second-judge .verdicts dd'))"
        ".map(d => d.textContent);"
    )
    assert verdicts == ["no", "yes"]  # the build's judge said no to the chunk, the second yes
    browser.open(url(page, "#view=build"))
    build = browser.wait_for_text("Judge audit (a second judge)")
    assert "What the second judge disputes, by pool and label" in build
    assert "0.810" in build and "second-judge-70b" in build
    # a page whose audit has no judge audit: no filter, no error, a link's filter said
    opened(browser, url(named, "#judge=disputed"))
    state = browser.script(
        "return {hidden: document.getElementById('f-judge').parentNode.hidden,"
        " rows: document.getElementById('grid').getAttribute('aria-rowcount'),"
        " problem: document.getElementById('link-problem').textContent};"
    )
    assert state["hidden"] is True and state["rows"] == str(NAMED_QUESTIONS + 1), state
    assert "judge \u201cdisputed\u201d is not in this build" in state["problem"], state
    browser.open(url(named, "#view=build"))
    assert "Judge audit" not in browser.wait_for_text("Label audit")


def test_a_confirming_judge_s_verdict_shows_beside_the_build_judge_s(
    browser: Driver, named: Page, screenshots: Path
) -> None:
    browser.resize(1280, 900)
    opened(browser, url(named, "#q=" + NAMED.format(1)))
    browser.wait_for("return document.querySelector('.vector-stage .chunk')")
    lines = browser.script(
        "return Array.from(document.querySelectorAll('.vector-stage .chunk .unit-head'))"
        ".map(h => [h.querySelector('.verdict').textContent,"
        " h.querySelector('.confirmation') && h.querySelector('.confirmation').textContent]);"
    )
    assert lines == [
        ["yes", "not confirmed by confirm-judge: no"],
        ["yes", "confirmed by confirm-judge: yes"],
        ["no", None],
    ], lines
    browser.screenshot(screenshots / f"{browser.name}-confirmed-chunks.png")


def test_ids_keep_their_end_in_view_and_sort_naturally(
    browser: Driver, named: Page, screenshots: Path
) -> None:
    engine = browser.name
    for width in (1280, 390):
        browser.resize(width, 700)
        opened(browser, url(named, "#sort=id"))
        ids = browser.script(ROW_IDS)
        assert ids[:12] == [NAMED.format(i) for i in range(12)], ids[:12]  # 1, 2, 10, not 1, 10
        cells = browser.script(ID_CELLS)
        for cell in cells[:12]:
            assert cell["tail"] == cell["id"][-8:] and cell["inside"], (width, cell)
        assert cells[0]["cut"], cells[0]  # the shared prefix is what the column cuts
        browser.screenshot(screenshots / f"{engine}-named-ids-{width}px.png")
    opened(browser, url(named, "#sort=id&order=descending"))
    expected = sorted(range(NAMED_QUESTIONS), reverse=True)[:3]
    assert browser.script(ROW_IDS)[:3] == [NAMED.format(i) for i in expected]
    browser.resize(1280, 800)


def test_the_settings_wrap_and_the_audit_s_tables_are_tables(
    browser: Driver, named: Page, screenshots: Path
) -> None:
    engine = browser.name
    for width in (1280, 390):
        browser.resize(width, 800)
        opened(browser, url(named, "#view=build"))
        browser.wait_for_text("Construction settings")
        found = browser.script(
            "var rows = Array.from(document.querySelectorAll('table.settings tr'));"
            "var k1 = rows.find(r => r.firstChild.textContent === 'k1').lastChild;"
            "var box = k1.getBoundingClientRect();"
            "var cells = Array.from(document.querySelectorAll('#build-view td, #build-view th'));"
            "return {wide: document.documentElement.scrollWidth - innerWidth,"
            " table: Math.max(...Array.from(document.querySelectorAll('table.settings'))"
            "   .map(t => t.getBoundingClientRect().right)) - innerWidth,"
            " k1: k1.textContent, left: box.left, right: box.right,"
            " json: cells.map(c => c.textContent).filter(t => /^[\\[{]/.test(t)),"
            " files: rows.find(r => r.firstChild.textContent === 'corpus.files')"
            "   .lastChild.textContent};"
        )
        browser.screenshot(screenshots / f"{engine}-named-build-{width}px.png")
        assert found["wide"] <= 0 and found["table"] <= 0, (width, found)
        assert found["k1"] == "100" and 0 <= found["left"] < found["right"] <= width, found
        assert found["json"] == [], found["json"]
        assert found["files"] == ", ".join(FILES)
    text = browser.text()
    assert "keywords_minus_one: 1" in text and "33.3%" in text
    assert "This copy of the page has no figures: the build report has them." in text
    assert "was not built" not in text
    browser.resize(1280, 800)


def test_no_second_scrollbar_at_any_width(browser: Driver, page: Page) -> None:
    for width in (1600, 1280, 1024, 800, 720, 600, 480, 390, 320):
        browser.resize(width, 700)
        opened(browser, url(page))
        browser.wait_for(SEARCHED)
        sizes = browser.script(
            "var g = document.getElementById('grid');"
            "return {tall: document.documentElement.scrollHeight - innerHeight,"
            " wide: document.documentElement.scrollWidth - innerWidth,"
            " bar: g.offsetWidth - g.clientWidth - 2, rows: g.clientHeight};"
        )
        assert sizes["tall"] <= 0 and sizes["wide"] <= 0, (width, sizes)
        assert sizes["bar"] > 0 and sizes["rows"] >= 4 * 28, (width, sizes)
    browser.resize(1280, 800)


def test_the_focused_row_stays_in_view_after_a_resize(browser: Driver, page: Page) -> None:
    browser.resize(1280, 900)
    opened(browser, url(page))
    browser.script("document.querySelector('#grid-space .grid-row').focus();")
    browser.keys(*["ArrowDown"] * 24)
    assert focused(browser)["row"] == 26 and focused(browser)["visible"]
    for width, height in ((1280, 450), (390, 420), (1280, 900)):
        browser.resize(width, height)
        time.sleep(0.3)
        now = focused(browser)
        assert now["row"] == 26 and now["visible"], (width, height, now)
    browser.resize(1280, 800)


def test_a_link_s_unknown_value_is_said_and_an_empty_search_too(
    browser: Driver, page: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 800)
    opened(browser, url(page, "#label=answerabel&sort=colour"))
    browser.wait_for(SEARCHED)
    problem = browser.script(
        "var p = document.getElementById('link-problem');"
        "return {shown: !p.hidden && p.offsetHeight > 0, text: p.textContent,"
        " label: document.getElementById('f-label').value};"
    )
    assert problem["shown"] and problem["label"] == "", problem
    assert "label \u201canswerabel\u201d is not in this build" in problem["text"], problem
    assert "sort \u201ccolour\u201d" in problem["text"], problem
    browser.screenshot(screenshots / f"{engine}-bad-link.png")
    opened(browser, url(page, "#search=zzz-no-such-thing"))
    browser.wait_for(SEARCHED)
    nothing = browser.script(
        "var n = document.getElementById('nothing');"
        "return {shown: !n.hidden && n.offsetHeight > 0, text: n.textContent,"
        " problem: !document.getElementById('link-problem').hidden};"
    )
    assert nothing["shown"] and not nothing["problem"], nothing
    assert "No question matches the search zzz-no-such-thing" in nothing["text"]
    browser.screenshot(screenshots / f"{engine}-nothing-found.png")
    browser.click("#nothing .reset")
    assert len(browser.script(ROW_IDS)) > 10
    assert browser.script("return document.getElementById('nothing').hidden") is True
    opened(browser, url(page, "#label=answerable"))
    assert browser.script("return document.getElementById('link-problem').hidden") is True


def test_a_question_takes_the_focus_and_sort_arrows_are_not_read(
    browser: Driver, page: Page
) -> None:
    browser.resize(1280, 800)
    opened(browser, url(page))
    unsorted = browser.script(SORT_NAME)
    browser.script("document.querySelectorAll('#grid-head .sort')[0].focus();")
    browser.keys("Enter")
    sorted_ = browser.script(SORT_NAME)
    assert unsorted == {"name": "id", "sort": "none", "drawn": ""}, unsorted
    assert sorted_ == {"name": "id", "sort": "ascending", "drawn": " \u25b2"}, sorted_
    if isinstance(browser, Browser):  # and as Chromium's accessibility tree names it
        assert browser.label("#grid-head .sort") == "id"
    browser.script("document.querySelector('#grid-space .grid-row').focus();")
    browser.keys("ArrowDown", "Enter")
    browser.wait_for("return document.querySelector('.why-text')")
    where = browser.script(
        "var e = document.activeElement;"
        "return {tag: e.tagName, inside: document.getElementById('question-view').contains(e),"
        " id: e.id};"
    )
    assert where == {"tag": "H2", "inside": True, "id": "question-title"}, where
    browser.script("document.body.focus();")
    browser.click(".question-nav a[rel=next]")
    browser.wait_for(
        "return document.querySelector('.question-nav .position').textContent === '3 of 10,000'"
        " && document.activeElement.id === 'question-title'"
    )


def test_next_highlight_goes_on_from_where_the_reader_is(browser: Driver, page: Page) -> None:
    browser.resize(1280, 800)
    opened(browser, url(page, "#q=q000005"))  # answerable by its second chunk
    browser.wait_for("return document.querySelector('.evidence-unit')")
    total = browser.script(
        "return Array.from(document.querySelectorAll('#question-view mark'))"
        ".filter(m => !m.closest('[hidden]')).length"
    )
    assert total >= 3
    browser.click(".go-evidence")
    browser.click(".next-mark")
    at = browser.script(
        "var m = document.querySelector('mark.current');"
        "var e = document.querySelector('.evidence-unit');"
        "return {after: e.contains(m) || Boolean(e.compareDocumentPosition(m)"
        " & Node.DOCUMENT_POSITION_FOLLOWING),"
        " count: document.querySelector('.mark-count').textContent};"
    )
    assert at["after"] and at["count"] != f"highlight 1 of {total}", at
    number = int(at["count"].split()[1])
    browser.click(".next-mark")
    expected = number + 1 if number < total else 1
    assert browser.script("return document.querySelector('.mark-count').textContent") == (
        f"highlight {expected} of {total}"
    )


def test_the_whole_question_is_a_button_away_at_any_width(
    browser: Driver, named: Page, screenshots: Path
) -> None:
    engine = browser.name
    browser.resize(1280, 800)
    opened(browser, url(named, "#q=" + NAMED.format(6)))
    browser.wait_for("return document.querySelector('.why-text')")
    fold = (
        "var t = document.getElementById('question-title');"
        "var b = document.querySelector('#question-view .unfold');"
        "return {button: Boolean(b && !b.hidden && b.offsetHeight),"
        " clipped: t.scrollHeight > t.clientHeight + 1};"
    )
    assert browser.script(fold) == {"button": False, "clipped": False}
    browser.resize(390, 800)  # a phone: no hover, the fold hides the question's end
    browser.wait_for("return document.querySelector('#question-view .unfold:not([hidden])')")
    assert browser.script(fold) == {"button": True, "clipped": True}
    browser.click("#question-view .unfold")
    assert browser.script(fold) == {"button": True, "clipped": False}
    browser.screenshot(screenshots / f"{engine}-whole-question-phone.png")
    browser.resize(1280, 800)


def test_the_csv_export_neutralises_formulas_and_starts_with_a_byte_order_mark(
    browser: Driver, named: Page
) -> None:
    browser.resize(1280, 800)
    opened(browser, url(named, "#sort=id"))
    text = _download(browser, "#export-csv", "run-questions.csv")
    assert text.startswith("\ufeffid,question,")
    table = list(csv.DictReader(io.StringIO(text[1:], newline="")))
    questions = {int(r["id"].rsplit("-", 1)[1]): r["question"] for r in table}
    for index, formula in FORMULAS.items():
        if index != 6:
            assert questions[index] == "'" + formula, (index, questions[index])
    assert questions[6] == LONG_QUESTION
    assert table[0]["total"] == "3" and table[0]["id"] == NAMED.format(0)
    jsonl = _download(browser, "#export-jsonl", "run-questions.jsonl")
    assert json.loads(jsonl.splitlines()[0])["question"] == FORMULAS[0]


@pytest.mark.chromium
def test_the_demo_build_s_page_shows_an_unanswerable_question_s_windows(
    tmp_path: Path, screenshots: Path
) -> None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no chromium / chromedriver (Debian: apt-get install chromium chromium-driver)")
    config = luigi_config(
        tmp_path,
        vector_index={"backend": "candidates"},
        build={"name": "t", "shard_size": "100", "k1": "20", "k2": "10"},  # few tasks
    )
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config)
    parser.remove_option("vector_index", "kind")  # the candidate vector stage: no embedding
    with open(config, "w") as handle:
        parser.write(handle)
    result = run_luigi(config, "BuildReport")
    assert result.returncode == 0, result.stderr[-3000:]
    address = (tmp_path / "outputs" / "t" / "report" / "explorer" / "index.html").as_uri()
    with headless_chromium(chromium, driver) as browser:
        opened(browser, address + "#label=unanswerable")
        labels = browser.script(
            "return Array.from(document.querySelectorAll('#grid-space .grid-row'))"
            ".map(r => r.children[4].textContent);"
        )
        assert labels and set(labels) == {"unanswerable"}
        browser.click("#grid-space .grid-row")
        browser.wait_for("return document.querySelector('.token-stage .unit')")
        page_text = browser.text()
        assert (
            "Why unanswerable" in page_text and "the judge said no to the vector stage" in page_text
        )
        aliases = browser.script(
            "return Array.from(document.querySelectorAll('.chip.alias')).map(c => c.textContent);"
        )
        marked = browser.script(
            "return Array.from(document.querySelectorAll('.token-stage .window mark.alias'))"
            ".map(m => m.textContent);"
        )
        verdicts = browser.script(
            "return Array.from(document.querySelectorAll('.token-stage .verdict'))"
            ".map(v => v.textContent);"
        )
        browser.screenshot(screenshots / "chromium-demo-unanswerable-question.png")
    assert verdicts and set(verdicts) == {"no"}
    assert marked and {m.lower() for m in marked} <= {a.lower() for a in aliases}
