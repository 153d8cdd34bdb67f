"""The audit's figures: the exact binomial interval, and one label's counts."""

from __future__ import annotations

import numpy as np
import pytest

from tipqa.audit.figures import clopper_pearson, label_figures
from tipqa.audit.relaxations import CAUSES
from tipqa.core.records import AuditEvidence, AuditFinding


@pytest.mark.parametrize(
    ("found", "trials", "low", "high"),
    [
        (0, 10, 0.0, 0.30850),
        (10, 10, 0.69150, 1.0),
        (5, 10, 0.18709, 0.81291),
        (3, 20, 0.03207, 0.37893),
        (1, 1, 0.025, 1.0),
        (50, 100, 0.39832, 0.60168),
    ],
)
def test_the_interval_is_clopper_pearson_s(
    found: int, trials: int, low: float, high: float
) -> None:
    assert clopper_pearson(found, trials) == pytest.approx([low, high], abs=5e-5)


def test_with_nothing_found_or_everything_the_bound_has_a_closed_form() -> None:
    for trials in (1, 7, 40):
        assert clopper_pearson(0, trials)[1] == pytest.approx(1 - 0.025 ** (1 / trials))
        assert clopper_pearson(trials, trials)[0] == pytest.approx(0.025 ** (1 / trials))


def test_the_interval_covers_the_true_share_at_least_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(0)
    for share, trials in ((0.05, 30), (0.3, 12), (0.5, 60)):
        draws = rng.binomial(trials, share, size=400)
        covered = [
            low <= share <= high for low, high in (clopper_pearson(int(k), trials) for k in draws)
        ]
        assert np.mean(covered) >= 0.95


def test_no_trials_no_interval_and_impossible_counts_are_refused() -> None:
    assert clopper_pearson(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and trials"):
        clopper_pearson(3, 2)


def test_a_label_s_figures() -> None:
    evidence = AuditEvidence("d1", "d1@w0", "text", 0, 4, 'keywords without "x"')
    found = [AuditFinding("q1", "unanswerable", "keywords_minus_one", evidence)]
    figures = label_figures(40, 8, found)
    assert figures["labelled"] == 40 and figures["audited"] == 8 and figures["found"] == 1
    assert figures["rate"] == 1 / 8
    assert figures["ci95"] == clopper_pearson(1, 8)
    assert figures["by_cause"] == {cause: int(cause == "keywords_minus_one") for cause in CAUSES}
    assert label_figures(0, 0, [])["rate"] is None
