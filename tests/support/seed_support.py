"""The small demo world and its indexes, built once per test session and copied into the runs
of the tests that build on them (embedding the corpus is most of a small build's time).

A copy is checked: the copied stats files must record the fingerprints that the receiving
run's plan expects, so a seed can never stand in for another world or another index.
"""

from __future__ import annotations

import configparser
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from support.tests_support import luigi_config, run_luigi
from tipqa.builder.assemble import load_config
from tipqa.builder.plan import Plan
from tipqa.core.layout import RunLayout
from tipqa.core.stats import recorded_fingerprint
from tipqa.core.steps import Step

INDEX_TASKS = ("BuildTokenIndex", "BuildVectorIndex")


def candidates_config(folder: Path, **overrides: dict[str, str]) -> Path:
    """`luigi_config` with the candidate vector stage (`[vector_index] backend = candidates`)."""
    config = luigi_config(folder, **{**overrides, "vector_index": {"backend": "candidates"}})
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config)
    parser.remove_option("vector_index", "kind")
    with open(config, "w") as handle:
        parser.write(handle)
    return config


WORLDS: dict[str, Callable[[Path], Path]] = {"faiss": luigi_config, "candidates": candidates_config}


def seed_run(folder: Path, built: RunLayout) -> RunLayout:
    """Copy `built`'s demo world and indexes, with their stats files, into the run that
    `folder/luigi.cfg` configures; its layout. Asserts that every copied stats file records
    the fingerprint the run's plan expects for that step."""
    plan = Plan(load_config(folder / "luigi.cfg"))
    run = plan.layout
    indexes = [(Step.TOKEN_INDEX, built.token_index), (Step.VECTOR_INDEX, built.vector_index)]
    steps = [(step, path, built.index_stats(step), plan.index(step)) for step, path in indexes]
    if plan.uses_demo:
        steps.insert(0, (Step.WORLD, built.world.root, built.world.stats, plan.world))
    for step, output, stats, inputs in steps:
        target = run.root / output.relative_to(built.root)
        shutil.copytree(output, target, dirs_exist_ok=True)
        copied = run.root / stats.relative_to(built.root)
        shutil.copy2(stats, copied)
        assert recorded_fingerprint(copied) == inputs.fingerprint, f"{step}: another build's seed"
    return run


class DemoBuilds:
    """The small demo world and its indexes, built on first use once per index configuration
    (`WORLDS`: the faiss index, the candidate vector stage)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.built: dict[str, RunLayout] = {}

    def __call__(self, world: str = "faiss") -> RunLayout:
        """The finished demo world and indexes of configuration `world` (built once)."""
        if world not in self.built:
            folder = self.factory.mktemp(f"seed-{world}")
            config = WORLDS[world](folder)
            for task in INDEX_TASKS:
                result = run_luigi(config, task)
                assert result.returncode == 0, result.stderr[-3000:]
            self.built[world] = RunLayout(folder / "outputs" / "t")
        return self.built[world]


@pytest.fixture(scope="session")
def demo_builds(tmp_path_factory: pytest.TempPathFactory) -> DemoBuilds:
    """The session's demo worlds with their indexes: `seed_run(folder, demo_builds())`."""
    return DemoBuilds(tmp_path_factory)
