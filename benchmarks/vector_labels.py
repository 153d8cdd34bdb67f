"""Demo labels under the default vector index and under exact search (library steps, rule judge).

The demo world's questions go through the pipeline's own step functions
(`tipqa.builder.shard_steps`): rule keywords, the tantivy token index, token search and judging,
then vector search and judging twice, once with the shipped `FaissVectorIndex` defaults and
once with a flat (exact) index, both holding the same cached vectors of the world's chunks.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import K1, corpus_files, world_questions
from tipqa.builder import shard_steps
from tipqa.builder.assemble import TokenJudging, VectorJudging, VectorSearching
from tipqa.builder.plan import Plan
from tipqa.builder.step_inputs import (
    KeywordsInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.config import read_config
from tipqa.core.jsonl import read_records
from tipqa.core.layout import ShardLayout, WorldLayout
from tipqa.core.records import Chunk, Decision, VectorCandidates
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.indexes.vector_index.faiss import FaissSettings, FaissVectorIndex
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import RuleKeywordExtractor
from tipqa.sources.corpus.files import FileCorpus
from tipqa.stages.judging import Judges

K2 = 10
ADD = 20_000
CONFIG = read_config({})  # the steps' stats files record these inputs; nothing reads them
PLAN = Plan(CONFIG)
SEARCH = TokenSearchInputs(K1, PLAN.token_index, "keywords", pool="dev")
JUDGING = TokenJudgeInputs(CONFIG.judge, CONFIG.judging, False, SEARCH, pool="dev")
VECTORS = VectorSearchInputs(K2, PLAN.vector_index, "judged", None, pool="dev")
VECTOR_JUDGING = VectorJudgeInputs(CONFIG.judge, "search", PLAN.token_index, pool="dev")


def _index(folder: Path, settings: FaissSettings, chunks: list[Chunk], vectors: np.ndarray) -> Any:
    """A finished FaissVectorIndex of the chunks with their cached vectors."""
    index = FaissVectorIndex(settings, IndexPlace(folder), vectors.shape[1])
    for start in range(0, len(chunks), ADD):
        index.add(chunks[start : start + ADD], vectors[start : start + ADD])
    index.finish()
    return index


def _expected(world: Path) -> dict[str, str]:
    """The label of every demo question by construction."""
    from tipqa.sources.demo.world import Expected

    return {e.question_id: e.label for e in read_records(WorldLayout(world).expected, Expected)}


def label_changes(
    world: Path, chunks: list[Chunk], vectors: np.ndarray, embedder: Any, workdir: Path
) -> dict[str, Any]:
    """How many demo questions change label between the default index and exact search."""
    own = [
        i for i, c in enumerate(chunks) if not c.doc_id.startswith(("wiki:", "cc:", "evidence:"))
    ]
    chunks = [chunks[i] for i in own]
    vectors = vectors[own]
    questions = world_questions(world)
    root = workdir / "labels"
    shutil.rmtree(root, ignore_errors=True)
    token = TantivyTokenIndex.at(root / "token")
    token.build(iter(FileCorpus.of(corpus_files(world), progress=False)))
    out = ShardLayout(root / "shard")
    keywords = KeywordsInputs(CONFIG.keywords, "questions", pool="dev")
    shard_steps.extract_keywords(questions, keywords, RuleKeywordExtractor(), out)
    shard_steps.token_search(questions, SEARCH, token, out)
    shard_steps.token_judge(questions, JUDGING, TokenJudging(Judges(RuleJudge()), token.get), out)
    labels: dict[str, dict[str, str]] = {}
    hits: dict[str, dict[str, list[str]]] = {}
    for name, settings in (("default", FaissSettings()), ("exact", FaissSettings(kind="flat"))):
        index = _index(root / name, settings, chunks, vectors)
        shard_steps.vector_search(questions, VECTORS, VectorSearching(embedder, index), out)
        shard_steps.vector_judge(questions, VECTOR_JUDGING, VectorJudging(Judges(RuleJudge())), out)
        index.close()
        decided = read_records(out.data("vector_decisions"), Decision)
        labels[name] = {d.question_id: d.label for d in decided}
        found = read_records(out.data("vector_candidates"), VectorCandidates)
        hits[name] = {c.question_id: [h.chunk_id for h in c.hits] for c in found}
    expected = _expected(world)
    vector_questions = sorted(labels["exact"])
    changed = [q for q in vector_questions if labels["default"][q] != labels["exact"][q]]
    overlap = [
        len(set(hits["default"][q]) & set(hits["exact"][q])) / max(1, len(hits["exact"][q]))
        for q in vector_questions
    ]
    return {
        "questions": len(questions),
        "vector_stage_questions": len(vector_questions),
        "labels_changed": len(changed),
        "changed": changed,
        "vector_hits_recall_at_10": round(float(np.mean(overlap)), 4) if overlap else None,
        "agree_with_construction": {
            name: sum(labels[name][q] == expected[q] for q in vector_questions) for name in labels
        },
        "index_chunks": len(chunks),
    }
