"""The planted world of `audit_support` judged by a fallible build judge, with a right one beside.

The build's judge is `fallible_judge`'s model `fallible`: it refuses every evidence of two truly
answerable questions and accepts a wrong passage of two truly unanswerable ones, so the build's
labels are wrong at known places (k1 = 3, k2 = 2, rule keywords, as in `audit_support`):

- `normal_fruit` (its fact found by the token stage) and `vector` (found by the vector stage)
  come out **falsely unanswerable**: every passage that states them was answered "no";
- `absent_ship` (a chunk naming the captain, found by the vector stage) and `absent_discarded`
  (a document naming the mason and the bridge, found by the token stage) come out **falsely
  answerable**: their evidence does not state the answer.

Model `right` (the perfect judge of this world) is the second judge. Everything else is labelled
as `audit_support.LABELS` says, the four misses of the search included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import openai_server as fake
from support.audit_support import LABELS, QUESTIONS, SETTINGS, states_fact, write_world
from support.fallible_judge import FALLIBLE, RIGHT, Planted, two_judges
from support.tests_support import luigi_config

TEXT = {qid: text for qid, text, _ in QUESTIONS}
FALSELY_UNANSWERABLE = {"normal_fruit": "token", "vector": "vector"}
"""Truly answerable questions labelled unanswerable, by the stage that judged their evidence."""
FALSELY_ANSWERABLE = {"absent_ship": "vector", "absent_discarded": "token"}
"""Truly unanswerable (or discarded) questions labelled answerable, by the deciding stage."""
WRONG_PASSAGES = {
    "absent_ship": "Corvin Ashdale was an admiral",
    "absent_discarded": "Ulric Penhale",
}
"""The phrase of each falsely accepted passage."""
PLANTED = Planted(
    refused=frozenset(TEXT[qid] for qid in FALSELY_UNANSWERABLE),
    accepted=frozenset((TEXT[qid], phrase) for qid, phrase in WRONG_PASSAGES.items()),
)
FALLIBLE_LABELS = {
    **LABELS,
    **{qid: "unanswerable" for qid in FALSELY_UNANSWERABLE},
    **{qid: "answerable" for qid in FALSELY_ANSWERABLE},
}
"""The build's labels with the fallible judge."""


def right_judge(question: str, passage: str, answer: str) -> bool:
    """The right answer in this world: the passage states the question's fact."""
    return states_fact(question, passage)


def planted_rule() -> fake.Rule:
    """The server rule of this world's two judges."""
    return two_judges(right_judge, PLANTED)


def world_sections(world: Path) -> dict[str, dict[str, str]]:
    """The `[corpus]` and `[pool.dev]` sections of the world in `world`, written there first
    when it is not (a world written once keeps its files' times, so a build's fingerprints)."""
    corpus, questions = world / "corpus.jsonl", world / "questions.jsonl"
    if not corpus.is_file():
        return write_world(world)
    return {
        "corpus": {"source": "files", "paths": str(corpus)},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(questions)},
    }


def planted_config(
    folder: Path,
    server: fake.FakeOpenAIServer,
    world: Path | None = None,
    **changes: dict[str, str],
) -> Path:
    """The luigi.cfg of a build of this world in `folder` (the fallible judge, the server's
    URL), the world's files in `world` (default `folder/world`; a copy of a build names the
    original's, whose paths its fingerprints hold), with `changes` merged into its sections
    (`**{"audit.judge": second_judge(server)}`: the second judge)."""
    sections: dict[str, dict[str, Any]] = {
        **world_sections(world or folder / "world"),
        **SETTINGS,
    }
    sections["judge"] = {"backend": "openai", "model": FALLIBLE, "base_url": server.base_url}
    for name, values in changes.items():
        sections[name] = {**sections.get(name, {}), **values}
    return luigi_config(folder, **sections)


def second_judge(server: fake.FakeOpenAIServer) -> dict[str, str]:
    """The `[audit.judge]` section of the right judge on the server."""
    return {"model": RIGHT, "base_url": server.base_url}
