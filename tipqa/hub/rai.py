"""The Responsible-AI fields of `croissant.json` (the Croissant RAI vocabulary, `rai:`), in words.

From what the build recorded, never from the current configuration: the construction
parameters the splits kept (`splits/stats.json`), each pool's `audit.json` (the search audit
and, when a second judge was configured, its `judge_audit`), and the agreement report once
people annotated a sample. A figure that was not measured is said to be unmeasured, and how to
measure it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tipqa.audit.markdown import agreement_line, cost_line, interval, percent, quotable
from tipqa.dataset.provenance import OFFLINE_BACKENDS
from tipqa.dataset.splits import AUDITED
from tipqa.hub.card import PAPER_AUTHORS, PAPER_TITLE, rules_warning

JUDGE_AUDITED: tuple[str, ...] = ("answerable", "unanswerable", "discarded")
"""The labels a judge audit re-judges (`judge_audit` of `audit.json`)."""


@dataclass(frozen=True)
class Measured:
    """What the build measured of how far its labels hold: each pool's `audit.json`, and the
    annotation agreement report (None before people annotated)."""

    audits: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    agreement: dict[str, Any] | None = None


def llm(settings: Mapping[str, Any]) -> str:
    """A keyword extractor's or judge's recorded settings in words: backend, model, prompt and
    the prompt's SHA-256 (its version), or the offline rules' version."""
    backend = settings.get("backend")
    if backend in OFFLINE_BACKENDS:
        version = settings.get("rules_version")
        return f"offline rules (`{backend}`, version {version}), not a language model"
    text = f"`{backend}` model `{settings.get('model')}`, prompt template "
    text += f"`{settings.get('prompt')}` (SHA-256 {settings.get('prompt_sha256')})"
    return text + (f", mode `{settings['mode']}`" if settings.get("mode") else "")


def _windows(windows: Mapping[str, Any]) -> str:
    words = windows.get("max_words")
    size = f"of at most {words:,} words" if words else "sized to the judge's context"
    return f"windows {size}, at most {windows.get('max_windows')} per document"


def _vector(params: Mapping[str, Any]) -> str:
    embedder = params.get("embedder") or {}
    search = params.get("vector_search") or {}
    where = f"`{params.get('vector_index')}` index of every chunk of the corpus"
    if params.get("vector_index") == "candidates":
        where = f"chunks of the first {search.get('candidates')} documents by BM25"
    return f"{where}, embedded by `{embedder.get('backend')}` model `{embedder.get('model')}`"


def second_judges(audits: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct second judges of the pools' judge audits, in pool order."""
    found: list[dict[str, Any]] = []
    for audit in audits.values():
        judge = (audit.get("judge_audit") or {}).get("judge")
        if judge is not None and judge not in found:
            found.append(judge)
    return found


def annotation_protocol(info: Mapping[str, Any], audits: Mapping[str, dict[str, Any]]) -> list[str]:
    """`rai:dataAnnotationProtocol`: Algorithm 1, its settings, the prompts' versions, and what
    changed the labels after it (a confirming judge, an applied audit)."""
    params = info["parameters"]
    k1, k2 = params.get("k1"), params.get("k2")
    authors = ", ".join(PAPER_AUTHORS[:-1]) + f" and {PAPER_AUTHORS[-1]}"
    protocol = [
        f'Labels by Algorithm 1 of {authors}, "{PAPER_TITLE}". '
        "An LLM extracts keywords from each question; the token search finds the documents of "
        "the corpus that contain every keyword and an alias of the answer. The first k1 of "
        "them are judged window by window, stopping at the first window the judge accepts: "
        "the question is answerable, with that window as its evidence. A question with no "
        "accepted window and more than k1 matching documents is discarded; one with at most "
        "k1 goes to the vector search, where each of the k2 chunks nearest to the question is "
        "judged: one accepted chunk makes it answerable, none unanswerable. A judgment that "
        "could not be obtained leaves the question undetermined, never unanswerable. "
        "Discarded and undetermined questions are in no split.",
        f"Settings: k1 = {k1}, k2 = {k2}; token index `{params.get('token_index')}`; "
        f"judged token-stage {_windows(params.get('windows') or {})}; vector stage: "
        f"{_vector(params)}.",
        f"Prompts: keyword extraction by {llm(params['keywords'])}; relevance judging by "
        f"{llm(params['judge'])}.",
    ]
    if params.get("confirm_judge"):
        protocol.append(
            "Every window or chunk the judge accepted was asked again of a confirming judge, "
            f"{llm(params['confirm_judge'])}: it is evidence only when both accepted it."
        )
    for pool, applied in (info.get("audit") or {}).items():
        moved = applied["moved"]
        protocol.append(
            f"The search audit's findings were applied: in pool `{pool}`, "
            f"{moved['unanswerable']:,} unanswerable and {moved['discarded']:,} discarded "
            "questions with evidence the audit found are answerable (stage `audit`)."
        )
    if audits:
        protocol.append(_audit_protocol(audits))
    version = params.get("tipqa_version")
    protocol.append(f"Built with tipqa {version} (record schema {params.get('schema_version')}).")
    return protocol


