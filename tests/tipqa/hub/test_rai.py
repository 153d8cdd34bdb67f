"""The Responsible-AI fields of `croissant.json`, from what a build recorded."""

from __future__ import annotations

from typing import Any

from support.croissant_support import AGREEMENT, SECOND_JUDGE, audit_file
from support.partition_fixtures import CONFIG, INFO, provenance

from tipqa.core.steps import Step
from tipqa.dataset.provenance import construction_parameters
from tipqa.hub.rai import Measured, rai_fields

PROTOCOL, TOOLS = "rai:dataAnnotationProtocol", "rai:machineAnnotationTools"
ANALYSIS, LIMITATIONS = "rai:dataAnnotationAnalysis", "rai:dataLimitations"


def info(build: dict[str, Any] = INFO) -> dict[str, Any]:
    """The splits' statistics as the RAI fields read them: the construction parameters."""
    return {"parameters": construction_parameters(build)}


def text(lines: list[str]) -> str:
    return "\n".join(lines)


def test_the_protocol_and_tools_carry_the_recorded_settings() -> None:
    judged = {**CONFIG, "judge": {"backend": "openai", "model": "judge-8b", "max_words": "300"}}
    build = provenance(judged)
    fields = rai_fields(info(build), Measured())
    protocol, tools = text(fields[PROTOCOL]), text(fields[TOOLS])
    judge = build["steps"][Step.TOKEN_JUDGE]["settings"]["judge"]
    keywords = build["steps"][Step.KEYWORDS]["settings"]["keywords"]
    assert protocol.startswith("Labels by Algorithm 1 of Christopher Adrian Kusuma, ")
    assert "Settings: k1 = 20, k2 = 3; token index `tantivy`;" in protocol
    assert "windows of at most 300 words, at most 16 per document" in protocol
    assert (
        f"relevance judging by `openai` model `judge-8b`, prompt template `{judge['prompt']}` "
        f"(SHA-256 {judge['prompt_sha256']})" in protocol
    )
    assert (
        f"`gpt-4o-mini`, prompt template `keywords-v1` (SHA-256 {keywords['prompt_sha256']})"
        in (protocol)
    )
    assert "Built with tipqa 0.1.0 (record schema 1)." in protocol
    assert "confirming judge" not in protocol and "Search audit" not in protocol
    assert "Relevance judge: `openai` model `judge-8b`" in tools
    assert "Keyword extractor: `openai` model `gpt-4o-mini`" in tools
    assert "`all-MiniLM-L6-v2`" in tools and "Second judge" not in tools
    assert "offline rules" not in text(fields[LIMITATIONS])


def test_nothing_measured_says_what_is_unmeasured() -> None:
    fields = rai_fields(info(), Measured())
    assert ANALYSIS not in fields
    limits = text(fields[LIMITATIONS])
    assert "the judge of this build was offline rules, not a language model" in limits
    assert "the build ran no search audit" in limits
    assert "the build had no `[audit.judge]`" in limits
    assert "The judge was not compared with people" in limits
    assert "An error that every judge makes" in limits
    assert "offline rules (`rules`, version v1)" in text(fields[TOOLS])


def test_the_search_audit_s_rates_and_intervals() -> None:
    fields = rai_fields(info(), Measured({"dev": audit_file()}))
    analysis = text(fields[ANALYSIS])
    assert (
        "Search audit of pool `dev`, label unanswerable: 40 labelled, 10 audited, evidence "
        "found for 2 (20.0%, exact 95% CI 2.5% to 55.6%)." in analysis
    )
    assert (
        "Search audit of pool `dev`, label discarded: 3 labelled, 1 audited, evidence found "
        "for 0 (0.0%, exact 95% CI 0.0% to 97.5%)." in analysis
    )
    assert "Of the 40 questions of pool `dev` labelled unanswerable" in analysis
    assert "200 judge prompts, 20.0% of the build's 1,000." in analysis
    assert "Judge audit" not in analysis
    assert "(share 0.25, seed 0)" in text(fields[PROTOCOL])
    limits = text(fields[LIMITATIONS])
    assert "beyond the k2 + 20 nearest chunks" in limits and "no search audit" not in limits
    assert "the build had no `[audit.judge]`" in limits


def test_the_judge_audit_and_the_agreement_with_people() -> None:
    measured = Measured({"dev": audit_file(judged=True)}, AGREEMENT)
    fields = rai_fields(info(), measured)
    analysis = text(fields[ANALYSIS])
    assert (
        "Judge audit of pool `dev`, label answerable: 90 labelled, 10 re-judged by the second "
        "judge, 2 disputed (20.0%, exact 95% CI 2.5% to 55.6%)." in analysis
    )
    assert "label unanswerable: 40 labelled, 4 re-judged by the second judge, 1 disputed" in (
        analysis
    )
    assert "label discarded: 3 labelled, 1 re-judged by the second judge, 0 disputed" in analysis
    assert (
        "the two judges agreed on 91.2% of the 57 windows and chunks both judged, Cohen's "
        "kappa 0.73 (bootstrap 95% CI 0.52 to 0.88)." in analysis
    )
    assert "48 prompts to the second judge, 12,345 prompt tokens." in analysis
    assert (
        "The judge agreed with people on 82.8% (bootstrap 95% CI 80.1% to 85.2%) of 900 judged "
        "(document, question) pairs (700 items annotated), Cohen's kappa 0.61." in analysis
    )
    tools = text(fields[TOOLS])
    assert (
        "Second judge of the judge audit ([audit.judge]): `openai` model `second-judge-70b`, "
        f"prompt template `judge-v1` (SHA-256 {SECOND_JUDGE['prompt_sha256']})." in tools
    )
    assert "Judge audit: a second judge re-judged" in text(fields[PROTOCOL])
    limits = text(fields[LIMITATIONS])
    assert "[audit.judge]" not in limits and "not compared with people" not in limits


def test_the_agreement_without_an_audit() -> None:
    fields = rai_fields(info(), Measured({}, AGREEMENT))
    assert fields[ANALYSIS] == [
        "The judge agreed with people on 82.8% (bootstrap 95% CI 80.1% to 85.2%) of 900 judged "
        "(document, question) pairs (700 items annotated), Cohen's kappa 0.61."
    ]


def test_a_confirming_judge_and_an_applied_audit_are_in_the_protocol() -> None:
    build = provenance()
    judging = build["steps"][Step.TOKEN_JUDGE]["settings"]
    judging["confirm"] = {"backend": "openai", "model": "confirm-70b", "prompt": "judge-v1"}
    recorded = info(build)
    recorded["audit"] = {"dev": {"moved": {"unanswerable": 2, "discarded": 1}}}
    fields = rai_fields(recorded, Measured())
    protocol = text(fields[PROTOCOL])
    assert "asked again of a confirming judge, `openai` model `confirm-70b`" in protocol
    assert "in pool `dev`, 2 unanswerable and 1 discarded questions with evidence" in protocol
    assert "Confirming judge ([judge.confirm]): `openai` model `confirm-70b`" in (
        text(fields[TOOLS])
    )
