"""The scorer's Markdown: one system's report, and the comparison of several systems."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tipqa.core.text import markdown_table
from tipqa.evaluate.metrics import CELLS


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _percent(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _with_interval(block: dict[str, Any] | None) -> str:
    if not block:
        return "-"
    ci = block.get("ci95")
    value = _percent(block["value"])
    return f"{value} [{_percent(ci[0])}, {_percent(ci[1])}]" if ci else value


def _breakdown(rows: Sequence[dict[str, Any]], name: str) -> str:
    return markdown_table(
        [
            name,
            "Questions",
            "Answerable",
            "Unanswerable",
            "EM-F1",
            "PM-F1",
            "Accuracy (answerable)",
            "Refusals (unanswerable)",
        ],
        [
            [
                r["group"],
                r["questions"],
                r["answerable"],
                r["unanswerable"],
                _percent(r["em_f1"]),
                _percent(r["pm_f1"]),
                _percent(r["accuracy_answerable"]),
                _percent(r["refusal_rate_unanswerable"]),
            ]
            for r in rows
        ],
    )


def _confidence(block: dict[str, Any], minimum: int) -> list[str]:
    if not block.get("predictions_with_confidence"):
        return ["No prediction carries a confidence: no calibration measures."]
    names = [
        ("ece_equal_width", "ECE (equal-width bins)"),
        ("ece_equal_mass", "ECE (equal-mass bins)"),
        ("brier", "Brier score"),
        ("auroc_known_unknown", "AUROC, answerable vs unanswerable"),
        ("eer", "Equal error rate (KUQ's recipe)"),
        ("f1", "F1 of 'answerable' (known) at the EER's threshold (KUQ's recipe)"),
        ("eer_threshold", "Confidence threshold at the EER"),
        ("eer_interpolated", "Equal error rate, interpolated between ROC points"),
    ]
    parts = [
        f"{block['predictions_with_confidence']:,} predictions carry a confidence (read as the "
        "probability that the response is a correct answer).",
        markdown_table(
            ["Measure", "Value"], [[title, _number(block.get(key))] for key, title in names]
        ),
    ]
    for scheme, bins in block.get("reliability", {}).items():
        parts.append(f"Reliability bins ({scheme}); * marks bins of fewer than {minimum}:")
        parts.append(
            markdown_table(
                ["Bin", "Predictions", "Mean confidence", "Accuracy"],
                [
                    [
                        f"{b['low']:.3f}-{b['high']:.3f}" + (" *" if b["count"] < minimum else ""),
                        b["count"],
                        _number(b["confidence"]),
                        _number(b["accuracy"]),
                    ]
                    for b in bins
                ],
            )
        )
    return parts


def _uabench(block: dict[str, Any] | None) -> list[str]:
    if not block:
        return []
    sets = block["sets"]
    return [
        "## Uncertainty attribution (UA-Bench)",
        "Each response is read by UA-Bench's protocol: its last `\\boxed{}` (without a valid "
        'one, its last line) is MODEL_UNCERTAIN when it holds "I don\'t know" or '
        "`<MODEL_UNCERTAIN>`, DATA_UNCERTAIN when it holds `<DATA_UNCERTAIN>`, else an answer "
        "(judged by alias match). An unanswerable question's knowledge is absent: its target is "
        "MODEL_UNCERTAIN, as is that of an answerable question the model got wrong (UA-Bench's "
        "answerable-error set). F1 with normalized counts over the model-uncertain and the "
        "data-uncertain targets; - where a ratio has no denominator (docs/scoring.md). "
        f"Sets: {sets['answerable_correct']:,} answered right, "
        f"{sets['answerable_error']:,} answerable errors, {sets['knowledge_absent']:,} "
        f"knowledge-absent, {sets['data_uncertain']:,} data-uncertain.",
        markdown_table(
            [
                "ACC",
                "MU-F1",
                "DU-F1",
                "Misattribution (DATA_UNCERTAIN on well-defined)",
                "MU recall, knowledge absent",
                "MU recall, answerable errors",
            ],
            [
                [
                    _percent(block["acc"]),
                    _percent(block["mu_f1"]),
                    _percent(block["du_f1"]),
                    _percent(block["misattribution_rate"]),
                    _percent(block["mu_recall_knowledge_absent"]),
                    _percent(block["mu_recall_answerable_error"]),
                ]
            ],
        ),
    ]


METHOD_TITLES = {
    "sequence_probability": "Sequence probability",
    "agreement": "Agreement of sampled answers",
    "semantic_entropy": "Semantic entropy (1 - H / log n)",
    "p_true": "P(True) self-evaluation",
}


def _methods(methods: dict[str, Any] | None, figures: Sequence[str]) -> list[str]:
    if not methods:
        return []
    rows = [
        [
            METHOD_TITLES.get(name, name),
            _number(block["questions"]),
            _number(block["auroc_correct"]),
            _number(block["auroc_known_unknown"]),
            _number(block["ece_equal_width"]),
            _number(block.get("temperature")),
            _number(block.get("ece_equal_width_scaled")),
        ]
        for name, block in methods.items()
    ]
    parts = [
        "## Confidence methods side by side",
        "AUROC of correctness: does the confidence rank right answers above wrong ones; "
        "AUROC known/unknown: answerable above unanswerable questions; ECE with 10 equal-width "
        "bins, before and after the temperature fitted on the validation split (T; - when "
        "not asked for or not a probability).",
        markdown_table(
            [
                "Confidence",
                "Questions",
                "AUROC (correct)",
                "AUROC (known/unknown)",
                "ECE",
                "T",
                "ECE after scaling",
            ],
            rows,
        ),
    ]
    if "reliability-methods.png" in figures:
        parts.append("![Reliability of each confidence](reliability-methods.png)")
    return parts


def render_report(result: dict[str, Any], figures: Sequence[str]) -> str:
    """One system's report in Markdown, pointing at its figures."""
    metrics, gold = result["metrics"], result["gold"]
    counts = metrics["counts"]
    quadrant = metrics["quadrant"]
    missing = result["predictions"]["missing_scored_as_refusals"]
    parts = [
        "# Evaluation report",
        f"Gold: `{gold['source']}` (split `{gold['split']}`, {gold['questions']:,} questions: "
        f"{metrics['answerable']:,} answerable, {metrics['unanswerable']:,} unanswerable). "
        f"Predictions: `{result['predictions']['path']}`."
        + (f" Questions without a prediction, scored as refusals: {missing:,}." if missing else ""),
        *(f"**Warning:** {warning}." for warning in result["warnings"]),
        "## Scores (percent; bootstrap 95% intervals)",
        markdown_table(
            [
                "EM-F1",
                "PM-F1",
                "Precision",
                "Recall",
                "Accuracy (answerable)",
                "Refusals (answerable)",
                "Refusals (unanswerable)",
            ],
            [
                [
                    _with_interval(result["intervals"].get("em_f1")),
                    _with_interval(result["intervals"].get("pm_f1")),
                    _percent(metrics["precision"]),
                    _percent(metrics["recall"]),
                    _percent(metrics["accuracy_answerable"]),
                    _percent(metrics["refusal_rate_answerable"]),
                    _percent(metrics["refusal_rate_unanswerable"]),
                ]
            ],
        ),
        "## Counts",
        "TP: correct answer to an answerable question; FP_a: wrong answer to an answerable one; "
        "FP_u: any answer to an unanswerable one; FN: refusal of an answerable one; TN: refusal "
        "of an unanswerable one.",
        markdown_table(list(CELLS), [[counts[cell] for cell in CELLS]]),
        "Known-unknown quadrant (table 1 of the paper):",
        markdown_table(
            ["Perception \\ actual knowledge", "Known (answerable)", "Unknown (unanswerable)"],
            [
                [
                    "Known",
                    f"N1 = {quadrant['N1_known_known']:,}",
                    f"N2 = {quadrant['N2_known_unknown']:,}",
                ],
                [
                    "Unknown",
                    f"N3 = {quadrant['N3_unknown_known']:,}",
                    f"N4 = {quadrant['N4_unknown_unknown']:,}",
                ],
            ],
        ),
        "Refusals by how they were recognised:",
        markdown_table(
            ["How", "Refusals"],
            [[kind, count] for kind, count in metrics["refusals_by_kind"].items()],
        ),
        *_uabench(result.get("uabench")),
        "## Confidence",
        *_confidence(result["confidence"], result["settings"]["scoring"]["min_bin_count"]),
    ]
    if "reliability.png" in figures:
        parts.append("![Reliability diagrams](reliability.png)")
    parts += _methods(result.get("confidence_methods"), figures)
    parts += [
        "## By the stage that decided the label",
        _breakdown(result["breakdowns"]["stage"], "Stage"),
    ]
    if "breakdown-stage.png" in figures:
        parts.append("![Scores by stage](breakdown-stage.png)")
    parts += [
        "## By keyword-matching documents (as in figure 3 of the paper)",
        _breakdown(result["breakdowns"]["matches"], "Matching documents"),
    ]
    if "breakdown-matches.png" in figures:
        parts.append("![Scores by matching documents](breakdown-matches.png)")
    refusal = result["settings"]["refusal"]
    parts.append(
        f"Refusal detection: threshold t = {refusal['threshold']}, embedding "
        f"{'on' if refusal['embedding'] else 'off'}, boxed answers "
        f"{'read' if refusal['boxed'] else 'not read'}, phrases "
        f"`{refusal['phrases'] or 'shipped list'}`."
    )
    return "\n\n".join(parts) + "\n"


