"""How far the labels can be trusted, in words: the section of the report and the dataset card,
and the summary's lines.

From what the steps recorded: each pool's `audit.json`, the splits' verbatim counts (their
stats), and the annotation agreement report where people annotated a sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tipqa.audit.relaxations import CAUSES
from tipqa.core.text import markdown_table
from tipqa.dataset.splits import AUDITED


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal ("-" for none)."""
    return "-" if value is None else f"{value:.1%}"


def interval(ci: list[float] | None) -> str:
    """A 95% interval of shares ("-" for none)."""
    return "-" if ci is None else f"{ci[0]:.1%} to {ci[1]:.1%}"


def share_of(part: int, whole: int) -> str:
    """`part` as a share of `whole` ("-" when `whole` is 0)."""
    return percent(part / whole) if whole else "-"


def causes(by_cause: Mapping[str, int]) -> str:
    """The findings by cause, those with any."""
    return ", ".join(f"{cause} {by_cause[cause]}" for cause in CAUSES if by_cause.get(cause)) or "-"


def audit_table(audits: Mapping[str, dict[str, Any]]) -> str:
    """Per pool and label: labelled, audited, found, the share found and its interval, causes."""
    header = ["Pool", "Label", "Labelled", "Audited", "Evidence found", "Share found"]
    header += ["95% CI (exact)", "By cause"]
    rows = []
    for pool, audit in audits.items():
        for label in AUDITED:
            f = audit["by_label"][label]
            shares = [percent(f["rate"]), interval(f["ci95"]), causes(f["by_cause"])]
            rows.append([pool, label, f["labelled"], f["audited"], f["found"], *shares])
    return markdown_table(header, rows, _count)


def cost_line(pool: str, audit: dict[str, Any]) -> str:
    """What the audit of a pool cost the judge, beside what the build cost it."""
    build = audit["build"]
    calls, tokens = audit["judge_calls"], audit["prompt_tokens"]
    line = (
        f"Pool `{pool}`: {calls:,} judge prompts, "
        f"{share_of(calls, build['judge_calls'])} of the build's {build['judge_calls']:,}"
    )
    if build["prompt_tokens"]:
        line += (
            f"; {tokens:,} prompt tokens, {share_of(tokens, build['prompt_tokens'])} of the "
            f"build's {build['prompt_tokens']:,}"
        )
    return line + "."


def quotable(pool: str, audit: dict[str, Any]) -> str:
    """The audit of one pool in a sentence a paper can quote."""
    f = audit["by_label"]["unanswerable"]
    settings = audit["settings"]["audit"]
    if not f["audited"]:
        return f"Pool `{pool}` has no unanswerable question to audit."
    return (
        f"Of the {f['labelled']:,} questions of pool `{pool}` labelled unanswerable, a seeded "
        f"random sample of {f['audited']:,} (share {settings['sample']}, seed "
        f"{settings['seed']}) was searched again where the build did not look (each keyword "
        "left out in turn, an answer alias alone, the vector stage beyond k2), judging at most "
        f"{settings['budget']} new passages per question with the build's judge: evidence was "
        f"found for {f['found']:,}, an estimated {percent(f['rate'])} of the label answerable "
        f"(exact 95% CI {interval(f['ci95'])}). This is a lower bound on the label's error: "
        "evidence that no relaxation reaches stays unseen."
    )


def verbatim_table(verbatim: Mapping[str, Mapping[str, Mapping[str, int]]]) -> str:
    """Per split and label: questions, those found verbatim, those with an alias beside."""
    header = ["Split", "Label", "Questions", "In a document verbatim", "... with an answer alias"]
    rows = [
        [split, label, counts["questions"], counts["in_corpus"], counts["with_alias"]]
        for split, labels in verbatim.items()
        for label, counts in labels.items()
    ]
    return markdown_table(header, rows, _count)


def agreement_line(agreement: dict[str, Any]) -> str:
    """The judge's agreement with people, with its interval, from the agreement report."""
    block = agreement["llm_human"]
    value, ci = block["agreement"]["value"], block["agreement"]["ci95"]
    kappa = block["kappa"]["value"]
    shown = "-" if value is None else f"{value:.1f}%"
    span = "" if ci is None else f" (bootstrap 95% CI {ci[0]:.1f}% to {ci[1]:.1f}%)"
    line = (
        f"The judge agreed with people on {shown}{span} of {block['pairs']:,} judged "
        f"(document, question) pairs ({agreement['items']:,} items annotated)"
    )
    return line + (f", Cohen's kappa {kappa:.2f}." if kappa is not None else ".")


def trust_section(
    audits: Mapping[str, dict[str, Any]],
    verbatim: Mapping[str, Mapping[str, Mapping[str, int]]] | None,
    agreement: dict[str, Any] | None = None,
) -> str:
    """The section "How far the labels can be trusted" (empty when nothing was measured)."""
    parts = []
    if agreement is not None:
        parts += ["### The judge against people", agreement_line(agreement)]
    if audits:
        applied = any(audit["applied"] for audit in audits.values())
        parts += [
            "### The audit of the unanswerable and discarded labels",
            *(quotable(pool, audit) for pool, audit in audits.items()),
            audit_table(audits),
            "The labels are those of Algorithm 1"
            + (
                "; the questions the audit found are answerable (stage `audit`) in these splits."
                if applied
                else "; the audit reports and changes none of them."
            ),
            "What the audit cost the judge: "
            + " ".join(cost_line(pool, audit) for pool, audit in audits.items()),
        ]
    if verbatim:
        parts += [
            "### Questions found verbatim in the corpus",
            "Documents that contain a question's text as a phrase (case and punctuation "
            "ignored), and those that also contain an answer alias (columns `verbatim_docs` "
            "and `verbatim_with_alias`):",
            verbatim_table(verbatim),
        ]
    if not parts:
        return ""
    return "\n\n".join(["## How far the labels can be trusted", *parts])


def summary_line(pool: str, audit: dict[str, Any]) -> str:
    """The build summary's line for one pool's audit."""
    shown = []
    for label in AUDITED:
        f = audit["by_label"][label]
        if f["audited"]:
            shown.append(
                f"{f['found']} of {f['audited']} {label} with evidence ({percent(f['rate'])}, "
                f"95% CI {interval(f['ci95'])})"
            )
    build = audit["build"]["judge_calls"]
    found = "; ".join(shown) or "nothing to audit"
    applied = ", moved to answerable" if audit["applied"] and audit["found"] else ""
    return (
        f"- audit of pool **{pool}**: {found}{applied}; {audit['judge_calls']:,} judge prompts "
        f"({share_of(audit['judge_calls'], build)} of the build's)"
    )


def _count(value: Any) -> str:
    """A table cell: a count with thousands separators, anything else as it is."""
    return f"{value:,}" if isinstance(value, int) else str(value)
