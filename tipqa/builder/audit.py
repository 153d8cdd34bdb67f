"""The Audit and CountVerbatim steps of a pool, and `tipqa audit RUN`, which audits a finished
build's unanswerable and discarded labels.

Reads the build's configuration (`--config`, repeatable; by default the files Luigi reads:
`luigi.cfg` here and `$LUIGI_CONFIG_PATH`), checks that it made RUN's partitions, and runs the
Audit step of each pool (`--pool`) with `[audit]`'s settings, or with `--sample` and `--seed`
in their place, through the build's own judge and LLM cache. It writes each pool's
`audit.json` and prints its figures. The report and the card show the audit of the
configured settings: `CreateDataset` makes them again (and, if `--sample` or `--seed` differed,
the audit of the configured ones).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from tipqa.audit.markdown import summary_line
from tipqa.audit.pool import audit_pool
from tipqa.audit.settings import check_sample
from tipqa.audit.verbatim import count_verbatim
from tipqa.builder.assemble import auditing, run_config, token_index
from tipqa.builder.inputs import shard_count
from tipqa.builder.plan import Plan
from tipqa.builder.step_inputs import AuditInputs, VerbatimInputs
from tipqa.config import Config
from tipqa.core import cli
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Question
from tipqa.core.stats import StepStats, recorded_fingerprint
from tipqa.dataset.splits import read_audit


def audit(inputs: AuditInputs, layout: RunLayout) -> None:
    """Audit: the pool's sample searched where the build did not (`tipqa.audit.pool`)."""
    pool = layout.pool(inputs.pool)
    shards = [pool.shard(i) for i in range(shard_count(pool))]
    with closing(auditing(inputs, layout)) as backends:
        audit_pool(inputs.audit_run(), backends, pool, shards)


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
    return parser


def audit_run(config: Config, pools: Sequence[str]) -> list[str]:
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
        audit(plan.audit(name), layout)
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
    for line in audit_run(dataclasses.replace(config, audit=audit), args.pool):
        print(line)
    return 0


if __name__ == "__main__":
    from tipqa.core.cli import main

    main(run)
