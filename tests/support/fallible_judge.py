"""Two judges behind one local OpenAI-compatible server: one right, one fallible at known places.

`two_judges(truth, planted)` is a rule for `openai_server.FakeOpenAIServer` that answers by the
request's `model`: `right` says what `truth(question, passage, answer)` says; `fallible` says the
opposite where `planted` puts an error, and the same elsewhere. An error is planted explicitly
(every evidence of a question refused; a wrong passage of a question accepted) or drawn at a
seeded rate per (question, passage), so the same prompt always gets the same answer and a test
or a benchmark knows each error the fallible judge made (`Planted.errs`). Any other model name
is answered HTTP 404, as a server without that model would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from support import openai_server as fake

RIGHT = "right"
FALLIBLE = "fallible"

Truth = Callable[[str, str, str], bool]
"""Whether a passage states the answer of a question: (question, passage, answer) -> yes."""


def draw(seed: int, kind: str, question: str, passage: str) -> float:
    """A number in [0, 1) fixed by the seed, the kind of error and the prompt (spaces aside)."""
    key = f"{seed}|{kind}|{question.strip()}|{' '.join(passage.split())}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:13], 16) / 16**13


@dataclass(frozen=True)
class Planted:
    """Where the fallible judge errs.

    `refused`: questions (their text) whose every true evidence it answers "no"; `accepted`:
    (question text, phrase) pairs, a passage of that question holding the phrase answered "yes";
    `refuse_rate` / `accept_rate`: the share of the other true "yes" / "no" it flips, drawn per
    prompt with `seed`.
    """

    refused: frozenset[str] = frozenset()
    accepted: frozenset[tuple[str, str]] = frozenset()
    refuse_rate: float = 0.0
    accept_rate: float = 0.0
    seed: int = 0

    def errs(self, question: str, passage: str, truth: bool) -> bool:
        """True when the fallible judge answers the opposite of `truth` on this prompt."""
        question, flat = question.strip(), " ".join(passage.split())
        if truth:
            return question in self.refused or (
                draw(self.seed, "refuse", question, flat) < self.refuse_rate
            )
        return any(question == q and phrase in flat for q, phrase in self.accepted) or (
            draw(self.seed, "accept", question, flat) < self.accept_rate
        )

    def says_yes(self, question: str, passage: str, truth: bool) -> bool:
        """The fallible judge's answer on a prompt whose right answer is `truth`."""
        return truth != self.errs(question, passage, truth)


def two_judges(truth: Truth, planted: Planted) -> fake.Rule:
    """The server rule answering model `right` by `truth` and model `fallible` with `planted`'s
    errors (see the module)."""

    def rule(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        content = fake.last_user_message(body)
        injected = fake.marker_reply(content, attempt, headers)
        if injected is not None:
            return injected
        model = body.get("model")
        if model not in (RIGHT, FALLIBLE):
            return fake.Reply(status=404, message=f"the model {model!r} does not exist")
        match = fake.JUDGE_LAYOUT.search(content)
        if match is None:
            return fake.Reply(status=400, message="not a judge prompt")
        passage, question, answer = match.groups()
        yes = truth(question, passage, answer)
        if model == FALLIBLE:
            yes = planted.says_yes(question, passage, yes)
        return fake.Reply(text="yes" if yes else "no", yes_probability=0.9 if yes else 0.1)

    return rule


def asked(server: fake.FakeOpenAIServer, model: str) -> int:
    """How many requests the server got for `model`."""
    return sum(body.get("model") == model for body in server.bodies)


def prompts_of(server: fake.FakeOpenAIServer, model: str) -> list[str]:
    """The user messages the server got for `model`, in order."""
    return [fake.last_user_message(b) for b in server.bodies if b.get("model") == model]
