"""The cost estimate: how many judge prompts and roughly how many tokens a run will send.

Computed before any judging: the token stage sends at most one prompt per judge window of each
question's first k1 candidates (fewer with early exit), at least one per question with a
candidate; the vector stage at most k2 prompts per question that can reach it (total matches
<= k1). Tokens are estimated from words. `preview_cost` counts them from the token-search
candidates of the whole corpus; `preview_from_sample` estimates them from a token index of a
seeded random sample of the corpus, scaled to the whole (docs/scale.md says how). The step
that builds the sample's index and writes the estimate is `tipqa.builder.preview`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from tipqa.core.records import Document, Question, TokenCandidates
from tipqa.core.text import word_count
from tipqa.indexes.token_index.base import FetchDocuments, TokenIndex
from tipqa.stages.windows import WindowSettings, judge_windows

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


BOOTSTRAP = 400
MIN_MEAN_HITS = 10
"""At least this many of a question's first sample hits give its mean windows per document."""


def in_sample(doc_id: str, share: float, seed: int) -> bool:
    """True for a document of the seeded sample: a hash of (seed, id) below `share` of the range.

    Each document is in the sample with probability `share`, independently of the others and
    of the order and the number of files, so the sample needs one pass and no corpus size.
    """
    digest = hashlib.blake2b(f"{seed}\x00{doc_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") < share * 2**64


def sample_documents(documents: Iterable[Document], share: float, seed: int) -> Iterator[Document]:
    """The documents of the seeded sample (see `in_sample`)."""
    return (document for document in documents if in_sample(document.id, share, seed))


@dataclass
class SampledQuestion:
    """What the sample index says of one question: its matches there and its first hits'
    judge windows and prompt words."""

    total: int
    windows: list[int]
    words: list[int]


def sample_question(
    question: Question,
    keywords: list[str],
    index: TokenIndex,
    windows: WindowSettings,
    k1: int,
    share: float,
    prompt_words: int,
) -> SampledQuestion:
    """Search the sample index as the token stage searches the corpus; count each hit's windows.

    A question whose sample total stays within k1 x share (so within k1 in the corpus) has
    every sample hit counted; above it, the full build judges only the first k1 documents,
    the first k1 x share (at least `MIN_MEAN_HITS`) of the sample, which are counted.
    """
    result = index.search(keywords, question.aliases, k1)
    if result.total <= k1 * share:
        hits = result.hits
    else:
        hits = result.hits[: max(math.ceil(k1 * share), MIN_MEAN_HITS)]
    documents = index.get([hit.doc_id for hit in hits])
    counted, words = [], []
    for hit in hits:
        if hit.doc_id not in documents:
            continue
        pieces, _ = judge_windows(documents[hit.doc_id], keywords, question.aliases, windows)
        counted.append(len(pieces))
        words.append(sum(word_count(w.text) + prompt_words for w in pieces))
    return SampledQuestion(result.total, counted, words)


def _scaled(sampled: SampledQuestion, k1: int, share: float, draws: int, rng: Any) -> Any:
    """Prompts, prompt words and whether it reaches the vector stage, of one question in the
    corpus: the estimate (row 0) and `draws` bootstrap replicates (rows 1...)."""
    values = np.asarray([sampled.windows, sampled.words], dtype=float).T.reshape(-1, 2)
    count = len(values)
    weights = np.vstack([np.ones(count), rng.poisson(1.0, (draws, count))])
    if sampled.total <= k1 * share:
        totals = weights.sum(axis=1)
    else:
        totals = np.concatenate([[sampled.total], rng.poisson(sampled.total, draws)])
    sums = weights @ values if count else np.zeros((draws + 1, 2))
    judged = np.minimum(totals / share, k1)
    shown = np.maximum(weights.sum(axis=1), 1)
    per_document = sums / shown[:, None]
    counted = judged[:, None] * per_document
    return np.column_stack([counted, totals / share <= k1])


def preview_from_sample(
    sampled: list[SampledQuestion],
    k1: int,
    k2: int,
    share: float,
    chunk_tokens: int,
    prompt_words: int,
    seed: int,
) -> dict[str, Any]:
    """Judge prompts and prompt tokens for the whole corpus, scaled from the sample, with 95%
    bootstrap intervals (see docs/scale.md, "What judging will cost, from a sample")."""
    rng = np.random.default_rng(seed)
    total = np.zeros((BOOTSTRAP + 1, 3))
    first_prompts = first_words = 0
    for question in tqdm(sampled, desc="cost from the sample", unit="q", leave=False):
        total += _scaled(question, k1, share, BOOTSTRAP, rng)
        if question.windows:
            first_prompts += question.windows[0]
            first_words += question.words[0]
    vector_prompt_tokens = chunk_tokens + round(prompt_words * TOKENS_PER_WORD)
    columns = {
        "token_prompts": total[:, 0],
        "token_tokens": total[:, 1] * TOKENS_PER_WORD,
        "vector_prompts": total[:, 2] * k2,
        "vector_tokens": total[:, 2] * k2 * vector_prompt_tokens,
    }
    columns["judge_prompts"] = columns["token_prompts"] + columns["vector_prompts"]

    def estimate(name: str) -> dict[str, Any]:
        return estimate_count(columns[name])

    return {
        "questions": len(sampled),
        "token_stage": {
            "prompts_at_most": estimate("token_prompts"),
            "prompt_tokens_at_most": estimate("token_tokens"),
            "prompts_at_least_in_sample": first_prompts,
            "prompt_tokens_at_least_in_sample": round(first_words * TOKENS_PER_WORD),
        },
        "vector_stage": {
            "questions_at_most": estimate_count(total[:, 2]),
            "prompts_at_most": estimate("vector_prompts"),
            "prompt_tokens_at_most": estimate("vector_tokens"),
        },
        "judge_prompts_at_most": estimate("judge_prompts"),
        "assumptions": {
            "tokens_per_word": TOKENS_PER_WORD,
            "chunk_tokens": chunk_tokens,
            "sample_share": share,
            "bootstrap_replicates": BOOTSTRAP,
        },
    }


def confirmation_cost(preview: dict[str, Any]) -> dict[str, Any]:
    """The confirming judge's prompts (`[judge.confirm]`): one per yes of the build's judge,
    so at most one per judge prompt; with early exit, about one per answerable question (a
    question leaves at its first confirmed yes)."""
    return {"prompts_at_most": preview["judge_prompts_at_most"], "prompts_per_yes": 1}


def estimate_count(values: Any) -> dict[str, Any]:
    """An estimate (the first value) and the 95% interval of the bootstrap replicates."""
    low, high = np.percentile(values[1:], [2.5, 97.5])
    return {"estimate": round(float(values[0])), "interval_95": [round(low), round(high)]}


def preview_pool_from_sample(
    shards: list[tuple[list[Question], dict[str, list[str]]]],
    index: TokenIndex,
    windows: WindowSettings,
    build: tuple[int, int],
    share: float,
    seed: int,
    prompt_words: int,
    chunk_tokens: int,
) -> dict[str, Any]:
    """The preview of a pool from the sample index: every shard's questions (with their
    keywords by question id) searched and counted, then scaled (`preview_from_sample`)."""
    k1, k2 = build
    sampled = [
        sample_question(q, keywords[q.id], index, windows, k1, share, prompt_words)
        for questions, keywords in shards
        for q in questions
        if q.id in keywords
    ]
    return preview_from_sample(sampled, k1, k2, share, chunk_tokens, prompt_words, seed)
