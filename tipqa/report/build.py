"""A report of a build for humans: the funnel of outcomes, and answerability by match count.

From the splits folder it writes, under the report folder, `funnel.png` (outcomes per stage, for
every pool and split), `matches.png` (the share of answerable questions by the number of
documents that contain all of a question's keywords and an alias, binned by powers of ten like
figure 3 of the paper), `report.json` (the numbers behind both, and what the corpus reader
skipped as the splits recorded it), the explorer page (`explorer/`, see
`tipqa.report.explorer.write`) and `report.md`, written last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tipqa.audit.markdown import trust_section
from tipqa.boundary.hub import shown_steps, split_shares
from tipqa.builder.assemble import token_index
from tipqa.builder.step_inputs import ReportInputs
from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, iter_records, write_json
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import LabeledQuestion
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.core.text import markdown_table
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.dataset.figures import draw_boundary, draw_funnel, draw_matches
from tipqa.dataset.match_bins import MATCH_BINS, UNKNOWN_BIN, match_bin
from tipqa.dataset.partition import NO_KEYWORDS_HINT
from tipqa.dataset.provenance import REMEDY
from tipqa.dataset.splits import SPLITS, read_audit
from tipqa.hub.card import rules_warning
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import made_by, write_explorer
from tipqa.report.funnel import (
    AUDIT_OUTCOME,
    TOKEN_OUTCOMES,
    VECTOR_OUTCOMES,
    pool_funnel,
    split_funnel,
)


def match_shares(rows: Iterable[LabeledQuestion]) -> list[dict[str, Any]]:
    """Per bin: answerable and unanswerable counts and the answerable share (None if empty)."""
    labels = [b.label for b in MATCH_BINS] + [UNKNOWN_BIN]
    counts = {label: {"answerable": 0, "unanswerable": 0} for label in labels}
    for row in rows:
        if row.label in ("answerable", "unanswerable"):
            counts[match_bin(row.total_matches)][row.label] += 1
    out = []
    for label in labels:
        answerable, unanswerable = counts[label]["answerable"], counts[label]["unanswerable"]
        total = answerable + unanswerable
        if label == UNKNOWN_BIN and total == 0:
            continue
        share = answerable / total if total else None
        out.append(
            {"bin": label, "answerable": answerable, "unanswerable": unanswerable, "share": share}
        )
    return out


def _table(header: list[str], rows: Sequence[Sequence[Any]]) -> str:
    return markdown_table(header, rows, _cell)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1%}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render_markdown(data: dict[str, Any]) -> str:
    """The report's Markdown, pointing at the two figures."""
    pools = data["funnel"]["pools"]
    splits = data["funnel"]["splits"]
    audited = any(f[AUDIT_OUTCOME] for f in pools.values())
    pool_keys = ["questions", *TOKEN_OUTCOMES, "to_vector", *VECTOR_OUTCOMES]
    pool_header = ["Pool", "Questions", "Token: answerable", "Token: discarded",
                   "Token: undetermined", "To vector", "Vector: answerable",
                   "Vector: unanswerable", "Vector: undetermined"]  # fmt: skip
    split_keys = ["questions", "answerable_token", "answerable_vector", "unanswerable_vector"]
    split_header = ["Split", "Questions", "Answerable (token)", "Answerable (vector)"]
    split_header.append("Unanswerable")
    if audited:
        pool_keys.append(AUDIT_OUTCOME)
        pool_header.append("Audit: answerable")
        split_keys.insert(3, AUDIT_OUTCOME)
        split_header.insert(4, "Answerable (audit)")
    pool_table = _table(pool_header, [[n, *(f[k] for k in pool_keys)] for n, f in pools.items()])
    split_table = _table(
        split_header, [[n, *(f[k] for k in split_keys)] for n, f in splits.items()]
    )
    parts = [
        "# Build report",
        *([data["rules_warning"]] if data.get("rules_warning") else []),
        "## Outcomes per stage",
        "Each pool's questions through the token stage (keyword search, at most k1 documents "
        "judged) and then the vector stage (k2 nearest chunks judged):",
        pool_table,
        "The splits (discarded and undetermined questions are in none):",
        split_table,
        "![Outcomes per stage](funnel.png)",
        "## Answerable share by keyword-matching documents",
        "Questions binned by the number of corpus documents that contain all of their keywords "
        "and an alias of the answer (the token search's total), as in figure 3 of the paper.",
    ]
    for name, shares in data["matches"].items():
        parts.append(f"Split `{name}`:")
        parts.append(
            _table(
                ["Matching documents", "Answerable", "Unanswerable", "Answerable share"],
                [[s["bin"], s["answerable"], s["unanswerable"], s["share"]] for s in shares],
            )
        )
    parts.append("![Answerable share by matching documents](matches.png)")
    parts += confirmation_markdown(data["confirmation"])
    trust = trust_section(data.get("audit", {}), data.get("verbatim"))
    if trust:
        parts.append(trust)
    left = {name: n for name, n in data.get("no_keywords", {}).items() if n}
    if left:
        parts += [
            "## Questions left without keywords",
            NO_KEYWORDS_HINT,
            _table(
                ["Pool", "Without keywords"],
                [[n, f"{k} of {pools[n]['questions']}"] for n, k in left.items()],
            ),
        ]
    if data.get("corpus"):
        parts += ["## Corpus records", CorpusReading.from_dict(data["corpus"]).markdown()]
    if data.get("boundary"):
        parts.extend(boundary_markdown(data["boundary"]))
    validation = data.get("validation")
    if validation and validation["short"]:
        parts.append(
            f"Note: the validation split asked for {validation['requested_per_label']:,} "
            f"questions per label and got {validation['taken_per_label']:,}."
        )
    return "\n\n".join(parts) + "\n"