def _audit_protocol(audits: Mapping[str, dict[str, Any]]) -> str:
    settings = next(iter(audits.values()))["settings"]["audit"]
    text = (
        f"Search audit: a seeded random sample (share {settings['sample']}, seed "
        f"{settings['seed']}) of the questions labelled unanswerable and discarded was searched "
        "again where Algorithm 1 did not look (each keyword left out in turn, an answer alias "
        "alone, the vector stage beyond k2, the token search beyond k1), judging at most "
        f"{settings['budget']} new passages per question with the build's judge."
    )
    if second_judges(audits):
        text += (
            " Judge audit: a second judge re-judged the accepted evidence of a seeded sample of "
            "answerable questions, and the judged windows and chunks of a sample of "
            "unanswerable and discarded questions in the build's order, until its first yes."
        )
    return text


def annotation_tools(info: Mapping[str, Any], audits: Mapping[str, dict[str, Any]]) -> list[str]:
    """`rai:machineAnnotationTools`: the keyword extractor, the judges, the embedder, tipqa."""
    params = info["parameters"]
    embedder = params.get("embedder") or {}
    tools = [
        f"Keyword extractor: {llm(params['keywords'])}.",
        f"Relevance judge: {llm(params['judge'])}.",
    ]
    if params.get("confirm_judge"):
        tools.append(f"Confirming judge ([judge.confirm]): {llm(params['confirm_judge'])}.")
    second = "Second judge of the judge audit ([audit.judge])"
    tools += [f"{second}: {llm(judge)}." for judge in second_judges(audits)]
    tools.append(
        f"Embedder of the vector search: `{embedder.get('backend')}` model "
        f"`{embedder.get('model')}`."
    )
    tools.append(f"tipqa {params.get('tipqa_version')}.")
    return tools


def _search_figures(pool: str, audit: dict[str, Any]) -> list[str]:
    lines = [quotable(pool, audit)]
    for label in AUDITED:
        f = audit["by_label"][label]
        lines.append(
            f"Search audit of pool `{pool}`, label {label}: {f['labelled']:,} labelled, "
            f"{f['audited']:,} audited, evidence found for {f['found']:,} "
            f"({percent(f['rate'])}, exact 95% CI {interval(f['ci95'])})."
        )
    lines.append(cost_line(pool, audit))
    return lines


