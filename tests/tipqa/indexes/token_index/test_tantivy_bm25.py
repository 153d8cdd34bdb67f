"""BM25 ranking of free text by the tantivy index (`RanksText`), against a brute-force BM25."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError
from tipqa.core.records import Document
from tipqa.core.text import tokenize
from tipqa.indexes.token_index.base import RanksText
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex

TEXTS = [
    "Marie Curie won the Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
    "Marie Curie later won the Nobel Prize in Chemistry, alone, for radium and polonium.",
    "The Nobel Prize is awarded in Stockholm, except the Peace Prize, awarded in Oslo.",
    "Alfred Nobel invented dynamite and left his fortune to fund the prizes.",
    "Radium glows in the dark; radium paint was used on watch dials.",
    "Polonium is named after Poland, the country where Marie Curie was born.",
    "Warsaw is the capital of Poland and lies on the Vistula river.",
    "The Vistula flows north through Krakow and Warsaw to the Baltic Sea.",
    "Paris is the capital of France; the Seine flows through Paris.",
    "The Eiffel Tower in Paris was completed in 1889.",
    "Stockholm is built on fourteen islands where Lake Malaren meets the Baltic Sea.",
    "Oslo is the capital of Norway and sits at the head of the Oslofjord.",
    "Henri Becquerel discovered radioactivity in uranium salts in 1896.",
    "Pierre Curie studied magnetism and crystals before working on radioactivity.",
    "Uranium is a heavy metal; uranium ore is called pitchblende.",
    "Pitchblende from Bohemia gave the Curies their radium and polonium.",
    "A prize is a prize: the word prize comes from the Latin pretium, price.",
    "The capital of the capital region is the capital city.",
    "Dynamite is nitroglycerin absorbed in a porous material, safer to handle.",
    "The Baltic Sea is brackish and has little tide.",
    "Krakow was the capital of Poland until 1596.",
    "Marie and Pierre married in 1895 and cycled through France on their honeymoon.",
    "The Seine rises in Burgundy and reaches the sea at Le Havre.",
    "Le Havre was rebuilt after the war by Auguste Perret in concrete.",
    "Concrete, steel and glass: the materials of the modern city, from Paris to Oslo.",
    "Chemistry and physics meet in the study of radioactivity and of the atom.",
    "The atom has a nucleus of protons and neutrons, and electrons around it.",
    "Electrons were discovered by J. J. Thomson in 1897 in Cambridge.",
    "Cambridge and Oxford are old universities; Cambridge lies on the river Cam.",
    "Physics physics physics: a word repeated is still one word of the text.",
]
CORPUS = [Document(f"d{i:02d}", text) for i, text in enumerate(TEXTS, start=1)]
QUESTIONS = [
    "Who discovered radioactivity in uranium?",
    "Which river flows through Warsaw and Krakow?",
    "What is the capital of Norway?",
    "Where is the Nobel Prize in Physics awarded?",
    "Marie Curie radium polonium Poland",
    "the the the capital",
    "Physics!",
]


def bm25(documents: list[Document], text: str, k1: float = 1.2, b: float = 0.75) -> Counter:
    """Brute-force BM25 of each document that has a token of `text` (tantivy's formula)."""
    tokens = [tokenize(d.text) for d in documents]
    average = sum(map(len, tokens)) / len(documents)
    scores: Counter = Counter()
    for term in dict.fromkeys(tokenize(text)):
        df = sum(term in t for t in tokens)
        idf = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
        for document, doc_tokens in zip(documents, tokens, strict=True):
            tf = doc_tokens.count(term)
            if tf:
                norm = k1 * (1 - b + b * len(doc_tokens) / average)
                scores[document.id] += idf * tf * (k1 + 1) / (tf + norm)
    return scores


def expected(documents: list[Document], text: str, n: int) -> list[str]:
    """The brute-force top n: score (to 6 significant digits: tantivy scores in f32), then id."""
    scores = bm25(documents, text)
    return sorted(scores, key=lambda i: (-float(f"{scores[i]:.6g}"), i))[:n]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TantivyTokenIndex:
    """The corpus, written by two worker processes (BM25 statistics span the segments)."""
    built = TantivyTokenIndex.at(tmp_path_factory.mktemp("bm25") / "index", threads=2)
    built.build(CORPUS)
    return built


def test_tantivy_ranks_text(index: TantivyTokenIndex) -> None:
    assert isinstance(index, RanksText)


def test_rare_words_rank_first(index: TantivyTokenIndex) -> None:
    first, second = index.rank_texts(
        ["Which metal ore is called pitchblende?", "Who invented dynamite?"], 3
    )
    assert first[0] == "d15"
    assert second[:2] == ["d04", "d19"]


def test_n_bounds_the_ranking(index: TantivyTokenIndex) -> None:
    (best,), (everything,) = index.rank_texts(["Uranium"], 1), index.rank_texts(["Uranium"], 50)
    assert best == ["d15"]
    assert sorted(everything) == ["d13", "d15"]
    for n in (0, -1):
        with pytest.raises(ConfigError, match="n must be"):
            index.rank_texts(["uranium"], n)


def test_texts_without_indexed_tokens_rank_nothing(index: TantivyTokenIndex) -> None:
    assert index.rank_texts(["Zyxwvut qwertz", "?!... --", ""], 5) == [[], [], []]
    assert index.rank_texts([], 5) == []


@pytest.mark.parametrize("text", QUESTIONS)
def test_order_equals_brute_force_bm25(index: TantivyTokenIndex, text: str) -> None:
    assert max(len(tokenize(t)) for t in TEXTS) <= 40  # tantivy's length norms are exact here
    for n in (3, 10, len(CORPUS)):
        assert index.rank_texts([text], n) == [expected(CORPUS, text, n)]


def test_ties_are_ordered_by_id(tmp_path: Path) -> None:
    tied = [Document(f"t{i:03d}", "the same words") for i in range(100, 0, -1)]
    others = [Document("a", "other words"), Document("z", "same same same words")]
    index = TantivyTokenIndex.at(tmp_path / "index", threads=1)
    index.build([*tied, *others])
    assert index.rank_texts(["same"], 3) == [["z", "t001", "t002"]]
    assert index.rank_texts(["words"], 40) == [["a", *(f"t{i:03d}" for i in range(1, 40))]]
