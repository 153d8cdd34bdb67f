"""How far the labels can be trusted, in words: the section of the report and the dataset card,
and the summary's lines.

From what the steps recorded: each pool's `audit.json`, the splits' verbatim counts (their
stats), and the annotation agreement report where people annotated a sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tipqa.audit.judge_audit import JUDGE_AUDITED
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
        f"{settings['budget']} new passages per question with the build's judge: "
        f"{left_out(f)}evidence was found for {f['found']:,}, an estimated "
        f"{percent(f['rate'])} of the label answerable (exact 95% CI {interval(f['ci95'])}). "
        "This is a lower bound on the label's error: evidence that no relaxation reaches stays "
        "unseen."
    )


def left_out(figures: Mapping[str, Any]) -> str:
    """The words for a label's audited questions left undetermined (a judgment failed)."""
    failed = int(figures.get("failed", 0))
    if not failed:
        return ""
    return (
        f"{failed:,} of them are undetermined (a judgment failed) and left out, and of the "
        f"other {figures['audited'] - failed:,} "
    )


def undetermined_line(audits: Mapping[str, dict[str, Any]]) -> str:
    """The audited questions left undetermined, per pool and label ("" when none)."""
    parts = [
        f"pool `{pool}`: "
        + ", ".join(f"{audit['by_label'][label].get('failed', 0):,} {label}" for label in AUDITED)
        for pool, audit in audits.items()
        if any(audit["by_label"][label].get("failed") for label in AUDITED)
    ]
    if not parts:
        return ""
    return (
        "Audited questions left undetermined (a judgment of the audit failed; left out of the "
        "shares, never counted as a no): " + "; ".join(parts) + "."
    )


def judge_audit_table(audits: Mapping[str, dict[str, Any]]) -> str:
    """Per pool and label: the share the search audit found answerable, and the share the
    second judge disputes, each with its exact interval."""
    header = ["Pool", "Label", "Labelled", "Search audit: found", "95% CI (exact)"]
    header += ["Second judge: disputed", "95% CI (exact)", "Undetermined"]
    rows = []
    for pool, audit in audits.items():
        judged = audit.get("judge_audit")
        if judged is None:
            continue
        for label in JUDGE_AUDITED:
            j = judged[label]
            f = audit["by_label"].get(label)
            found = "not searched" if f is None else f"{f['found']} of {_determined(f)}"
            found += "" if f is None or f["rate"] is None else f" ({percent(f['rate'])})"
            disputed = f"{len(j['disputed'])} of {_determined(j)}"
            disputed += "" if j["rate"] is None else f" ({percent(j['rate'])})"
            searched = "-" if f is None else interval(f["ci95"])
            row = [pool, label, j["labelled"], found, searched, disputed, interval(j["ci95"])]
            rows.append([*row, j.get("failed", 0)])
    return markdown_table(header, rows, _count)


def _determined(figures: Mapping[str, Any]) -> int:
    """The audited questions of a label that are not undetermined."""
    return int(figures["audited"]) - int(figures.get("failed", 0))


def judge_quotable(pool: str, audit: dict[str, Any]) -> str:
    """The judge audit of one pool in a paragraph a paper can quote."""
    judged, settings = audit["judge_audit"], audit["settings"]["audit"]
    a, u, d = (judged[label] for label in JUDGE_AUDITED)
    agreement = judged["agreement"]
    kappa = agreement["kappa"]
    ci = agreement["ci95"]
    kappa_words = (
        "Cohen's kappa undefined"
        if kappa is None
        else f"Cohen's kappa {kappa:.2f}"
        + ("" if ci is None else f", bootstrap 95% CI {ci[0]:.2f} to {ci[1]:.2f}")
    )
    observed = agreement["observed"]
    return (
        f"A second judge ({judge_name(judged['judge'])}) re-judged a seeded random sample of "
        f"pool `{pool}`'s labels (share {settings['judge_sample']} of each, seed "
        f"{settings['seed']}) with the build's prompt. Of {_determined(a):,} answerable "
        f"questions it rejected the accepted evidence of {len(a['disputed']):,}, an estimated "
        f"{percent(a['rate'])} of the label (exact 95% CI {interval(a['ci95'])}). Reading again "
        f"the passages the build judged, in its order and at most {settings['budget']} per "
        f"question, it accepted one for {len(u['disputed']):,} of {_determined(u):,} "
        f"unanswerable questions ({percent(u['rate'])}, exact 95% CI {interval(u['ci95'])}) "
        f"and {len(d['disputed']):,} of {_determined(d):,} discarded ones "
        f"({percent(d['rate'])}). On the {agreement['units']:,} passages both judges read they "
        f"agreed on {percent(observed)} ({kappa_words}). A dispute is a disagreement between "
        "two judges, not a proven error, and an error both judges make stays unseen."
    )


def judge_name(identity: Mapping[str, Any]) -> str:
    """A judge in words: its backend and model."""
    model = identity.get("model")
    return f"`{identity.get('backend')}`" + (f" model `{model}`" if model else "")


UNMEASURED = (
    'The judge\'s own errors are not measured in this build: a "yes" on a passage that does '
    'not state the answer (a false answerable label) and a "no" on the real evidence (a false '
    "unanswerable one) are seen by no audit. To measure both, add a second judge, "
    "`[audit.judge]` (the keys of `[judge]`: another model on the same server, or another "
    "backend), and the audit re-judges a sample of each label (`[audit] judge_sample`, default "
    "0.1); see docs/trust.md."
)
"""What the report and card say of the judge's errors when no second judge measured them."""


