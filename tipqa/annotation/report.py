"""The agreement report: read the key and the completed files, write JSON, Markdown and PNGs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tipqa.annotation.agreement import compute_agreement, join, second_judge_block
from tipqa.annotation.figures import confusion_png
from tipqa.annotation.importing import load_completed
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.core.extras import KRIPPENDORFF, SCIKIT_LEARN, require
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, read_json, read_records, write_json
from tipqa.core.records import JudgeRequest, Triplet
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.llm.judges.base import RelevanceJudge

EXCERPT_CHARS = 1500


def _num(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _stat(entry: dict[str, Any], digits: int) -> tuple[str, str]:
    ci = entry.get("ci95")
    interval = f"[{_num(ci[0], digits)}, {_num(ci[1], digits)}]" if ci else "n/a"
    return _num(entry["value"], digits), interval


def _with_ci(entry: dict[str, Any], digits: int) -> str:
    value, interval = _stat(entry, digits)
    return value if entry["value"] is None else f"{value} {interval}"


def _confusion_table(block: dict[str, Any], rows: str, columns: str) -> list[str]:
    labels = block["confusion"]["labels"]
    matrix = block["confusion"]["matrix"]
    lines = [
        f"| {rows} \\ {columns} | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    lines += [
        f"| {label} | " + " | ".join(str(v) for v in row) + " |"
        for label, row in zip(labels, matrix, strict=True)
    ]
    return lines


def _group_table(groups: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| group | items | LLM-human pairs | agreement % | kappa "
        "| double items | inter-annotator agreement % | kappa |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, group in groups.items():
        llm, inter = group["llm_human"], group["inter_annotator"]
        cells = [
            name,
            str(group["items"]),
            str(llm["pairs"]),
            _with_ci(llm["agreement"], 1),
            _with_ci(llm["kappa"], 3),
            str(inter["pairs"]),
            _with_ci(inter["agreement"], 1),
            _with_ci(inter["kappa"], 3),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _quote(text: str) -> list[str]:
    excerpt = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + " [...]"
    return ["> " + line if line else ">" for line in excerpt.splitlines()]


def markdown(report: dict[str, Any], title: str) -> str:
    """The report as Markdown: headline table, confusion matrices, breakdowns, disagreements."""
    llm, inter, alphas = (
        report["llm_human"],
        report["inter_annotator"],
        report["krippendorff_alpha"],
    )
    boot = report["bootstrap"]
    rows = [
        ("LLM-human agreement (%)", llm["agreement"], 1, llm["pairs"]),
        ("LLM-human Cohen's kappa", llm["kappa"], 3, llm["pairs"]),
        ("Inter-annotator agreement (%)", inter["agreement"], 1, inter["pairs"]),
        ("Inter-annotator Cohen's kappa", inter["kappa"], 3, inter["pairs"]),
        ("Krippendorff's alpha, people", alphas["humans"], 3, report["items"]),
        ("Krippendorff's alpha, people and judge", alphas["humans_and_judge"], 3, report["items"]),
    ]
    out = [
        f"# {title}",
        "",
        f"{report['items']} items, {report['annotations']} annotations, "
        f"{report['double_items']} items annotated twice, {len(report['annotators'])} annotators. "
        f"95% intervals: percentile bootstrap over items ({boot['resamples']} resamples, "
        f"seed {boot['seed']}). The paper reports 82.8% LLM-human and 89.5% inter-annotator "
        "agreement.",
        "",
        "| statistic | value | 95% CI | n |",
        "|---|---|---|---|",
    ]
    out += [f"| {name} | {' | '.join(_stat(entry, d))} | {n} |" for name, entry, d, n in rows]
    out += ["", "## Confusion matrices", ""]
    out += [*_confusion_table(llm, "judge", "person"), ""]
    out += [*_confusion_table(inter, "first annotator", "second annotator"), ""]
    out += [f"![{name}]({name})" for name in report.get("figures", [])]
    out += ["", "## By stage", "", *_group_table(report["by_stage"])]
    out += ["", "## By final label", "", *_group_table(report["by_label"])]
    out += [
        "",
        "## By annotator (against the judge)",
        "",
        "| annotator | annotations | agreement % | kappa |",
        "|---|---|---|---|",
    ]
    out += [
        f"| {name} | {entry['annotations']} | {_num(entry['agreement'])} "
        f"| {_num(entry['kappa'], 3)} |"
        for name, entry in report["by_annotator"].items()
    ]
    flagged = report["problematic"]
    without = flagged["llm_human_without_flagged_items"]
    out += [
        "",
        "## Problematic questions",
        "",
        f"{flagged['annotations_flagged']} annotation(s) flagged, on {flagged['items_flagged']} "
        f"item(s). LLM-human agreement without those items: "
        "{} % {} over {} pairs, kappa {} {}.".format(
            *_stat(without["agreement"], 1), without["pairs"], *_stat(without["kappa"], 3)
        ),
        "",
        f"## Disagreements ({len(report['disagreements'])})",
        "",
        f"Texts longer than {EXCERPT_CHARS} characters are cut here; "
        "agreement.json has them whole.",
    ]
    for case in report["disagreements"]:
        people = "; ".join(
            f"{h['annotator']}: {h['relevant']}"
            + (" (problematic)" if h["problematic"] else "")
            + (f" - {h['comment']}" if h["comment"] else "")
            for h in case["humans"]
        )
        out += [
            "",
            f"### {case['item_id']} ({', '.join(case['kinds'])})",
            "",
            f"- question: {case['question']}",
            f"- answer: {case['answer']}",
            f"- {case['stage']} stage, question {case['final_label']}, unit `{case['unit_id']}`",
            f"- judge: {case['judge_label']}; {people}",
            "",
            *_quote(case["text"]),
        ]
    return "\n".join(out) + "\n"


def write_figures(report: dict[str, Any], folder: Path) -> list[str]:
    """The confusion-matrix PNGs (overall, inter-annotator, and per stage); their file names."""
    figures = [
        ("confusion-llm-human.png", report["llm_human"], "judge", "person", "Judge vs people"),
        (
            "confusion-inter-annotator.png",
            report["inter_annotator"],
            "first annotator",
            "second annotator",
            "Annotator vs annotator",
        ),
    ]
    for stage, group in report["by_stage"].items():
        figures.append(
            (
                f"confusion-llm-human-{stage}.png",
                group["llm_human"],
                "judge",
                "person",
                f"Judge vs people, {stage} stage",
            )
        )
    for name, block, rows, columns, title in figures:
        confusion = block["confusion"]
        confusion_png(folder / name, confusion["matrix"], confusion["labels"], rows, columns, title)
    return [name for name, *_ in figures]


def judged_by(judge: RelevanceJudge, items: list[AnnotationItem]) -> dict[str, str | None]:
    """The judge's label on each annotated item, by item id (None: the judgment failed)."""
    fields = [f.name for f in dataclasses.fields(Triplet)]
    requests = [
        JudgeRequest(**{name: getattr(item, name) for name in fields}, text=item.text)
        for item in items
    ]
    results = judge.judge(requests) if requests else []
    return {item.item_id: result.label for item, result in zip(items, results, strict=True)}