def _judge_figures(pool: str, judged: dict[str, Any]) -> list[str]:
    lines = []
    for label in JUDGE_AUDITED:
        f = judged.get(label)
        if f is None:
            continue
        lines.append(
            f"Judge audit of pool `{pool}`, label {label}: {f['labelled']:,} labelled, "
            f"{f['audited']:,} re-judged by the second judge, {len(f['disputed']):,} disputed "
            f"({percent(f['rate'])}, exact 95% CI {interval(f['ci95'])})."
        )
    agreement = judged.get("agreement")
    if agreement:
        kappa = agreement.get("kappa")
        shown = "-" if kappa is None else f"{kappa:.2f}"
        lines.append(
            f"Judge audit of pool `{pool}`: the two judges agreed on "
            f"{percent(agreement.get('observed'))} of the {agreement['units']:,} windows and "
            f"chunks both judged, Cohen's kappa {shown} (bootstrap 95% CI "
            f"{_pair(agreement.get('ci95'))})."
        )
    calls, tokens = judged.get("judge_calls"), judged.get("prompt_tokens")
    if calls is not None:
        lines.append(
            f"Judge audit of pool `{pool}`: {calls:,} prompts to the second judge"
            + (f", {tokens:,} prompt tokens." if tokens else ".")
        )
    return lines


def _pair(ci: list[float] | None) -> str:
    return "-" if ci is None else f"{ci[0]:.2f} to {ci[1]:.2f}"


def annotation_analysis(measured: Measured) -> list[str]:
    """`rai:dataAnnotationAnalysis`: the search audit's and the judge audit's rates with their
    intervals, and the judge's agreement with people, as measured (none: an empty list)."""
    lines = []
    for pool, audit in measured.audits.items():
        lines += _search_figures(pool, audit)
        if audit.get("judge_audit"):
            lines += _judge_figures(pool, audit["judge_audit"])
    if measured.agreement is not None:
        lines.append(agreement_line(measured.agreement))
    return lines


def data_limitations(info: Mapping[str, Any], measured: Measured) -> list[str]:
    """`rai:dataLimitations`: what the labels and the audits cannot see (docs/trust.md), and
    which error was left unmeasured."""
    params = info["parameters"]
    limits = [
        "A label says what the indexed corpus holds as the build's judge read it, not what a "
        "model trained on that corpus knows; documents outside the indexed corpus are never "
        "seen. The splits leave discarded and undetermined questions out, so they are not a "
        "random sample of the source questions.",
    ]
    warning = rules_warning(params)
    if warning:
        limits.append(warning.replace("**", ""))
    if measured.audits:
        budget = next(iter(measured.audits.values()))["settings"]["audit"]["budget"]
        limits.append(
            "The search audit's rates are lower bounds on a label's error: it finds only what "
            "its relaxations reach and its judge accepts. Evidence that states the fact without "
            "any alias of the answer, with more than one keyword missing or misspelled, or in "
            f"other words than the question, beyond the k2 + {budget} nearest chunks, or past "
            f"the budget of {budget} prompts per question stays unseen."
        )
    else:
        limits.append(
            "How often the search missed evidence is unmeasured: the build ran no search "
            "audit (`[audit] sample` above 0 runs it)."
        )
    limits.append(
        "The search audit does not re-judge what the build judged: a wrong yes or no of the "
        "judge on a passage it read is the judge's error."
    )
    if not any(audit.get("judge_audit") for audit in measured.audits.values()):
        limits.append(
            "The judge's own errors are unmeasured by a second judge: the build had no "
            "`[audit.judge]`, which re-judges a sample of its judgments."
        )
    if measured.agreement is None:
        limits.append(
            "The judge was not compared with people: no annotation was imported "
            "(`[annotation]`, docs/annotation.md)."
        )
    limits.append(
        "An error that every judge makes (the build's, a confirming or second judge, and the "
        "annotators on their sample) is seen by no figure here."
    )
    return limits


def rai_fields(info: Mapping[str, Any], measured: Measured) -> dict[str, list[str]]:
    """The `rai:` properties of `croissant.json`, from the splits' statistics (`info`) and
    the measurements."""
    fields = {
        "rai:dataAnnotationProtocol": annotation_protocol(info, measured.audits),
        "rai:machineAnnotationTools": annotation_tools(info, measured.audits),
        "rai:dataAnnotationAnalysis": annotation_analysis(measured),
        "rai:dataLimitations": data_limitations(info, measured),
    }
    return {name: value for name, value in fields.items() if value}
