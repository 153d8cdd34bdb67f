"""The step functions the Luigi tasks call: shards, files written, and stats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tipqa.builder import shard_steps
from tipqa.builder.assemble import TokenJudging, VectorJudging, VectorSearching
from tipqa.builder.inputs import pool_shards, shard_questions
from tipqa.builder.plan import Plan
from tipqa.builder.shard_steps import (
    extract_keywords,
    extract_shard_keywords,
    token_judge,
    token_search,
    vector_judge,
    vector_search,
)
from tipqa.builder.step_inputs import (
    KeywordsInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.config import read_config
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import PoolLayout, RunLayout, ShardLayout
from tipqa.core.records import (
    Decision,
    Document,
    Judgment,
    Keywords,
    Question,
    TokenCandidates,
    VectorCandidates,
    VectorHit,
    VectorInstance,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import RuleKeywordExtractor
from tipqa.stages.judging import Judges

QUESTIONS = [
    Question("born", "In which city was Kellan Dusk born?", "Varnholt", ["Varnholt"]),
    Question("apart", "In which year did Orla Venn die?", "1544", ["1544"]),
    Question("none", "Who founded the Quillmere Trading Company?", "Tam Rusk", ["Tam Rusk"]),
    Question("broken", "Who wrote the novel Zzz?", "Ada", ["Ada"]),
]
DOCS = [
    ("d1", "Kellan Dusk was born in Varnholt."),
    ("d2", "Orla Venn kept a workshop.\n\nThe winter of 1544 was cold."),
    ("d3", "Varnholt is a harbour town."),
]


CONFIG = read_config({})
PLAN = Plan(CONFIG)
KEYWORDS_INPUTS = KeywordsInputs(CONFIG.keywords, "questions", pool="dev")
SEARCH_INPUTS = TokenSearchInputs(5, PLAN.token_index, "keywords", pool="dev")


def test_pool_shards_read_each_shard_file(tmp_path: Path) -> None:
    pool = PoolLayout(tmp_path / "pool")
    for number, ids in enumerate([["q0", "q1"], ["q2"]]):
        write_records(pool.shard(number).questions, [Question(i, "Q?", "a", ["a"]) for i in ids])
    shards = pool_shards(pool, 2)
    assert [[q.id for q in questions] for questions, _ in shards] == [["q0", "q1"], ["q2"]]
    assert [layout for _, layout in shards] == [pool.shard(0), pool.shard(1)]
    assert [q.id for q in shard_questions(pool.shard(1))] == ["q2"]


class BrokenForOne(RuleKeywordExtractor):
    """The rule extractor, but extraction of question "broken" fails (a seam double)."""

    name = "broken-for-one"

    def __init__(self) -> None:
        self.stats = StepStats("keywords")

    def extract(self, questions: list[Question]) -> list[Keywords]:
        self.stats.add("calls")
        out = super().extract(questions)
        return [
            Keywords(k.question_id, [], error="server_error: 500")
            if k.question_id == "broken"
            else k
            for k in out
        ]


class CountingJudge(RuleJudge):
    """The rule judge with a usage counter, as LLM judges keep one."""

    def __init__(self) -> None:
        self.stats = StepStats("judge")

    def judge(self, requests):
        self.stats.add("requests", len(requests))
        return super().judge(requests)


@pytest.fixture
def index(tmp_path: Path) -> TantivyTokenIndex:
    built = TantivyTokenIndex.at(tmp_path / "token", heap_mb=64, threads=1)
    built.build([Document(i, t) for i, t in DOCS])
    return built


def test_keyword_and_token_steps(tmp_path: Path, index: TantivyTokenIndex) -> None:
    shard = ShardLayout(tmp_path / "shard-00000")
    stats = extract_keywords(QUESTIONS, KEYWORDS_INPUTS, BrokenForOne(), shard)
    assert stats.errors == {"extraction_failed": 1}
    assert stats.counts["questions"] == 4 and stats.counts["BrokenForOne.calls"] == 1
    keywords = read_records(shard.keywords, Keywords)
    assert [k.keywords for k in keywords] == [
        ["Kellan Dusk"], ["Orla Venn"], ["Quillmere Trading Company"], [],
    ]  # fmt: skip
    written = read_json(shard.stats(Step.KEYWORDS))
    assert written["info"] == {"extractor": "broken-for-one"}
    assert written["fingerprint"] == KEYWORDS_INPUTS.record.fingerprint
    assert written["provenance"]["settings"] == {"keywords": CONFIG.keywords.identity()}

    stats = token_search(QUESTIONS, SEARCH_INPUTS, index, shard)
    assert stats.counts["skipped_keyword_error"] == 1
    found = {c.question_id: c for c in read_records(shard.token_candidates, TokenCandidates)}
    assert set(found) == {"born", "apart", "none"}
    assert [h.doc_id for h in found["born"].hits] == ["d1"]
    assert (found["apart"].total, found["none"].total) == (1, 0)

    judge = CountingJudge()
    inputs = TokenJudgeInputs(CONFIG.judge, CONFIG.judging, False, SEARCH_INPUTS, pool="dev")
    stats = token_judge(QUESTIONS, inputs, TokenJudging(Judges(judge), index.get), shard)
    decisions = {d.question_id: d for d in read_records(shard.token_decisions, Decision)}
    assert {k: d.label for k, d in decisions.items()} == {
        "born": "answerable", "apart": "to_vector", "none": "to_vector", "broken": "undetermined",
    }  # fmt: skip
    assert decisions["broken"].reason == "keyword extraction failed: server_error: 500"
    assert decisions["born"].evidence is not None and decisions["born"].evidence.doc_id == "d1"
    judgments = read_records(shard.token_judgments, Judgment)
    assert [(j.question_id, j.label) for j in judgments] == [("born", "yes"), ("apart", "no")]
    assert stats.counts["CountingJudge.requests"] == 2
    assert stats.counts["outcome_undetermined"] == 1
    assert read_json(shard.stats(Step.TOKEN_JUDGE))["info"]["max_words"] == 30_000


class OneHotEmbedder:
    """Question i embeds to the i-th unit vector (a seam double)."""

    name = "one-hot"
    dimension = 4

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.eye(len(texts), self.dimension, dtype=np.float32)


class ChunkPerQuery:
    """Returns, for the i-th unit vector, chunk i (a seam double)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def search(self, vectors: np.ndarray, k: int) -> list[list[VectorHit]]:
        return [
            [
                VectorHit(
                    f"c{int(v.argmax())}", f"d{int(v.argmax())}", 1.0, self.texts[int(v.argmax())]
                )
            ]
            for v in vectors
        ]


