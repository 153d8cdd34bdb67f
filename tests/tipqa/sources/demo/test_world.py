"""The demo world: deterministic, complete, and true to the labels it claims."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from pathlib import Path

import orjson
import pytest

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.records import Document, Question
from tipqa.core.text import (
    contains_phrase,
    count_phrase,
    split_paragraphs,
    split_sentences,
    tokenize,
    word_count,
)
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.demo import facts
from tipqa.sources.demo.filler import VOCABULARY
from tipqa.sources.demo.names import NameMaker
from tipqa.sources.demo.world import CASES, DEFAULT_COUNTS, Expected, World, WorldSpec, write_world

SPEC = WorldSpec(documents=400, seed=3, k1=10, files=3)


@cache
def world() -> World:
    return World(SPEC)


@cache
def documents() -> dict[str, Document]:
    return {d.id: d for d in world().documents()}


@cache
def sentences() -> dict[str, list[tuple[frozenset[str], list[str]]]]:
    """Each document's sentences as (token set, tokens)."""
    out = {}
    for doc_id, doc in documents().items():
        out[doc_id] = [
            (frozenset(tokens), tokens)
            for tokens in (tokenize(s) for s in split_sentences(doc.text))
        ]
    return out


def states(doc_id: str, keyword: str, aliases: list[str], as_phrase: bool) -> bool:
    """One sentence of the document names the keyword and an alias (as phrases if asked)."""
    kw = tokenize(keyword)
    alias_tokens = [tokenize(a) for a in aliases]
    for present, tokens in sentences()[doc_id]:
        if not set(kw) <= present:
            continue
        if as_phrase and not contains_phrase(tokens, kw):
            continue
        if any(contains_phrase(tokens, a) for a in alias_tokens):
            return True
    return False


@cache
def doc_tokens(doc_id: str) -> list[str]:
    return tokenize(documents()[doc_id].text)


def matches(doc: Document, keyword: str, aliases: list[str]) -> bool:
    """The token query's match: the keyword and an alias as phrases anywhere in the document."""
    tokens = doc_tokens(doc.id)
    return contains_phrase(tokens, tokenize(keyword)) and any(
        contains_phrase(tokens, tokenize(a)) for a in aliases
    )


def test_deterministic_for_a_seed() -> None:
    again = World(SPEC)
    assert again.questions == world().questions
    assert again.expected() == world().expected()
    assert list(again.documents()) == list(documents().values())


def test_different_seeds_differ() -> None:
    other = World(WorldSpec(documents=400, seed=4, k1=10))
    assert [q.text for q in other.questions] != [q.text for q in world().questions]
    assert [d.text for d in other.documents()] != [d.text for d in documents().values()]


def test_every_case_present_with_its_label() -> None:
    expected = world().expected()
    assert Counter(e.case for e in expected) == Counter(DEFAULT_COUNTS)
    assert set(DEFAULT_COUNTS) == set(CASES)
    for e in expected:
        assert (e.label, e.stage) == CASES[e.case]
        has_fact = e.case not in ("split", "absent", "discarded")
        assert (e.fact_doc_id is not None) == has_fact, e
        if e.fact_doc_id is not None:
            assert e.fact_doc_id in documents()
    assert [e.question_id for e in expected] == [q.id for q in world().questions]
    assert len({q.id for q in world().questions}) == len(world().questions)


def test_document_count_and_ids() -> None:
    ids = list(documents())
    assert len(ids) == SPEC.documents
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(doc.text.strip() for doc in documents().values())


def test_long_documents_exceed_the_word_limit() -> None:
    long_docs = [e.fact_doc_id for e in world().expected() if e.case == "long"]
    assert len(long_docs) == DEFAULT_COUNTS["long"]
    for doc_id in long_docs:
        assert word_count(documents()[doc_id].text) > 30_000


def test_paragraph_case_states_the_fact_deep_in_the_document() -> None:
    by_id = {q.id: q for q in world().questions}
    for e in world().expected():
        if e.case != "paragraphs":
            continue
        q = by_id[e.question_id]
        [keyword] = extract_keywords(q.text)
        paragraphs = split_paragraphs(documents()[e.fact_doc_id].text)
        assert len(paragraphs) == 61  # the title, then 60 paragraphs
        stating = [
            i
            for i, p in enumerate(paragraphs)
            if contains_phrase(tokenize(p), tokenize(keyword))
            and contains_phrase(tokenize(p), tokenize(q.answer))
        ]
        assert stating == [46]


def test_each_demo_question_has_exactly_one_rule_keyword() -> None:
    for q in world().questions:
        assert len(extract_keywords(q.text)) == 1, q.text