def agreement_report(
    out: AnnotationLayout,
    completed: Path,
    resamples: int = 1000,
    seed: int = 0,
    record: StepRecord | None = None,
    second: RelevanceJudge | None = None,
) -> StepStats:
    """Import the completed files against the key, compute the statistics, write the report
    (with `second`, the judge audit's judge of `[audit.judge]`, its agreement with people too:
    it judges every annotated item)."""
    require((SCIKIT_LEARN, KRIPPENDORFF), needed_by="the annotation agreement")
    provenance = record.provenance() if record is not None else None
    info = {"completed": str(completed)}
    stats = StepStats(Step.ANNOTATION_AGREEMENT, info=info, provenance=provenance)
    items = read_records(out.key, AnnotationItem)
    annotators = list(read_json(out.manifest)["annotators"])  # type: ignore[index]
    annotations = load_completed(Path(completed), items, annotators)
    stats.add("items", len(items))
    stats.add("annotations", len(annotations))
    report = compute_agreement(items, annotations, annotators, resamples, seed)
    if second is not None:
        report["second_judge"] = {
            "judge": second.name,
            **second_judge_block(
                join(items, annotations), judged_by(second, items), resamples, seed
            ),
        }
    report["figures"] = write_figures(report, out.report)
    write_json(out.report_json, report)
    title = f"Annotation agreement: {out.root.name}"
    with atomic_open(out.report_markdown) as handle:
        handle.write(markdown(report, title).encode("utf-8"))
    stats.add("disagreements", len(report["disagreements"]))
    stats.info["llm_human_agreement"] = report["llm_human"]["agreement"]["value"]
    stats.info["inter_annotator_agreement"] = report["inter_annotator"]["agreement"]["value"]
    stats.write(out.report_stats)
    return stats