def render_comparison(result: dict[str, Any]) -> str:
    """The comparison of several systems in Markdown."""
    systems = result["systems"]
    trials = result["settings"]["trials"]
    rows = [
        [
            name,
            _percent(s["em_f1"]),
            _percent(s["pm_f1"]),
            _percent(s["precision"]),
            _percent(s["recall"]),
            _percent(s["refusal_rate_unanswerable"]),
            _number(s["ece_equal_width"]),
        ]
        for name, s in systems.items()
    ]
    tests = [
        [t["a"], t["b"], t["metric"], _percent(t["difference"]), f"{t['p_value']:.4f}"]
        for t in result["tests"]
    ]
    return (
        "\n\n".join(
            [
                "# Comparison",
                f"Gold: `{result['gold']['source']}` (split `{result['gold']['split']}`, "
                f"{result['gold']['questions']:,} questions).",
                markdown_table(
                    [
                        "System",
                        "EM-F1",
                        "PM-F1",
                        "Precision",
                        "Recall",
                        "Refusals (unanswerable)",
                        "ECE",
                    ],
                    rows,
                ),
                f"Paired approximate randomization tests ({trials:,} trials; difference = A - B, "
                "in points):",
                markdown_table(["A", "B", "Metric", "Difference", "p-value"], tests),
            ]
        )
        + "\n"
    )
