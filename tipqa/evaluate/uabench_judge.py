"""Whether a UA-Bench answer is correct: tipqa's alias match, or a strict Yes/No LLM judge.

The LLM judge asks a chat model, at temperature 0, whether the answer matches one of the
references (`uabench-judge-v1`) and accepts exactly "Yes" or "No" (case-insensitive, surrounding
whitespace stripped: `tipqa.llm.judges.parsing.parse_yes_no`); any other reply, or a failed
request, is a parse error (None), which the scorer counts and scores as not correct. Behind the
LLM cache (`tipqa.llm.cached_chat`) only Yes and No are kept, so a rerun asks the others again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tipqa.evaluate.matching import exact_match, unwrap_text
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding
from tipqa.llm.judges.parsing import parse_yes_no
from tipqa.llm.prompts import PromptTemplate, load_template

JUDGE_PROMPT = "uabench-judge-v1"
JUDGE_SLOTS = ("question", "answer", "references")
DECODING = Decoding(max_tokens=3, temperature=0.0)


@dataclass(frozen=True)
class AnswerToJudge:
    """One boxed answer to judge, with its question and the accepted references."""

    question: str
    answer: str
    references: Sequence[str]


class AnswerJudge(Protocol):
    """Decides correctness: True, False, or None for a reply it could not parse."""

    name: str

    def judge(self, items: Sequence[AnswerToJudge]) -> list[bool | None]:
        """One decision per item, in order."""
        ...


class AliasJudge:
    """TriviaQA's normalised exact match against the answer and its aliases (a LaTeX text
    command around the whole answer, `\\text{Paris}`, is read as its text, as a judge would)."""

    name = "alias-match"

    def judge(self, items: Sequence[AnswerToJudge]) -> list[bool | None]:
        """Exact match of each answer against its references."""
        return [exact_match(unwrap_text(item.answer), item.references) for item in items]


def yes_or_no(text: str) -> bool | None:
    """True for "yes", False for "no" (`parse_yes_no`), else None."""
    answer = parse_yes_no(text)
    return None if answer is None else answer == "yes"


class LLMAnswerJudge:
    """The judge prompt on a chat model, greedy, read by `parse_yes_no`."""

    def __init__(self, chat: ChatModel, template: PromptTemplate | None = None) -> None:
        self.chat = chat
        self.template = template or load_template(JUDGE_PROMPT)
        self.template.require_slots(*JUDGE_SLOTS)
        self.name = f"llm:{chat.provider}:{chat.model}:{self.template.short_hash}"

    def judge(self, items: Sequence[AnswerToJudge]) -> list[bool | None]:
        """Ask once per item at temperature 0; a failed request or another reply is None."""
        prompts = [
            ChatPrompt(
                [
                    {
                        "role": "user",
                        "content": self.template.render(
                            question=item.question,
                            answer=item.answer,
                            references="; ".join(item.references),
                        ),
                    }
                ]
            )
            for item in items
        ]
        decisions: list[bool | None] = [None] * len(items)

        def take(i: int, result: Completion) -> bool:
            decisions[i] = yes_or_no(result.text) if result.ok else None
            return decisions[i] is not None

        self.chat.complete(prompts, DECODING, desc="judge", on_result=take)
        return decisions
