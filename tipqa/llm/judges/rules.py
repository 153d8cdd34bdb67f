"""Offline relevance judge by rules: keywords and an answer alias stated in one sentence.

A window is relevant when one of its sentences contains every token of every keyword (in any
order: "Dusk, Kellan" names Kellan Dusk) and an answer alias as a phrase. Mentioning both in
different sentences or paragraphs is not enough. With no keywords, an alias sentence must share
at least half of the question's content words. It is deterministic and needs no model, which
makes the demo world's labels exact; it is no substitute for an LLM on real data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tipqa.core.records import JudgeRequest, Judgment, Relevance
from tipqa.core.settings import Settings
from tipqa.core.text import contains_phrase, split_sentences, tokenize

_STOP = frozenset(
    (
        "a an the of in on at to for by from with and or is was are were be been which what "
        "who whom whose where when why how did does do that this these those it its as name"
    ).split()
)


def is_relevant(request: JudgeRequest) -> bool:
    """True when one sentence of the text states the keywords together with an alias."""
    aliases = [t for t in (tokenize(a) for a in request.aliases) if t]
    keyword_tokens = [set(tokenize(k)) for k in request.keywords]
    keyword_tokens = [k for k in keyword_tokens if k]
    content = {t for t in tokenize(request.question) if t not in _STOP}
    for sentence in split_sentences(request.text):
        tokens = tokenize(sentence)
        if not any(contains_phrase(tokens, alias) for alias in aliases):
            continue
        present = set(tokens)
        if keyword_tokens:
            if all(k <= present for k in keyword_tokens):
                return True
        elif content and len(content & present) * 2 >= len(content):
            return True
    return False


RULES_VERSION = "v1"


@dataclass(frozen=True)
class RuleJudgeSettings(Settings):
    """[judge] of the rules backend: nothing to set; the rules' version is its identity."""

    def identity(self) -> dict[str, Any]:
        """The version of the rules (bumped whenever they change what they accept)."""
        return {"rules_version": RULES_VERSION}


class RuleJudge:
    """The offline judge (registry name "rules")."""

    name = f"rules:{RULES_VERSION}"

    def __init__(self, settings: RuleJudgeSettings | None = None) -> None:
        self.settings = settings or RuleJudgeSettings()

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """Judge each request by `is_relevant`."""
        judgments = []
        for r in requests:
            label: Relevance = "yes" if is_relevant(r) else "no"
            judgments.append(Judgment.of(r, label=label, raw=label, judge=self.name))
        return judgments

    def close(self) -> None:
        """Nothing to let go of (the rules hold no connection)."""
