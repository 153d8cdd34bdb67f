"""Write the explorer: a static page over a build's questions, opened from disk, no server.

The folder holds `index.html`, `explorer.js` and `explorer.css` (copied from this package), the
report's figures under `figures/`, and the data under `data/` as JavaScript files that each
call one function with JSON (a page opened from `file://` may load scripts but not fetch
files): `meta.js` (the build's funnel, settings, audit and comparison figures, what the page's
codes mean, its size), `rows-NNNNN.js` (the table, `ROWS_PER_FILE` questions each, loaded one
after the other), `search-NNNNN.js` (the same questions' aliases, keywords and judged document
ids, for the search), `details-NNNNN.js` (the questions' pages, `DETAILS_PER_FILE` each,
loaded when one of theirs is opened) and `texts-NNNNN.js` (every window, chunk and evidence
text once, see `tipqa.report.explorer.store`). The page builds its DOM with `textContent`
only: corpus text is never parsed as HTML. The folder is written next to its place and moved
there whole.

The page keeps texts whole with the document's text around them (`WHOLE`, the report's page)
or, for the Hub's copy (`EXCERPTS`), only excerpts around the matches of the windows that are not
evidence, and no context.

`meta.js` names the step that wrote the page (`made_by`, its fingerprint; none for `tipqa
explore`): a step whose page was written again by another hand, from other inputs (an audit of
another sample, another build to compare), is not complete (`made_by`).
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import InputError
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS
from tipqa.core.stats import read_stats
from tipqa.dataset.provenance import REMEDY
from tipqa.dataset.splits import SPLITS, SplitsLayout
from tipqa.report.explorer.audit import PoolAudit, pool_audit
from tipqa.report.explorer.collect import TextSource, collect_pool
from tipqa.report.explorer.encode import FIELDS, Encoder
from tipqa.report.explorer.store import WHOLE, TextForm, TextStore
from tipqa.report.funnel import pool_funnel, split_funnel

ROWS_PER_FILE = 10_000
DETAILS_PER_FILE = 100
ASSETS = ("index.html", "explorer.js", "explorer.css")
FIGURES = {
    "funnel.png": "The funnel: questions of each pool and split by the stage that decided them "
    "and their label.",
    "matches.png": "Answerable and unanswerable shares of each split by the number of documents "
    "that matched the keywords and an alias.",
    "boundary.png": "The answerable share of each split as of each training checkpoint.",
}
"""The report's figures the page shows, with the text that says what each shows."""
STAGES = ("token", "vector")
ROW = ("id", "question", "answer", "pool", "label", "stage", "split", "total", "judged", "marks")
"""The fields of a table row (pool, label, stage and split as indexes into the meta's lists)."""


def flatten(settings: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    """Nested settings as `[dotted.key, value]` rows (lists kept as values)."""
    rows: list[list[Any]] = []
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, name + "."))
        else:
            rows.append([name, value])
    return rows


def _script(call: str, index: int | None, data: object) -> bytes:
    """A data file: one call of the page's loader with the JSON."""
    head = f"tipqa.{call}(" + ("" if index is None else f"{index},")
    return head.encode() + orjson.dumps(data) + b");\n"


def membership(splits: SplitsLayout, names: Iterable[str]) -> dict[str, str]:
    """The split of every question that is in one."""
    found: dict[str, str] = {}
    for name in names:
        path = splits.questions(name)
        if not path.is_file():
            raise InputError("the split has no questions file", path=str(path))
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    found[orjson.loads(line)["id"]] = name
    return found


def _documents(details: dict[str, Any]) -> list[str]:
    """The ids of the documents a question's page shows, evidence first."""
    ids = [details["evidence"]["doc"]] if details["evidence"] else []
    ids += [d["doc"] for d in details["token"]] + [c["doc"] for c in details["vector"]]
    return list(dict.fromkeys(ids))


class _Files:
    """The data files, filled one question at a time."""

    def __init__(self, data: Path, pools: list[str], splits: list[str], form: TextForm) -> None:
        self.data = data
        self.pools = {name: i for i, name in enumerate(pools)}
        self.labels = {name: i for i, name in enumerate(LABELS)}
        self.stages = {name: i for i, name in enumerate(STAGES)}
        self.splits = {name: i for i, name in enumerate(splits)}
        self.store = TextStore(self.write)
        self.encoder = Encoder(self.store, form)
        self.rows: list[list[Any]] = []
        self.search: list[list[Any]] = []
        self.documents: dict[str, int] = {}
        self.details: dict[str, Any] = {}
        self.count = 0
        self.bytes: Counter[str] = Counter()

    def write(self, name: str, content: bytes) -> None:
        """Write one data file (the whole folder is staged, then moved into place)."""
        (self.data / name).write_bytes(content)
        self.bytes[name.split("-")[0].removesuffix(".js")] += len(content)

    def add(
        self,
        pool: str,
        row: dict[str, Any],
        details: dict[str, Any],
        audit: PoolAudit | None,
        flip: dict[str, Any] | None,
    ) -> None:
        """Add one question; write a file whenever one is full."""
        page, marks = self.encoder.details(details, audit, flip)
        split = row["split"]
        self.rows.append(
            [
                row["id"],
                row["question"],
                row["answer"],
                self.pools[pool],
                self.labels[row["label"]],
                self.stages[row["stage"]],
                -1 if split is None else self.splits[split],
                row["total"],
                row["judged"],
                marks,
            ]
        )
        documents = [self.documents.setdefault(d, len(self.documents)) for d in _documents(details)]
        self.search.append([details["aliases"], details["keywords"], documents])
        self.details[row["id"]] = page
        self.count += 1
        if self.count % DETAILS_PER_FILE == 0:
            self.flush_details()
        if self.count % ROWS_PER_FILE == 0:
            self.flush_rows()

    def flush_details(self) -> None:
        """Write the pending question pages."""
        if self.details:
            index = (self.count - 1) // DETAILS_PER_FILE
            self.write(f"details-{index:05d}.js", _script("details", index, self.details))
            self.details = {}

    def flush_rows(self) -> None:
        """Write the pending table rows and their search data."""
        if self.rows:
            index = (self.count - 1) // ROWS_PER_FILE
            self.write(f"rows-{index:05d}.js", _script("rows", index, self.rows))
            search = {"documents": list(self.documents), "rows": self.search}
            self.write(f"search-{index:05d}.js", _script("search", index, search))
            self.rows, self.search, self.documents = [], [], {}