@pytest.mark.parametrize("template", facts.TEMPLATES, ids=lambda t: t.__name__)
def test_rule_keywords_are_the_fact_keyword(template) -> None:
    rng = random.Random(11)
    names = NameMaker(rng, VOCABULARY)
    for _ in range(200):
        fact = template(names, rng)
        assert extract_keywords(fact.question) == [fact.keyword], fact.question


def test_facts_are_stated_exactly_in_their_fact_document() -> None:
    expected = {e.question_id: e for e in world().expected()}
    for q in world().questions:
        e = expected[q.id]
        [keyword] = extract_keywords(q.text)
        as_phrase = e.case != "vector_only"
        stating = [d for d in documents() if states(d, keyword, q.aliases, as_phrase)]
        assert stating == ([e.fact_doc_id] if e.fact_doc_id else []), (e, stating)
        if e.case == "vector_only":
            loose = [d for d in documents() if states(d, keyword, q.aliases, False)]
            assert loose == [e.fact_doc_id]
            assert not matches(documents()[e.fact_doc_id], keyword, q.aliases)


def test_match_counts_of_the_token_cases() -> None:
    expected = {e.question_id: e for e in world().expected()}
    for q in world().questions:
        e = expected[q.id]
        [keyword] = extract_keywords(q.text)
        matching = [d for d in documents().values() if matches(d, keyword, q.aliases)]
        if e.case == "late":
            assert len(matching) == SPEC.late_rank
        elif e.case in ("discarded", "buried"):
            assert len(matching) > SPEC.k1
        elif e.case == "absent":
            assert matching == []
        elif e.case == "split":
            assert len(matching) == 3
        elif e.case == "single":
            assert [d.id for d in matching] == [e.fact_doc_id]


def test_crowded_case_puts_the_fact_in_the_most_frequent_of_many_matches() -> None:
    spec = WorldSpec(documents=700, seed=5, counts={"crowded": 1}, crowd=500, crowd_mentions=8)
    crowded = World(spec)
    [q] = crowded.questions
    [e] = crowded.expected()
    [keyword] = extract_keywords(q.text)
    phrases = [tokenize(p) for p in dict.fromkeys([keyword, *q.aliases])]
    tokens = {d.id: tokenize(d.text) for d in crowded.documents()}
    matching = [
        i
        for i, t in tokens.items()
        if contains_phrase(t, phrases[0]) and any(contains_phrase(t, p) for p in phrases[1:])
    ]
    assert len(matching) == 501 and (e.label, e.stage) == ("answerable", "token")
    frequency = {i: sum(count_phrase(tokens[i], p) for p in phrases) for i in matching}
    ranked = sorted(matching, key=lambda i: -frequency[i])
    assert ranked[0] == e.fact_doc_id
    assert frequency[ranked[0]] > 2 * frequency[ranked[1]]
    stating = [
        d.id
        for d in crowded.documents()
        if any(
            contains_phrase(st, phrases[0]) and contains_phrase(st, tokenize(q.answer))
            for st in map(tokenize, split_sentences(d.text))
        )
    ]
    assert stating == [e.fact_doc_id]


def test_unknown_case_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown demo case 'haunted'; known: single, late"):
        World(WorldSpec(documents=400, counts={"single": 1, "haunted": 1}))


def test_too_few_documents_is_an_error() -> None:
    with pytest.raises(ValueError, match="50 documents are too few"):
        World(WorldSpec(documents=50, k1=10))


def test_write_world_writes_the_files(tmp_path: Path) -> None:
    spec = WorldSpec(documents=60, seed=2, k1=5, files=3, counts={"single": 2, "absent": 1})
    counts = write_world(spec, tmp_path)
    assert counts == {"documents": 60, "questions": 3}
    parts = sorted((tmp_path / "corpus").iterdir())
    assert [p.name for p in parts] == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    lines = [orjson.loads(line) for p in parts for line in p.read_bytes().splitlines()]
    assert len(lines) == 60
    expected_docs = list(World(spec).documents())
    assert [(x["id"], x["text"]) for x in lines] == [(d.id, d.text) for d in expected_docs]
    assert all(x["meta"] == {"source": "tipqa-demo"} for x in lines)
    assert read_records(tmp_path / "questions.jsonl", Question) == World(spec).questions
    assert read_records(tmp_path / "expected.jsonl", Expected) == World(spec).expected()
    info = read_json(tmp_path / "world.json")
    assert info["documents"] == 60 and info["spec"]["seed"] == 2
    assert not [p for p in tmp_path.rglob("*.tmp")]