def judge_audit_part(audits: Mapping[str, dict[str, Any]]) -> list[str]:
    """The judge audit's paragraphs and table, or the words saying it was not measured."""
    judged = {pool: audit for pool, audit in audits.items() if audit.get("judge_audit")}
    if not judged:
        return ["### The judge's own errors", UNMEASURED]
    return [
        "### The judge audit: a second judge",
        *(judge_quotable(pool, audit) for pool, audit in judged.items()),
        "Per label, the share the search audit found answerable beside the share the second "
        "judge disputes:",
        judge_audit_table(judged),
        *filter(None, [judge_undetermined_line(judged)]),
    ]


def judge_undetermined_line(audits: Mapping[str, dict[str, Any]]) -> str:
    """The judge audit's undetermined questions, per pool ("" when none)."""
    parts = [
        f"pool `{pool}`: {sum(audit['judge_audit'][label]['failed'] for label in JUDGE_AUDITED):,}"
        for pool, audit in audits.items()
        if any(audit["judge_audit"][label]["failed"] for label in JUDGE_AUDITED)
    ]
    if not parts:
        return ""
    return (
        "Questions left undetermined by the judge audit (a judgment of the second judge failed; "
        "left out of the shares, never counted as a no): " + "; ".join(parts) + "."
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
    shown, kappa = _with_people(block)
    return (
        f"The judge agreed with people on {shown} of {block['pairs']:,} judged "
        f"(document, question) pairs ({agreement['items']:,} items annotated){kappa}"
    )


def second_agreement_line(agreement: dict[str, Any]) -> str:
    """The second judge's (`[audit.judge]`) agreement with people on the same items."""
    block = agreement["second_judge"]
    shown, kappa = _with_people(block)
    failed = f"; {block['failed']} items whose judgment failed left out" if block["failed"] else ""
    return (
        f"The second judge (`{block['judge']}`, `[audit.judge]`) agreed with people on "
        f"{shown} of the same items' {block['pairs']:,} pairs{failed}{kappa}"
    )


def _with_people(block: dict[str, Any]) -> tuple[str, str]:
    """A judge's agreement with people in words (with its interval), and the sentence's end
    (with Cohen's kappa where it is defined)."""
    value, ci = block["agreement"]["value"], block["agreement"]["ci95"]
    kappa = block["kappa"]["value"]
    shown = "-" if value is None else f"{value:.1f}%"
    span = "" if ci is None else f" (bootstrap 95% CI {ci[0]:.1f}% to {ci[1]:.1f}%)"
    return shown + span, (f", Cohen's kappa {kappa:.2f}." if kappa is not None else ".")


def trust_section(
    audits: Mapping[str, dict[str, Any]],
    verbatim: Mapping[str, Mapping[str, Mapping[str, int]]] | None,
    agreement: dict[str, Any] | None = None,
) -> str:
    """The section "How far the labels can be trusted" (empty when nothing was measured)."""
    parts = []
    if agreement is not None:
        parts += ["### The judge against people", agreement_line(agreement)]
        parts += [second_agreement_line(agreement)] if agreement.get("second_judge") else []
    if audits:
        applied = any(audit["applied"] for audit in audits.values())
        parts += [
            "### The audit of the unanswerable and discarded labels",
            *(quotable(pool, audit) for pool, audit in audits.items()),
            audit_table(audits),
            *filter(None, [undetermined_line(audits)]),
            "The labels are those of Algorithm 1"
            + (
                "; the questions the audit found are answerable (stage `audit`) in these splits."
                if applied
                else "; the audit reports and changes none of them."
            ),
            "What the audit cost the judge: "
            + " ".join(cost_line(pool, audit) for pool, audit in audits.items()),
            *judge_audit_part(audits),
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
            failed = int(f.get("failed", 0))
            undetermined = f", {failed} undetermined: a judgment failed" if failed else ""
            shown.append(
                f"{f['found']} of {f['audited'] - failed} {label} with evidence "
                f"({percent(f['rate'])}, 95% CI {interval(f['ci95'])}{undetermined})"
            )
    build = audit["build"]["judge_calls"]
    found = "; ".join(shown) or "nothing to audit"
    applied = ", moved to answerable" if audit["applied"] and audit["found"] else ""
    line = (
        f"- audit of pool **{pool}**: {found}{applied}; {audit['judge_calls']:,} judge prompts "
        f"({share_of(audit['judge_calls'], build)} of the build's)"
    )
    judged = audit.get("judge_audit")
    if judged is None:
        return line
    disputes = "; ".join(
        f"{len(j['disputed'])} of {_determined(j)} {label}"
        + (f", {j['failed']} undetermined" if j.get("failed") else "")
        for label in JUDGE_AUDITED
        for j in [judged[label]]
        if j["audited"]
    )
    return (
        f"{line}\n- judge audit of pool **{pool}** ({judge_name(judged['judge'])}): disputes "
        f"{disputes or 'nothing sampled'}; {judged['judge_calls']:,} prompts "
        f"({share_of(judged['judge_calls'], build)} of the build's)"
    )


def _count(value: Any) -> str:
    """A table cell: a count with thousands separators, anything else as it is."""
    return f"{value:,}" if isinstance(value, int) else str(value)
