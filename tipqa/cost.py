"""A cost preview: how many judge prompts and roughly how many tokens a run will send.

Computed from the token-search candidates before any judging: the token stage sends at most
one prompt per judge window of each question's first k1 candidates (fewer with early exit),
at least one per question with a candidate; the vector stage at most k2 prompts per question
that can reach it (total matches <= k1). Tokens are estimated from words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

from tqdm import tqdm

from tipqa.config import Choice
from tipqa.embedders.base import KnowsSequenceLength
from tipqa.errors import ConfigError
from tipqa.fingerprint import StepInputs
from tipqa.jsonl import read_records, write_json
from tipqa.judges.base import JUDGES, Prompted
from tipqa.layout import COST_PREVIEW, QUESTIONS, TOKEN_SEARCH, ShardLayout
from tipqa.llm.prompts import load_template
from tipqa.records import SCHEMA_VERSION, Question, TokenCandidates
from tipqa.stages.inputs import TokenJudgeInputs
from tipqa.text import word_count
from tipqa.token_index.base import FetchDocuments
from tipqa.windows import WindowSettings, judge_windows

TOKENS_PER_WORD = 1.33


def preview_cost(
    questions: list[Question],
    candidates: dict[str, TokenCandidates],
    fetch: FetchDocuments,
    windows: WindowSettings,
    k1: int,
    k2: int,
    prompt_words: int,
    chunk_tokens: int,
) -> dict[str, Any]:
    """Upper and lower bounds of judge prompts and prompt tokens for these questions."""
    token_prompts = token_words = first_prompts = first_words = 0
    reach_vector = 0
    for question in tqdm(questions, desc="cost preview", unit="q", leave=False):
        found = candidates.get(question.id)
        if found is None:
            continue
        if found.total <= k1:
            reach_vector += 1
        hits = found.hits[:k1]
        documents = fetch([h.doc_id for h in hits])
        for rank, hit in enumerate(hits):
            if hit.doc_id not in documents:
                continue
            pieces, _ = judge_windows(
                documents[hit.doc_id], found.keywords, question.aliases, windows
            )
            words = sum(word_count(w.text) + prompt_words for w in pieces)
            token_prompts += len(pieces)
            token_words += words
            if rank == 0:
                first_prompts += len(pieces)
                first_words += words
    vector_prompts = reach_vector * k2
    vector_tokens = vector_prompts * (chunk_tokens + round(prompt_words * TOKENS_PER_WORD))
    return {
        "questions": len(questions),
        "token_stage": {
            "prompts_at_most": token_prompts,
            "prompts_at_least": first_prompts,
            "prompt_tokens_at_most": round(token_words * TOKENS_PER_WORD),
            "prompt_tokens_at_least": round(first_words * TOKENS_PER_WORD),
        },
        "vector_stage": {
            "questions_at_most": reach_vector,
            "prompts_at_most": vector_prompts,
            "prompt_tokens_at_most": vector_tokens,
        },
        "assumptions": {"tokens_per_word": TOKENS_PER_WORD, "chunk_tokens": chunk_tokens},
    }


def _add(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Sum two previews field by field (assumptions are kept from the first)."""
    if not total:
        return part
    for key, value in part.items():
        if isinstance(value, dict) and key != "assumptions":
            total[key] = _add(total[key], value)
        elif isinstance(value, int):
            total[key] += value
    return total


@dataclass(frozen=True)
class PreviewInputs(StepInputs):
    """PreviewCost: the token judging's settings (and k1), k2 and the embedder, over the token
    search of a pool's questions."""

    step: ClassVar[str] = COST_PREVIEW
    judging: TokenJudgeInputs
    k2: int
    embedder: Choice
    questions: str

    def settings(self) -> dict[str, Any]:
        return {**self.judging.settings(), "k2": self.k2, "embedder": self.embedder.identity()}

    def upstream(self) -> dict[str, Any]:
        return {QUESTIONS: self.questions, TOKEN_SEARCH: self.judging.search.record.fingerprint}

    def prompt_words(self) -> int:
        """The words of the judge's prompt template (0 for a judge without a prompt)."""
        judge = self.judging.judge
        if not JUDGES.has(judge.backend, "prompted"):
            return 0
        return word_count(load_template(cast(Prompted, judge.settings).prompt).text)

    def chunk_tokens(self) -> int:
        """The embedder's chunk size in tokens (ConfigError when it cannot tell)."""
        settings = self.embedder.settings
        if not isinstance(settings, KnowsSequenceLength):
            raise ConfigError(f"embedder {self.embedder.backend!r} cannot tell its chunk size")
        return settings.max_seq_length()


def preview_pool(
    shards: list[tuple[list[Question], ShardLayout]],
    fetch: FetchDocuments,
    inputs: PreviewInputs,
    out: Path,
) -> dict[str, Any]:
    """The preview of every shard of a pool, summed, written to `out` and returned.

    With `[boundary] judge_all_candidates` it also says what judging every candidate adds
    (`judge_all_candidates`: `judge_all_cost`).
    """
    judging, record = inputs.judging, inputs.record
    sizes = (judging.k1, inputs.k2, inputs.prompt_words(), inputs.chunk_tokens())
    windows = judging.window_limits()
    total: dict[str, Any] = {}
    for questions, shard in shards:
        found = {c.question_id: c for c in read_records(shard.token_candidates, TokenCandidates)}
        total = _add(total, preview_cost(questions, found, fetch, windows, *sizes))
    if judging.judge_all and total:
        total["judge_all_candidates"] = judge_all_cost(total)
    write_json(
        out,
        {
            **total,
            "schema_version": SCHEMA_VERSION,
            "fingerprint": record.fingerprint,
            "provenance": record.provenance(),
        },
    )
    return total


def judge_all_cost(preview: dict[str, Any]) -> dict[str, Any]:
    """What judging every one of the first k1 candidates (no early exit) costs and adds.

    Without early exit the token stage sends exactly the preview's `prompts_at_most`; with
    it, somewhere between `prompts_at_least` and that. So `judge_all_candidates` adds between
    0 and the difference; prompts that an early-exit run already sent are answered from the
    LLM cache and cost nothing again.
    """
    token = preview["token_stage"]
    return {
        "prompts": token["prompts_at_most"],
        "prompt_tokens": token["prompt_tokens_at_most"],
        "added_prompts_at_most": token["prompts_at_most"] - token["prompts_at_least"],
        "added_prompt_tokens_at_most": (
            token["prompt_tokens_at_most"] - token["prompt_tokens_at_least"]
        ),
    }
