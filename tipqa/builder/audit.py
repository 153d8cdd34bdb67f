"""The Audit and CountVerbatim steps of a pool, and `tipqa audit RUN`, which audits a finished
build's unanswerable and discarded labels.

Reads the build's configuration (`--config`, repeatable; by default the files Luigi reads:
`luigi.cfg` here and `$LUIGI_CONFIG_PATH`), checks that it made RUN's partitions, and runs the
Audit step of each pool (`--pool`) with `[audit]`'s settings, or with `--sample`, `--seed` and
`--budget` in their place, through the build's own judge and LLM cache; with `[audit.judge]`,
the judge audit too (`--judge-sample` in place of `[audit] judge_sample`). It writes each pool's
`audit.json` and prints its figures. The report and the card show the audit of the
configured settings: `CreateDataset` makes them again (and, if `--sample`, `--seed` or
`--budget` differed, the audit of the configured ones). An audited question whose judgment
failed is undetermined: the command then exits 30 with the retry's commands, unless
`--accept-undetermined`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from tipqa.audit.judge_audit import SECOND_FAILED, undetermined_count
from tipqa.audit.markdown import summary_line
from tipqa.audit.pool import audit_pool, undetermined
from tipqa.audit.settings import check_sample
from tipqa.audit.verbatim import count_verbatim
from tipqa.builder.assemble import auditing, run_config, token_index
from tipqa.builder.inputs import shard_count
from tipqa.builder.plan import Plan
from tipqa.builder.step_inputs import AuditInputs, VerbatimInputs
from tipqa.builder.summary import retry_command
from tipqa.config import Config
from tipqa.config.judges import AUDIT_JUDGE
from tipqa.core import cli
from tipqa.core.errors import ConfigError, InputError, UnfinishedAuditError
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Question
from tipqa.core.stats import StepStats, recorded_fingerprint
from tipqa.dataset.splits import read_audit


def audit(
    inputs: AuditInputs, layout: RunLayout, *, accept_undetermined: bool = False
) -> dict[str, Any]:
    """Audit: the pool's sample searched where the build did not (`tipqa.audit.pool`); what
    `audit.json` holds.

    As in the build, an audited question whose judgment failed is undetermined, never a "no":
    left out of the shares, and the step is not finished (UnfinishedAuditError, its stats file
    unwritten, so that it runs again) unless `accept_undetermined`. The stats file of a former
    audit goes first: what it describes is about to be replaced.
    """
    pool = layout.pool(inputs.pool)
    pool.audit_stats.unlink(missing_ok=True)
    shards = [pool.shard(i) for i in range(shard_count(pool))]
    with closing(auditing(inputs, layout)) as backends:
        result, stats = audit_pool(inputs.audit_run(), backends, pool, shards)
    if not accept_undetermined:
        check_finished(inputs.pool, result, stats, str(pool.audit))
    stats.write(pool.audit_stats)
    return result


def check_finished(pool: str, result: dict[str, Any], stats: StepStats, path: str) -> None:
    """UnfinishedAuditError when an audited question is undetermined (a judgment failed), in
    the search audit or in the judge audit (whose error names `[audit.judge]`)."""
    retry = retry_command(os.environ.get("LUIGI_CONFIG_PATH"))
    accept = (
        "to take the audit as it is, add --accept-undetermined (in a luigi build: "
        "--Audit-accept-undetermined)"
    )
    second = {k: n for k, n in stats.errors.items() if k.startswith(SECOND_FAILED)}
    first = {k: n for k, n in stats.errors.items() if k not in second}
    left = undetermined(result)
    if left:
        raise UnfinishedAuditError(
            f"pool {pool!r}: {left} audited questions are undetermined (a judgment failed: "
            f"{_kinds(first)}), so the audit is not finished ({path} counts them). Once the "
            f"judge answers again: {retry} (or tipqa audit again); {accept}"
        )
    judged = result.get("judge_audit")
    left = 0 if judged is None else undetermined_count(judged)
    if left:
        raise UnfinishedAuditError(
            f"[{AUDIT_JUDGE}]: {left} questions of pool {pool!r} are undetermined in the judge "
            f"audit (a judgment of the second judge failed: {_kinds(second)}), so the audit is "
            f"not finished ({path} counts them); the build's labels stand. Check [{AUDIT_JUDGE}] "
            f"(its model, base_url, key), then: {retry} (or tipqa audit again); {accept}"
        )


def _kinds(errors: dict[str, int]) -> str:
    """Failures by kind, in words."""
    return ", ".join(f"{kind.rsplit('.', 1)[-1]} x{n}" for kind, n in sorted(errors.items())) or (
        "no kind recorded"
    )


def verbatim(inputs: VerbatimInputs, layout: RunLayout) -> StepStats:
    """CountVerbatim: the documents that hold each of a pool's questions verbatim."""
    pool, index = layout.pool(inputs.pool), token_index(inputs.index, layout)
    stats = StepStats(inputs.step, provenance=inputs.record.provenance())
    questions = read_records(pool.questions, Question)
    write_records(pool.verbatim, count_verbatim(questions, index, stats))
    stats.write(pool.verbatim_stats)
    return stats


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.builder.audit"),
        description="Audit a finished build's unanswerable and discarded labels ([audit]).",
    )
    parser.add_argument("run", type=Path, help="the build's run folder, e.g. outputs/demo")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="the build's config file (repeatable, later files win; default: those Luigi reads)",
    )
    parser.add_argument("--pool", action="append", default=[], help="a pool (default: every one)")
    parser.add_argument("--sample", type=float, help="share audited per label, in (0, 1]")
    parser.add_argument("--seed", type=int, help="seed of the sample")
    parser.add_argument("--budget", type=int, help="judge prompts per audited question at most")
    parser.add_argument(
        "--judge-sample",
        type=float,
        help="share of each label the second judge of [audit.judge] re-judges, in [0, 1]",
    )
    parser.add_argument(
        "--accept-undetermined",
        action="store_true",
        help="finish with a zero exit code even when audited questions are undetermined (a "
        "judgment failed; they are left out of the shares and counted)",
    )
    return parser


