"""The cost preview counts what judging will send, before any judging."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tests_support import fetch_from

from tipqa.core.records import Document, Question, TokenCandidates, TokenHit
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.stages.cost import (
    in_sample,
    preview_cost,
    preview_pool_from_sample,
    sample_documents,
)
from tipqa.stages.windows import WindowSettings

DOCS = {
    "d1": Document("d1", "Ada Vell was born in Orrin.\n\nShe wrote songs."),
    "d2": Document("d2", "Ada Vell sailed.\n\nOrrin is a port.\n\nAda Vell left Orrin."),
    "d3": Document("d3", "Nothing about it " * 50),
}

fetch = fetch_from(DOCS)


def candidates(qid: str, ids: list[str], total: int) -> TokenCandidates:
    return TokenCandidates(qid, ["Ada Vell"], total, [TokenHit(i, 1.0) for i in ids])


def test_bounds_follow_windows_k1_and_reachability() -> None:
    questions = [
        Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"]),
        Question("q2", "Where did Ada Vell go?", "Orrin", ["Orrin"]),
        Question("q3", "Who?", "Orrin", ["Orrin"]),
    ]
    found = {
        "q1": candidates("q1", ["d1", "d2", "d3"], 3),
        "q2": candidates("q2", ["d2", "missing"], 2),
        "q3": candidates("q3", [], 0),
    }
    preview = preview_cost(questions, found, fetch, WindowSettings(), 2, 10, 40, 256)
    token = preview["token_stage"]
    # q1 judges d1 (one window) and d2 (two windows: paragraphs 1-2 and 3); d3 is past k1=2.
    # q2 judges d2 (two windows); "missing" is not in the index.
    assert token["prompts_at_most"] == 1 + 2 + 2
    assert token["prompts_at_least"] == 1 + 2
    assert token["prompt_tokens_at_least"] < token["prompt_tokens_at_most"]
    # q2 (2 matches) and q3 (none) can reach the vector stage; q1 has more than k1 matches.
    assert preview["vector_stage"] == {
        "questions_at_most": 2,
        "prompts_at_most": 20,
        "prompt_tokens_at_most": 20 * (256 + round(40 * 1.33)),
    }


def _corpus() -> list[Document]:
    """3,000 documents: "Ada Vell" with "Orrin" in 600 of them (several paragraphs in some),
    "Ben Oru" with "Lisk" in 60, neither in the rest."""
    documents = []
    for i in range(3000):
        if i % 5 == 0:
            text = "Ada Vell came to Orrin." + "\n\nAda Vell sang in Orrin." * (i % 3)
        elif i % 50 == 1:
            text = "Ben Oru lived in Lisk for a year."
        else:
            text = f"A plain note number {i} about the weather."
        documents.append(Document(f"d{i:05d}", text))
    return documents


@pytest.mark.slow
def test_the_sample_scales_to_the_corpus_within_its_interval(tmp_path: Path) -> None:
    documents = _corpus()
    questions = [
        Question("q1", "Where did Ada Vell go?", "Orrin", ["Orrin"]),
        Question("q2", "Where did Ben Oru live?", "Lisk", ["Lisk"]),
        Question("q3", "Who is Cal Dun?", "Nowhere", ["Nowhere"]),
    ]
    keywords = {"q1": ["Ada Vell"], "q2": ["Ben Oru"], "q3": ["Cal Dun"]}
    full = TantivyTokenIndex.at(tmp_path / "full", threads=1)
    full.build(documents)
    found = {q.id: full.search(keywords[q.id], q.aliases, 100) for q in questions}
    exact = preview_cost(
        questions,
        {q: TokenCandidates(q, keywords[q], r.total, r.hits) for q, r in found.items()},
        full.get, WindowSettings(), 100, 10, 40, 256,
    )  # fmt: skip
    share = 0.2
    sampled = [d for d in documents if in_sample(d.id, share, seed=3)]
    assert 0.15 < len(sampled) / len(documents) < 0.25
    part = TantivyTokenIndex.at(tmp_path / "sample", threads=1)
    part.build(sample_documents(documents, share, 3))
    preview = preview_pool_from_sample(
        [(questions, keywords)], part, WindowSettings(), (100, 10), share, 3, 40, 256
    )
    token = preview["token_stage"]["prompts_at_most"]
    truth = exact["token_stage"]["prompts_at_most"]
    assert abs(token["estimate"] - truth) <= 0.25 * truth, (token, truth)
    low, high = token["interval_95"]
    assert low <= truth <= high and low < high
    vector = preview["vector_stage"]["questions_at_most"]
    assert vector["estimate"] == exact["vector_stage"]["questions_at_most"] == 2
