"""The funnel of a build's outcomes, per pool and per split."""

from __future__ import annotations

from tipqa.report.funnel import pool_funnel


def test_pool_funnel_passes_the_rest_to_the_vector_stage() -> None:
    summary = {
        "questions": 10,
        "by_stage": {"answerable_token": 4, "discarded_token": 1, "unanswerable_vector": 3,
                     "answerable_vector": 1, "undetermined_vector": 1},
    }  # fmt: skip
    funnel = pool_funnel(summary)
    assert (
        funnel["to_vector"]
        == 5
        == sum(
            funnel[k] for k in ("answerable_vector", "unanswerable_vector", "undetermined_vector")
        )
    )
    assert funnel["undetermined_token"] == 0
