"""Authored gold splits and prediction files for the scorer's tests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from support import openai_server as fake
from tipqa.core.jsonl import write_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import Evidence, LabeledQuestion
from tipqa.core.stats import StepStats


def labeled(
    qid: str,
    label: str,
    answer: str,
    aliases: Iterable[str] = (),
    *,
    stage: str | None = None,
    total_matches: int | None = 3,
    question: str = "",
) -> LabeledQuestion:
    """A split row written for a test (answerable ones get a token-stage evidence)."""
    stage = stage or ("token" if label == "answerable" else "vector")
    evidence = None
    if label == "answerable":
        evidence = Evidence(stage, f"doc-{qid}", f"doc-{qid}:0", "text")  # type: ignore[arg-type]
    return LabeledQuestion(
        id=qid,
        question=question or f"Which answer does question {qid} have?",
        answer=answer,
        aliases=list(aliases),
        label=label,  # type: ignore[arg-type]
        stage=stage,  # type: ignore[arg-type]
        reason="authored for a test",
        keywords=[],
        total_matches=total_matches,
        evidence=evidence,
    )


def write_split(root: Path, rows: list[LabeledQuestion], split: str = "test") -> Path:
    """A splits folder under `root` holding `rows` as `split`; returns the split's folder."""
    layout = SplitsLayout(RunLayout(root).splits)
    write_records(layout.questions(split), rows)
    StepStats("splits", info={"splits": {split: {"questions": len(rows)}}}).write(layout.stats)
    return layout.questions(split).parent


def write_lines(path: Path, rows: Iterable[Any]) -> Path:
    """A JSONL file of the given objects (strings are written as they are)."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


ANSWER_LAYOUT = re.compile(r"\nQ: (.*)\n\nA:", re.S)


def table_rule(table: Mapping[str, tuple[str, list[float] | None]]) -> fake.Rule:
    """A server rule answering the answer prompt from `table`: question -> (text, logprobs).

    The text is sent as one token per word with the given logprobs (none when None); questions
    not in the table get "I don't know". Markers in the question (`[[500:N]]`, ...) still apply.
    """

    def rule(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        content = fake.last_user_message(body)
        injected = fake.marker_reply(content, attempt, headers)
        if injected is not None:
            return injected
        match = ANSWER_LAYOUT.search(content)
        question = match.group(1).strip() if match else ""
        text, logprobs = table.get(question, ("I don't know", None))
        words = text.split(" ")
        tokens = [word if i == 0 else " " + word for i, word in enumerate(words)]
        pairs = list(zip(tokens, logprobs, strict=True)) if logprobs is not None else None
        return fake.Reply(text=text, token_logprobs=pairs)

    return rule