def audit_finished_run(
    config: Config, pools: Sequence[str], *, accept_undetermined: bool = False
) -> list[str]:
    """Audit each of `pools` (every pool when empty) of the build; its summary lines."""
    plan = Plan(config)
    layout = config.layout()
    lines = []
    for name in pools or config.pool_names:
        pool = layout.pool(config.pool(name).name)
        if recorded_fingerprint(pool.partition_stats) != plan.partition(name).fingerprint:
            raise InputError(
                f"pool {name!r} of this run was not partitioned by this configuration (another "
                "build's questions or settings): give the config that made it, or rerun "
                "luigi --module pipelines CreateDataset",
                path=str(pool.partition_stats),
            )
        audit(plan.audit(name), layout, accept_undetermined=accept_undetermined)
        lines.append(summary_line(name, read_audit(pool)))
    return lines


def run(argv: Sequence[str]) -> int:
    """Parse the command line, audit, print each pool's figures."""
    args = _parser().parse_args(argv)
    config = run_config(args.run, args.config)
    audit = config.audit
    if args.sample is not None:
        check_sample(args.sample)
        audit = dataclasses.replace(audit, sample=args.sample)
    elif not audit.on:
        raise ConfigError("[audit] sample = 0 (no audit): give --sample")
    if args.seed is not None:
        audit = dataclasses.replace(audit, seed=args.seed)
    if args.budget is not None:
        audit = dataclasses.replace(audit, budget=args.budget)
    if args.judge_sample is not None:
        if config.audit_judge is None:
            raise ConfigError(f"--judge-sample needs a second judge: add [{AUDIT_JUDGE}]")
        audit = dataclasses.replace(audit, judge_sample=args.judge_sample)
    config = dataclasses.replace(config, audit=audit)
    for line in audit_finished_run(config, args.pool, accept_undetermined=args.accept_undetermined):
        print(line)
    return 0


if __name__ == "__main__":
    from tipqa.core.cli import main

    main(run)
