"""Algorithm 1's token stage on a world with questions above 1,000 matches, end to end.

The world is the demo generator's, with the "crowded" case: the fact sits in the most frequent
of more than 1,000 matching documents. The tantivy index (built by two worker processes) must
give the candidates and totals of a brute-force ranking, and the rules judge must then give
every question the label it has by construction; the approximate ranking ("bm25-pool", 1,000
documents) loses the crowded ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.core.records import Document, Keywords, TokenCandidates, TokenHit
from tipqa.core.stats import StepStats
from tipqa.core.text import contains_phrase, count_phrase, tokenize
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.demo.world import World, WorldSpec
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.windows import WindowSettings

K1 = 100
SPEC = WorldSpec(
    documents=3200,
    seed=21,
    k1=K1,
    counts={"crowded": 2, "single": 2, "late": 1, "long": 1, "discarded": 1, "buried": 1},
    crowd=1100,
    crowd_mentions=10,
)


def brute_force(
    documents: list[Document], keywords: list[str], aliases: list[str]
) -> tuple[int, list[TokenHit]]:
    """Total and first K1 hits by the definition, computed with tipqa.core.text."""
    key = list(dict.fromkeys(tuple(p) for p in map(tokenize, keywords) if p))
    alias = list(dict.fromkeys(tuple(p) for p in map(tokenize, aliases) if p))
    rows = []
    for doc in documents:
        tokens = tokenize(doc.text)
        if all(contains_phrase(tokens, p) for p in key) and any(
            contains_phrase(tokens, p) for p in alias
        ):
            rows.append((-sum(count_phrase(tokens, p) for p in dict.fromkeys(key + alias)), doc.id))
    rows.sort()
    return len(rows), [TokenHit(d, float(-f)) for f, d in rows[:K1]]


@pytest.mark.slow
def test_labels_with_exact_ranking_equal_brute_force_and_construction(tmp_path: Path) -> None:
    world = World(SPEC)
    documents = list(world.documents())
    index = TantivyTokenIndex.at(tmp_path / "token", threads=2, heap_mb=64)
    index.build(documents)
    questions = world.questions
    keywords = {q.id: Keywords(q.id, extract_keywords(q.text)) for q in questions}
    found = search_tokens(questions, keywords, index, K1, StepStats("search"))
    reference = [
        TokenCandidates(q.id, keywords[q.id].keywords, *brute_force(documents, kw, q.aliases))
        for q in questions
        for kw in [keywords[q.id].keywords]
    ]
    assert found == reference
    assert sum(c.total > 1000 for c in found) == SPEC.counts["crowded"]

    def labels(candidates: list[TokenCandidates]) -> dict[str, str]:
        decisions, _ = judge_token_candidates(
            questions,
            {c.question_id: c for c in candidates},
            index.get,
            RuleJudge(),
            K1,
            WindowSettings(),
            StepStats("judge"),
        )
        return {d.question_id: d.label for d in decisions}

    exact = labels(found)
    assert exact == labels(reference)
    by_construction = {e.question_id: e.label for e in world.expected()}
    assert exact == by_construction

    pooled = TantivyTokenIndex.at(index.path, ranking="bm25-pool")
    approximate = labels(search_tokens(questions, keywords, pooled, K1, StepStats("pool")))
    crowded = [e.question_id for e in world.expected() if e.case == "crowded"]
    assert {approximate[q] for q in crowded} == {"discarded"}
