"""Provenance: how a pool's partition was made, read from what its steps recorded.

Every step writes the settings it ran with and the fingerprints of its inputs into its stats
file (`tipqa.core.fingerprint.StepRecord.provenance`). A partition gathers those of all the
steps behind it, with what the corpus reader skipped (`tipqa.dataset.corpus_reading`, from the
token index build's stats); the splits check that their pools agree and keep the construction
parameters; the dataset card shows them. Nothing here reads the current configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.layout import RunLayout
from tipqa.core.records import SCHEMA_VERSION
from tipqa.core.stats import read_stats
from tipqa.core.steps import SHARD_STEPS, Step
from tipqa.core.version import __version__
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.sources.demo.world import DEMO

REMEDY = "rerun luigi --module pipelines CreateDataset, which redoes the steps it needs"
OFFLINE_BACKENDS = frozenset({"rules"})
"""Backends that are rules, not models: their labels are a lower bound (docs/backends/llms.md)."""


def recorded(path: Path) -> dict[str, Any]:
    """The provenance a step's stats file records (fingerprint, settings, inputs)."""
    provenance = read_stats(path, REMEDY).get("provenance")
    if not isinstance(provenance, dict) or "settings" not in provenance:
        raise InputError(f"records no provenance: {REMEDY}", path=str(path))
    return provenance


def pool_provenance(run: RunLayout, pool: str, shards: int) -> dict[str, Any]:
    """Every step behind a pool's partition, as its stats files recorded it.

    All shards of a step must have run with the same settings (they do when the fingerprints
    matched); otherwise this is an InputError naming the first shard that differs.
    """
    layout = run.pool(pool)
    steps: dict[str, Any] = {Step.QUESTIONS: recorded(layout.questions_stats)}
    for step in SHARD_STEPS:
        first = recorded(layout.shard(0).stats(step))
        for number in range(1, shards):
            path = layout.shard(number).stats(step)
            if recorded(path)["settings"] != first["settings"]:
                raise InputError(
                    f"{step} ran with other settings than shard 0: {REMEDY}", path=str(path)
                )
        steps[step] = {"settings": first["settings"]}
    for step in (Step.TOKEN_INDEX, Step.VECTOR_INDEX):
        steps[step] = recorded(run.index_stats(step))
    if steps[Step.TOKEN_INDEX]["inputs"].get("corpus", {}).get("source") == DEMO:
        steps[Step.WORLD] = recorded(run.world.stats)
    reading = CorpusReading.from_index_stats(read_stats(run.index_stats(Step.TOKEN_INDEX), REMEDY))
    return {
        "tipqa_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "steps": steps,
        "corpus_reading": reading.to_dict(),
    }


def shared_steps(provenance: dict[str, Any]) -> dict[str, Any]:
    """The steps' settings that pools of one benchmark must share (all but their questions)."""
    steps = provenance["steps"]
    return {
        name: {"settings": step.get("settings"), "inputs": step.get("inputs")}
        if name in (Step.TOKEN_INDEX, Step.VECTOR_INDEX, Step.WORLD)
        else {"settings": step.get("settings")}
        for name, step in steps.items()
        if name != Step.QUESTIONS
    }


def construction_parameters(provenance: dict[str, Any]) -> dict[str, Any]:
    """What a dataset card shows of how a partition was made (`corpus_reading` is None for a
    partition that did not record it; `confirm_judge` is there with `[judge.confirm]` only)."""
    steps = provenance["steps"]
    token_index = steps[Step.TOKEN_INDEX]
    vector_index = steps[Step.VECTOR_INDEX]["settings"]
    judging = steps[Step.TOKEN_JUDGE]["settings"]
    search = steps[Step.VECTOR_SEARCH]["settings"]
    return {
        "tipqa_version": provenance.get("tipqa_version"),
        "schema_version": provenance.get("schema_version"),
        "k1": steps[Step.TOKEN_SEARCH]["settings"].get("k1"),
        "k2": search.get("k2"),
        "corpus": _corpus(token_index["inputs"].get("corpus", {})),
        "token_index": token_index["settings"]["token_index"].get("backend"),
        "vector_index": vector_index["vector_index"].get("backend"),
        "vector_search": search["vector_index"],
        "embedder": {**vector_index["embedder"], **search["embedder"]},
        "keywords": steps[Step.KEYWORDS]["settings"]["keywords"],
        "judge": judging["judge"],
        **({"confirm_judge": judging["confirm"]} if "confirm" in judging else {}),
        "windows": judging["windows"],
        "corpus_reading": provenance.get("corpus_reading"),
    }


def _corpus(corpus: dict[str, Any]) -> dict[str, Any]:
    """The corpus as the card names it: its source and its files (names only) or dataset."""
    files = [Path(item["path"]).name for item in corpus.get("files", [])]
    return {
        "source": corpus.get("backend", corpus.get("source")),
        "files": files,
        "name": corpus.get("name"),
        "config": corpus.get("config"),
        "split": corpus.get("split"),
    }


def offline_backends(parameters: dict[str, Any]) -> list[str]:
    """Which of the keyword extractor and the judge were offline rules ("keywords", "judge")."""
    return [
        part
        for part in ("keywords", "judge")
        if parameters.get(part, {}).get("backend") in OFFLINE_BACKENDS
    ]