def test_vector_steps_take_only_questions_passed_on(tmp_path: Path) -> None:
    shard = ShardLayout(tmp_path / "shard-00000")
    write_records(
        shard.token_decisions,
        [
            Decision("born", "answerable", "token", "yes"),
            Decision("apart", "to_vector", "token", "none relevant"),
            Decision("none", "to_vector", "token", "no match"),
            Decision("broken", "undetermined", "token", "failed"),
        ],
    )
    keywords = [["Kellan Dusk"], ["Orla Venn"], ["Quillmere Trading Company"], []]
    write_records(
        shard.keywords,
        [Keywords(q.id, k) for q, k in zip(QUESTIONS, keywords, strict=True)],
    )
    texts = ["Orla Venn died in 1544.", "Quillmere is a town."]
    index = ChunkPerQuery(texts)
    inputs = VectorSearchInputs(1, PLAN.vector_index, "judge", None, pool="dev")
    stats = vector_search(QUESTIONS, inputs, VectorSearching(OneHotEmbedder(), index), shard)
    assert stats.counts["questions"] == 2
    candidates = read_records(shard.vector_candidates, VectorCandidates)
    assert [(c.question_id, c.hits[0].chunk_id) for c in candidates] == [
        ("apart", "c0"),
        ("none", "c1"),
    ]
    judging = VectorJudgeInputs(CONFIG.judge, "search", PLAN.token_index, pool="dev")
    stats = vector_judge(QUESTIONS, judging, VectorJudging(Judges(RuleJudge())), shard)
    decisions = read_records(shard.vector_decisions, Decision)
    assert [(d.question_id, d.label) for d in decisions] == [
        ("apart", "answerable"),
        ("none", "unanswerable"),
    ]
    instances = read_records(shard.instances, VectorInstance)
    assert [(i.question_id, i.relevant) for i in instances] == [("apart", True), ("none", False)]
    assert read_json(shard.stats(Step.VECTOR_JUDGE))["counts"]["prompts"] == 2


def test_the_keyword_step_closes_the_extractor_it_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []

    class Closing(RuleKeywordExtractor):
        def close(self) -> None:
            closed.append(self.name)

    monkeypatch.setattr(shard_steps, "make_keyword_extractor", lambda choice, cache: Closing())
    layout = RunLayout(tmp_path / "run")
    write_records(layout.pool("dev").shard(0).questions, QUESTIONS)
    stats = extract_shard_keywords(KEYWORDS_INPUTS.at(0), layout)
    assert stats.counts["questions"] == len(QUESTIONS)
    assert closed == [Closing.name]


def test_judging_backends_close_their_judge() -> None:
    closed: list[str] = []

    class Closing(RuleJudge):
        def close(self) -> None:
            closed.append("judge")

    TokenJudging(Closing(), lambda ids: {}).close()
    VectorJudging(Closing()).close()
    assert closed == ["judge", "judge"]
