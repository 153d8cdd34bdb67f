"""The end of a build: what it made, per pool and split, and what to do next.

Read from the steps' stats files (the partitions' and the splits', which keep what the corpus
reader skipped as the token index build recorded it), never from the current configuration, so
the summary says what the outputs are, whoever made them.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable

from tipqa.audit.markdown import summary_line
from tipqa.core.errors import UndeterminedError
from tipqa.core.jsonl import atomic_open
from tipqa.core.layout import RunLayout
from tipqa.core.stats import read_stats
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.dataset.provenance import REMEDY, offline_backends
from tipqa.dataset.splits import read_audit

OUTAGE = ("timeout", "connection", "http_408", "http_429", "http_5")


def luigi_command(task: str, config_path: str | None) -> str:
    """The command line that runs `task` with the configuration file of this run."""
    prefix = f"LUIGI_CONFIG_PATH={shlex.quote(config_path)} " if config_path else ""
    return f"{prefix}luigi --module pipelines {task} --local-scheduler"


def retry_command(config_path: str | None) -> str:
    """The commands that send the undetermined questions back and finish the build."""
    return (
        f"{luigi_command('RetryFailed', config_path)} && "
        f"{luigi_command('CreateDataset', config_path)}"
    )


def undetermined_count(run: RunLayout, pools: list[str]) -> int:
    """How many questions of `pools` the partitions recorded as undetermined."""
    return sum(
        int(read_stats(run.pool(name).partition_stats, REMEDY)["counts"].get("undetermined", 0))
        for name in pools
    )


def _failure_advice(failures: Counter[str], retry: str) -> list[str]:
    """What the recorded LLM failures mean, and what to do about them."""
    kinds = {kind.split("_", 1)[1] if kind.startswith("judgment_") else kind for kind in failures}
    confirming = {kind.split("_", 1)[1] for kind in kinds if kind.startswith("confirmation_")}
    kinds -= {f"confirmation_{kind}" for kind in confirming}
    listed = ", ".join(f"{kind} ×{count}" for kind, count in sorted(failures.items()))
    lines = [f"LLM calls that failed, by kind: {listed or 'none recorded'}."]
    if any(kind.startswith(OUTAGE) for kind in kinds):
        lines.append(
            f"The server was unreachable, overloaded or too slow: once it answers again: {retry}"
        )
    if any(kind.startswith(OUTAGE) for kind in confirming):
        lines.append(
            "The server of [judge.confirm] (the confirming judge) was unreachable, overloaded "
            f"or too slow: check its base_url and model, then: {retry}"
        )
    if any(not kind.startswith(OUTAGE) for kind in confirming):
        lines.append(
            "Some answers of [judge.confirm] (the confirming judge) could not be used: check "
            f"its model and prompt, then: {retry}"
        )
    if any(not kind.startswith(OUTAGE) for kind in kinds):
        lines.append(
            "Some answers could not be used (unparseable, too long, refused by the backend): "
            "check the model and prompt of [judge] and [keywords] (a retry asks again): "
            f"{retry}"
        )
    if not kinds and not confirming:
        lines.append(f"To retry them: {retry}")
    return lines


def _outcomes(by_stage: dict[str, int]) -> str:
    """ "answerable 18 (token 15, vector 3), ..." from counts by label and stage."""
    parts = []
    for label in ("answerable", "unanswerable", "discarded", "undetermined"):
        stages = {k.split("_", 1)[1]: v for k, v in by_stage.items() if k.startswith(label + "_")}
        total = sum(stages.values())
        detail = ", ".join(f"{stage} {count}" for stage, count in sorted(stages.items()) if count)
        parts.append(f"{label} {total}" + (f" ({detail})" if detail else ""))
    return ", ".join(parts)


def _boundary_lines(run: RunLayout, pools: list[str]) -> tuple[list[str], list[str]]:
    """Per pool: its questions dated and those never found; the training order's warnings."""
    lines: list[str] = []
    warnings: list[str] = []
    for name in pools:
        stats = read_stats(run.pool(name).boundary.stats, REMEDY)
        counts = stats.get("counts", {})
        line = (
            f"- boundary of pool **{name}**: {int(counts.get('questions_seen', 0))} answerable "
            f"questions dated ({int(counts.get('questions_seen_upper_bound', 0))} of them not "
            f"exact), {int(counts.get('questions_never_seen', 0))} with no evidence found in "
            "the training stream (undetermined at every checkpoint)"
        )
        tokens = int(counts.get("training_order.tokens", 0))
        if tokens:
            unlocated = int(counts.get("training_order.tokens_unlocated", 0))
            line += f"; {unlocated:,} of {tokens:,} evidence tokens unlocated"
        lines.append(line)
        for warning in stats.get("info", {}).get("training_order", {}).get("warnings", []):
            if warning not in warnings:
                warnings.append(warning)
    return lines, warnings


def summarize(
    run: RunLayout,
    pools: list[str],
    config_path: str | None = None,
    boundary: bool = False,
    audited: bool = False,
) -> str:
    """The summary of a finished build, as Markdown.

    `config_path` (the run's `LUIGI_CONFIG_PATH`) goes into the commands it suggests, so that
    they run against the same configuration when pasted; `boundary`: the build dated its
    evidence over training (its pools' boundary stats are read); `audited`: it audited its
    pools (their `audit.json` are read).
    """
    lines = [f"# Build {run.root.name}", ""]
    undetermined = engine_starts = 0
    failures: Counter[str] = Counter()
    for name in pools:
        stats = read_stats(run.pool(name).partition_stats, REMEDY)
        counts = stats.get("counts", {})
        undetermined += int(counts.get("undetermined", 0))
        engine_starts += int(stats.get("info", {}).get("llm_engine_starts", 0))
        failures.update(stats.get("info", {}).get("llm_failures", {}))
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
    reading = splits.get("parameters", {}).get("corpus_reading")
    if reading is not None:
        lines.append(f"- corpus: {CorpusReading.from_dict(reading).summary_line()}")
    if engine_starts:
        lines.append(f"- vLLM offline engines started: {engine_starts} (each loads the model)")
    dated, order_warnings = _boundary_lines(run, pools) if boundary else ([], [])
    lines += dated
    if audited:
        lines += [summary_line(name, read_audit(run.pool(name))) for name in pools]
    lines += [
        "",
        f"Splits: {run.splits}",
        f"Hub-ready folder: {run.hub} (publish: {luigi_command('PublishDataset', config_path)})",
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
            "or vllm (docs/backends/llms.md).",
        ]
    for warning in order_warnings:
        lines += ["", f"WARNING: {warning}"]
    if undetermined:
        lines += [
            "",
            f"{undetermined} questions are undetermined (an LLM call failed or its answer could "
            "not be used): they are in no split, and the dataset is not finished.",
            *_failure_advice(failures, retry_command(config_path)),
        ]
    return "\n".join(lines) + "\n"


def write_summary(run: RunLayout, text: str) -> str:
    """Write a summary to `<run>/summary.md` and return it."""
    with atomic_open(run.summary) as handle:
        handle.write(text.encode())
    return text


def finish_build(
    run: RunLayout,
    pools: list[str],
    config_path: str | None,
    say: Callable[[str], None],
    *,
    boundary: bool,
    audited: bool,
    accept_undetermined: bool,
) -> None:
    """CreateDataset's end: the summary written and said; an UndeterminedError when questions
    are undetermined, unless that is accepted."""
    say(write_summary(run, summarize(run, pools, config_path, boundary, audited)))
    undetermined = undetermined_count(run, pools)
    if undetermined and not accept_undetermined:
        raise UndeterminedError(undetermined, str(run.summary))
