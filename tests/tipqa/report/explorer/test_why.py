"""Why a question has its label: the sentence says what the search needed and what was judged."""

from __future__ import annotations

from typing import Any

from tipqa.core.records import Evidence, LabeledQuestion
from tipqa.report.explorer.why import why


def question(
    label: str, stage: str, keywords: list[str], total: int, evidence: Evidence | None = None
) -> LabeledQuestion:
    """A row of the partition (its aliases and reason do not change the sentence)."""
    row = LabeledQuestion("q", "Who?", "Ann", ["Ann"], "unanswerable", "token", "r", [], 0, None)
    row.label, row.stage = label, stage  # type: ignore[assignment]
    row.keywords, row.total_matches, row.evidence = keywords, total, evidence
    return row


def windows(*verdicts: str) -> list[dict[str, Any]]:
    """One judged document with windows of these verdicts."""
    return [
        {
            "doc": "d1",
            "windows": [{"unit": f"d1@w{i}", "verdict": v} for i, v in enumerate(verdicts)],
        }
    ]


def test_the_sentence_names_what_the_search_needed_and_keeps_values_apart() -> None:
    unanswerable = why(
        question("unanswerable", "vector", ["Paris", "Seine"], 0), [], [{"verdict": "no"}]
    )
    assert "".join(unanswerable) == (
        "No document contains every keyword (Paris and Seine) together with an alias of the "
        "answer, so the token stage had nothing to judge; the judge said no to the vector "
        "stage's 1 chunk."
    )
    assert unanswerable[1::2] == ["Paris", "Seine", "1"]
    discarded = why(question("discarded", "token", [], 240), windows("no", "no"), [])
    assert "".join(discarded).startswith(
        "240 documents contain an alias of the answer, more than the 1 document judged (k1)"
    )


def test_the_evidence_is_placed_among_the_judgments_where_it_is_one() -> None:
    token = Evidence("token", "d1", "d1@w1", "text")
    found = why(
        question("answerable", "token", ["Paris"], 3, evidence=token), windows("no", "yes"), []
    )
    assert "".join(found).startswith(
        'The first "yes" of the token stage: window d1@w1 of document d1, judgment 2 of 2. '
        "3 documents contain every keyword (Paris)"
    )
    unjudged = why(question("answerable", "token", ["Paris"], 3, evidence=token), [], [])
    assert "".join(unjudged).startswith(
        'The first "yes" of the token stage: window d1@w1 of document d1. '
    )
    vector = Evidence("vector", "d2", "d2#0", "text")
    chunks = [{"chunk": "d9#0", "verdict": "no"}, {"chunk": "d2#0", "verdict": "yes"}]
    late = why(
        question("answerable", "vector", ["Paris"], 1, evidence=vector), windows("no"), chunks
    )
    assert "".join(late).endswith(
        '; the judge said no to 1 window of 1 judged document; the first "yes" of the vector '
        "stage: chunk d2#0 of document d2 (2 by similarity)."
    )
