"""The run's inputs from configuration: the demo world, the corpus, and the questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.corpus.base import CORPUS_READERS, Corpus
from tipqa.demo.world import WorldSpec, write_world
from tipqa.errors import ConfigError
from tipqa.jsonl import write_records
from tipqa.questions.base import QUESTION_SOURCES
from tipqa.stats import StageStats

DEMO = "demo"


def make_world(settings: dict[str, Any], k1: int, out: Path) -> StageStats:
    """Write the demo world for these settings (its discarded cases sized to k1)."""
    stats = StageStats("world")
    spec = WorldSpec(
        documents=settings["documents"], seed=settings["seed"], k1=k1, files=settings["files"]
    )
    for name, value in write_world(spec, out).items():
        stats.add(name, value)
    stats.write(out / "world.stats.json")
    return stats


def open_corpus(settings: dict[str, Any], world: Path) -> Corpus:
    """The corpus named by settings["source"]; "demo" reads the demo world's files."""
    if settings["source"] == DEMO:
        return CORPUS_READERS.create_from("files", {"paths": [str(world / "corpus")]})
    options = {**settings, "id_field": settings.get("id_field") or None}
    return CORPUS_READERS.create_from(settings["source"], options)


POOL_KEYS = {"source", "paths", "name", "config", "split", "limit"}


def check_pool(name: str, settings: dict[str, Any]) -> None:
    """Reject a pool whose settings have unknown keys or no source."""
    unknown = set(settings) - POOL_KEYS
    if unknown or "source" not in settings:
        raise ConfigError(
            f"question pool {name!r}: needs 'source'; keys allowed: {', '.join(sorted(POOL_KEYS))}"
            + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else "")
        )


def prepare_questions(settings: dict[str, Any], world: Path, out: Path) -> StageStats:
    """Load the questions named by settings["source"] and write them as `Question` records."""
    if settings["source"] == DEMO:
        source = QUESTION_SOURCES.create("tipqa-jsonl", paths=[str(world / "questions.jsonl")])
    else:
        options = {**settings, "limit": settings.get("limit") or None}
        source = QUESTION_SOURCES.create_from(settings["source"], options)
    questions = source.load()
    if settings.get("limit"):
        questions = questions[: settings["limit"]]
    stats = StageStats("questions", info={"source": settings["source"]})
    stats.merge(source.stats)
    stats.add("written", len(questions))
    write_records(out, questions)
    stats.write(out.with_suffix(".stats.json"))
    return stats