def write_explorer(
    run: RunLayout,
    source: TextSource,
    out: Path | None = None,
    figures_from: Path | None = None,
    form: TextForm = WHOLE,
    compare: dict[str, Any] | None = None,
    made_by: str | None = None,
) -> Counter[str]:
    """Write the explorer of a finished build (its splits made) into `out`; return its counts.

    `out` defaults to the report's `explorer/` folder; the report's figures are copied from
    `figures_from` (the report folder) where they are there. `form` says how texts that are not
    evidence are kept; `compare` is a comparison with another build
    (`tipqa.audit.compare.compare_runs`), whose flips the page shows. `made_by` is the
    fingerprint of the step that writes the page, recorded in it (see `made_by`).
    """
    out = out if out is not None else run.report / "explorer"
    layout = SplitsLayout(run.splits)
    info = read_stats(layout.stats, REMEDY).get("info")
    if not isinstance(info, dict) or "splits" not in info or "pools" not in info:
        raise InputError("not a split statistics file", path=str(layout.stats))
    pools = list(info["pools"])
    splits = [name for name in SPLITS if name in info["splits"]]
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "data").mkdir(parents=True)
    (staging / "figures").mkdir()
    files = _Files(staging / "data", pools, splits, form)
    members = membership(layout, splits)
    flips = {(f["pool"], f["id"]): f for f in (compare or {}).get("flips", [])}
    audits: dict[str, Any] = {}
    for name in pools:
        audit = pool_audit(run.pool(name))
        if audit is not None:
            audits[name] = audit.figures
        for item in collect_pool(name, run.pool(name), members, source):
            flip = flips.get((name, item.row["id"]))
            files.add(name, item.row, item.details, audit, flip)
    files.flush_details()
    files.flush_rows()
    files.store.flush()
    figures = []
    for figure, alt in FIGURES.items():
        if figures_from is not None and (figures_from / figure).is_file():
            shutil.copyfile(figures_from / figure, staging / "figures" / figure)
            figures.append({"src": f"figures/{figure}", "alt": alt})
    counts = Counter(source.counts)
    counts["questions"] = files.count
    counts["texts_shared"] = files.store.shared
    data_bytes = sum(files.bytes.values())
    meta = {
        "build": run.root.name,
        "made_by": made_by,
        "questions": files.count,
        "rows_per_file": ROWS_PER_FILE,
        "details_per_file": DETAILS_PER_FILE,
        "row_files": -(-files.count // ROWS_PER_FILE),
        "text_files": files.store.starts,
        "columns": ROW,
        "fields": FIELDS,
        "pools": pools,
        "labels": LABELS,
        "stages": STAGES,
        "splits": splits,
        "funnel": {
            "pools": {name: pool_funnel(p) for name, p in info["pools"].items()},
            "splits": {name: split_funnel(info["splits"][name]) for name in splits},
        },
        "figures": figures,
        "figures_note": _figures_note(figures_from),
        "parameters": flatten(info.get("parameters", {})),
        "texts": {
            "index": source.fetch is not None,
            "per_question": source.texts,
            "context": source.context if form.context else 0,
            "whole": form.whole,
            "around": form.around,
        },
        "audit": audits,
        "compare": _compared(compare),
        "bytes": dict(files.bytes),
        "counts": dict(counts),
    }
    files.write("meta.js", _script("meta", None, meta))
    for asset in ASSETS:
        (staging / asset).write_bytes(resources.files(__package__).joinpath(asset).read_bytes())
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    counts["data_bytes"] = data_bytes + files.bytes["meta"]
    return counts


def made_by(out: Path) -> str | None:
    """The fingerprint of the step that wrote the page in `out`, as its `meta.js` records it;
    None where no step wrote it (`tipqa explore`), it records none, or there is no page."""
    try:
        text = (out / "data" / "meta.js").read_bytes()
    except OSError:
        return None
    head, tail = b"tipqa.meta(", b");\n"
    if not (text.startswith(head) and text.endswith(tail)):
        return None
    try:
        meta = orjson.loads(text[len(head) : -len(tail)])
    except orjson.JSONDecodeError:
        return None
    found = meta.get("made_by") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def _figures_note(figures_from: Path | None) -> str:
    """What the page says where it shows no figure: a copy made without them (the Hub's), or
    a report that has none yet."""
    if figures_from is None:
        return "This copy of the page has no figures: the build report has them."
    return "No figures: the build report was not built when this page was written."


def _compared(compare: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page says of a comparison: the other build's name and the figures."""
    if compare is None:
        return None
    return {
        "other": Path(compare["b"]["run"]).name,
        "matrix": compare["matrix"],
        "flips_by_stage": compare["flips_by_stage"],
        "flips": len(compare["flips"]),
    }
