"""The end of a build: what it made, per pool and split, and what to do next.

Read from the steps' stats files (the partitions' and the splits'), never from the current
configuration, so the summary says what the outputs are, whoever made them.
"""

from __future__ import annotations

from tipqa.jsonl import atomic_open
from tipqa.layout import RunLayout
from tipqa.provenance import REMEDY, offline_backends
from tipqa.stats import read_stats

RETRY = (
    "luigi --module pipelines RetryFailed --local-scheduler && "
    "luigi --module pipelines CreateDataset --local-scheduler"
)


def _outcomes(by_stage: dict[str, int]) -> str:
    """ "answerable 18 (token 15, vector 3), ..." from counts by label and stage."""
    parts = []
    for label in ("answerable", "unanswerable", "discarded", "undetermined"):
        stages = {k.split("_", 1)[1]: v for k, v in by_stage.items() if k.startswith(label + "_")}
        total = sum(stages.values())
        detail = ", ".join(f"{stage} {count}" for stage, count in sorted(stages.items()) if count)
        parts.append(f"{label} {total}" + (f" ({detail})" if detail else ""))
    return ", ".join(parts)


def summarize(run: RunLayout, pools: list[str]) -> str:
    """The summary of a finished build, as Markdown."""
    lines = [f"# Build {run.root.name}", ""]
    undetermined = 0
    for name in pools:
        stats = read_stats(run.pool(name).partition_stats, REMEDY)
        counts = stats.get("counts", {})
        undetermined += int(counts.get("undetermined", 0))
        by_stage = stats.get("info", {}).get("by_stage", {})
        lines.append(
            f"- pool **{name}**: {counts.get('questions', 0)} questions: " + _outcomes(by_stage)
        )
    splits = read_stats(run.splits_stats, REMEDY).get("info", {})
    for split, info in splits.get("splits", {}).items():
        lines.append(
            f"- split **{split}** (from pool {info['pool']}): {info['answerable']} answerable, "
            f"{info['unanswerable']} unanswerable, {info['instances']} vector-stage instances"
        )
    lines += [
        "",
        f"Splits: {run.splits}",
        f"Hub-ready folder: {run.hub} (publish: luigi --module pipelines PublishDataset)",
        f"Report: {run.report / 'report.md'}",
    ]
    offline = offline_backends(splits.get("parameters", {}))
    if offline:
        names = " and ".join(
            {"keywords": "keywords", "judge": "relevance judge"}[p] for p in offline
        )
        lines += [
            "",
            f"WARNING: the {names} of this build were offline rules, not a language model: "
            "many answerable questions come out unanswerable. Use it as a demo, a smoke test "
            "or a lower bound; for a benchmark, set [judge] (and [keywords]) backend = openai "
            "or vllm (README: LLM backends).",
        ]
    if undetermined:
        lines += [
            "",
            f"{undetermined} questions are undetermined (an LLM call failed). Once the server "
            f"is back: {RETRY}",
        ]
    return "\n".join(lines) + "\n"


def write_summary(run: RunLayout, pools: list[str]) -> str:
    """Write the summary to `<run>/summary.md` and return it."""
    text = summarize(run, pools)
    with atomic_open(run.summary) as handle:
        handle.write(text.encode())
    return text
