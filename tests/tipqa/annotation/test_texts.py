"""Recovering the judged texts: windows recomputed from the index, chunks from the candidates."""

from __future__ import annotations

import pytest

from tipqa.annotation.sampling import SamplingSettings, sample_pool
from tipqa.annotation.texts import attach_texts, window_index
from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_records
from tipqa.core.records import Document, LabeledQuestion
from tipqa.core.stats import StepStats


def _sample(pool, seed: int = 0):
    return sample_pool(pool.layout, SamplingSettings(1000, 0, 2, seed), StepStats("t")).items


def test_every_text_is_recovered_and_token_evidence_matches(make_pool) -> None:
    pool = make_pool()
    items = _sample(pool)
    stats = StepStats("t")
    attach_texts(items, pool.layout, pool.fetch, stats)
    assert all(i.text for i in items)
    for item in items:
        if item.stage == "vector":
            assert item.text == f"Chunk {item.unit_id.rsplit('-c', 1)[1]} of {item.question_id}."
        else:
            assert item.text.startswith(item.keywords[0]) and item.answer in item.text
    evidence = {
        (r.id, r.evidence.unit_id): r.evidence.text
        for r in read_records(pool.layout.partition / "answerable.jsonl", LabeledQuestion)
        if r.evidence
    }
    checked = [i for i in items if i.evidence]
    assert checked and all(evidence[(i.question_id, i.unit_id)] == i.text for i in checked)
    assert stats.counts["token_evidence_checked"] == sum(i.stage == "token" for i in checked)


def test_a_document_missing_from_the_index_is_an_error(make_pool) -> None:
    pool = make_pool()
    items = _sample(pool)
    gone = next(i for i in items if i.stage == "token").doc_id
    del pool.documents[gone]
    with pytest.raises(InputError, match=f"no document '{gone}'"):
        attach_texts(items, pool.layout, pool.fetch, StepStats("t"))


def test_a_changed_document_no_longer_matching_the_evidence_is_an_error(make_pool) -> None:
    pool = make_pool()
    items = _sample(pool)
    item = next(i for i in items if i.stage == "token" and i.evidence)
    old = pool.documents[item.doc_id]
    pool.documents[item.doc_id] = Document(old.id, old.text.replace("commas", "semicolons"))
    with pytest.raises(InputError, match="differs from the stored evidence"):
        attach_texts(items, pool.layout, pool.fetch, StepStats("t"))


def test_window_index_reads_the_unit_id(make_pool) -> None:
    pool = make_pool()
    item = next(i for i in _sample(pool) if i.stage == "token")
    assert window_index(item) == 0
    item.unit_id = item.doc_id + "#c3"
    with pytest.raises(InputError, match="is not '<doc_id>@w<index>'"):
        window_index(item)
