"""The judge request factory the judge tests share (each binds its question and answer)."""

from __future__ import annotations

from tipqa.core.records import JudgeRequest, Stage


def judge_request(
    text: str,
    index: int = 0,
    *,
    question: str,
    answer: str,
    keywords: list[str],
    aliases: list[str] | None = None,
    stage: Stage = "token",
    unit: str = "d{index}#0",
) -> JudgeRequest:
    """A request for document d{index}; `aliases` default to the answer, `unit` is formatted."""
    return JudgeRequest(
        question_id=f"q{index}",
        question=question,
        answer=answer,
        aliases=[answer] if aliases is None else aliases,
        keywords=keywords,
        stage=stage,
        doc_id=f"d{index}",
        unit_id=unit.format(index=index),
        text=text,
    )