def confirmation_markdown(pools: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The prompts of the build's judge and of the confirming judge (`[judge.confirm]`), per
    pool, when there was a confirming judge."""
    if not pools:
        return []
    rows = []
    for name, counts in pools.items():
        judge, asked = counts["prompts"], counts["confirmation_prompts"]
        share = f"{asked / judge:.1%}" if judge else "0"
        rows.append(
            [name, judge, asked, share, counts["confirmation_yes"], counts["confirmation_no"]]
        )
    header = ["Pool", "Judge prompts", "Confirmation prompts", "Share", "Confirmed", "Refuted"]
    return [
        "## Confirmation",
        "Every yes of the build's judge was asked again of the confirming judge "
        "([judge.confirm]); a unit is evidence only where both said yes (docs/trust.md):",
        _table(header, rows),
    ]


def boundary_markdown(shares: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The report's section on the answerable share against the training step."""
    names = list(shares)
    steps = [entry["step"] for entry in next(iter(shares.values()), [])]
    shown = set(shown_steps(steps))
    by_step = {name: {entry["step"]: entry for entry in shares[name]} for name in names}
    rows = [
        [f"step {step:,}", *(by_step[name][step]["answerable_share"] for name in names)]
        for step in steps
        if step in shown
    ]
    more = (
        f" ({len(shown)} of {len(steps)} shown; all in report.json)"
        if len(steps) > len(shown)
        else ""
    )
    return [
        "## Answerable share over training",
        "The share of each split's decided questions that are answerable as of a checkpoint: "
        "some relevant evidence had been consumed by then" + more + ".",
        _table(["Checkpoint", *(f"{name}: answerable share" for name in names)], rows),
        "![Answerable share against the training step](boundary.png)",
    ]


def write_report(
    run: RunLayout,
    record: StepRecord,
    boundary_steps: Sequence[int] = (),
    texts: TextSource | None = None,
    audits: Mapping[str, str] | None = None,
) -> StepStats:
    """Write the figures, the numbers, the explorer and the Markdown report of a build's splits.

    With `boundary_steps` (the checkpoints of `[boundary]`) it adds the answerable share of
    every split as of each checkpoint (`boundary.png`, from the pools' boundary files). The
    explorer's window texts come from `texts` (none recomputed without). `audits` names the
    audited pools with their audits' fingerprints: their figures join the report, with the
    splits' verbatim counts.
    """
    layout = SplitsLayout(run.splits)
    info = read_stats(layout.stats, REMEDY).get("info")
    if not isinstance(info, dict) or "splits" not in info or "pools" not in info:
        raise InputError("not a split statistics file", path=str(layout.stats))
    stats = StepStats(Step.REPORT, provenance=record.provenance())
    names = [s for s in SPLITS if s in info["splits"]]
    matches = {}
    for name in names:
        matches[name] = match_shares(iter_records(layout.questions(name), LabeledQuestion))
        stats.add(
            f"{name}.questions", sum(s["answerable"] + s["unanswerable"] for s in matches[name])
        )
    funnel = {
        "pools": {name: pool_funnel(p) for name, p in info["pools"].items()},
        "splits": {name: split_funnel(info["splits"][name]) for name in names},
    }
    data = {
        "funnel": funnel,
        "matches": matches,
        "validation": info.get("validation"),
        "no_keywords": {name: int(p.get("no_keywords", 0)) for name, p in info["pools"].items()},
        "corpus": info.get("parameters", {}).get("corpus_reading"),
        "audit": {pool: read_audit(run.pool(pool), fp) for pool, fp in (audits or {}).items()},
        "verbatim": info.get("verbatim"),
        "rules_warning": rules_warning(info.get("parameters", {})),
        "confirmation": {
            name: pool["judging"] for name, pool in info["pools"].items() if "judging" in pool
        },
    }
    out = run.report
    draw_funnel(funnel, out / "funnel.png")
    draw_matches(matches, out / "matches.png")
    stats.add("figures", 2)
    if boundary_steps:
        shares = split_shares(run, info, boundary_steps)
        data["boundary"] = shares
        draw_boundary(shares, out / "boundary.png")
        stats.add("figures")
    write_json(out / "report.json", data)
    explorer = write_explorer(
        run, texts or TextSource(), figures_from=out, made_by=record.fingerprint
    )
    for name, count in sorted(explorer.items()):
        stats.add(f"explorer.{name}", count)
    with atomic_open(out / "report.md") as handle:
        handle.write(render_markdown(data).encode())
    stats.write(run.report_stats)
    return stats


def page_is_its_own(run: RunLayout, fingerprint: str) -> bool:
    """Whether the report's explorer page is the one the report step of `fingerprint` wrote
    (not one written since by `tipqa explore`, from other inputs)."""
    return made_by(run.report / "explorer") == fingerprint


def write_build_report(inputs: ReportInputs, layout: RunLayout) -> StepStats:
    """BuildReport: the report of the run's splits (and boundary, when it is built), its
    explorer's window texts from the token index the splits came from."""
    checkpoints = inputs.dating.checkpoints if inputs.dating is not None else ()
    texts = TextSource(fetch=token_index(inputs.index, layout).get)
    return write_report(layout, inputs.record, checkpoints, texts, inputs.audits)
