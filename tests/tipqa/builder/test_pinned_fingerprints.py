"""The demo's step fingerprints are pinned: a change that alters them reruns finished builds.

The plan computes every step's fingerprint from the configuration alone, exactly as a build
records them. A change that moves them must say so in CHANGELOG.md (which steps rerun, and
why) and pin the new values:

    TIPQA_PIN_FINGERPRINTS=1 python -m pytest tests/tipqa/builder/test_pinned_fingerprints.py
"""

from __future__ import annotations

import configparser
import json
import os
from pathlib import Path

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.steps import SHARD_STEPS

ROOT = Path(__file__).resolve().parents[3]
PINNED = ROOT / "tests" / "data" / "fingerprints" / "demo.json"
SHARDS = 3


def demo_fingerprints() -> dict[str, str]:
    """Every step of the demo build (the repository's luigi.cfg) and its fingerprint."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "luigi.cfg")
    plan = Plan(read_config({name: dict(parser[name]) for name in parser.sections()}))
    steps = {
        "world": plan.world,
        "token_index": plan.token_index,
        "vector_index": plan.vector_index,
        "questions/dev": plan.questions("dev"),
        "cost_preview/dev": plan.cost_preview("dev"),
        "partition/dev": plan.partition("dev"),
        "splits": plan.splits,
        "hub_folder": plan.hub_folder,
        "report": plan.report,
        "audit/dev": plan.audit("dev"),
        "verbatim/dev": plan.verbatim("dev"),
    }
    for step in SHARD_STEPS:
        for shard in range(SHARDS):
            steps[f"{step}/dev/{shard}"] = plan.shard("dev", step, shard)
    return {name: record.fingerprint for name, record in sorted(steps.items())}


def test_the_demo_s_fingerprints_are_the_pinned_ones() -> None:
    now = demo_fingerprints()
    if os.environ.get("TIPQA_PIN_FINGERPRINTS"):
        PINNED.write_text(json.dumps(now, indent=1) + "\n")
    moved = {step for step, value in json.loads(PINNED.read_text()).items() if now[step] != value}
    assert not moved, (
        f"these steps of a finished demo build would rerun: {sorted(moved)}. If that is meant, "
        "say so in CHANGELOG.md and pin them (this module's docstring says how)"
    )
