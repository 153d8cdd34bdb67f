"""An authored corpus where frequency ranking is hard, and its queries.

More than 1,000 short documents match each broad query once or twice; the best documents by
frequency are a few long ones (rare, and the ones BM25 ranks last); some of them tie and are
written in an order that is not their id order; phrases overlap ("new york" inside "new york
city", "la la" inside "la la la") and a long document repeats "york" without "new york", so
the rarest-token bound of a phrase is loose there. Shared by the tantivy ranking tests
(tests/tipqa/indexes/token_index) and the Lucene semantics tests (tests/tipqa/indexes/es).
"""

from __future__ import annotations

import random

from tipqa.core.records import Document

SHORT = [
    "A trip to New York City in spring.",
    "New York City is large; New York never sleeps.",
    "York is old. New houses in New York City.",
    "La la land is a film about New York City.",
    "The new city hall of New York City opened.",
]
FILLER = "The river valley is known for its mild weather and fertile soil. "


def _long(new_york_city: int, new_york: int, york: int, la: int, seed: int) -> str:
    """A long document with given numbers of each mention, shuffled among filler."""
    parts = (
        ["They moved to New York City."] * new_york_city
        + ["New York, New York, they sang."] * new_york
        + ["York Minster stands in York."] * york
        + ["La la la, sang the city choir."] * la
        + [FILLER * 3] * 60
    )
    random.Random(seed).shuffle(parts)
    return " ".join(parts)


def corpus() -> list[Document]:
    """The documents, in build order (not id order); the last one repeats an id."""
    rng = random.Random(16)
    docs = [Document(f"s{i:05d}", rng.choice(SHORT) + " " + FILLER) for i in range(1300)]
    docs += [
        Document("long-c", _long(40, 5, 0, 0, 1)),
        Document("long-a", _long(40, 5, 0, 0, 2)),  # ties long-c: same counts, smaller id
        Document("long-b", _long(12, 30, 2, 3, 3)),
        Document("long-y", _long(1, 0, 200, 0, 4)),  # "york" everywhere, "new york" once
        Document("long-l", _long(0, 0, 0, 50, 5)),
    ]
    rng.shuffle(docs)
    docs.append(Document("long-a", "A second long-a that is not indexed: New York City."))
    return docs


QUERIES = [
    ([], ["New York"]),
    (["New York"], ["New York City"]),
    (["New York City"], ["New York"]),
    (["york"], ["city", "New York"]),
    (["city"], ["york"]),
    (["york"], ["new"]),
    (["la la"], ["city"]),
    ([], ["la", "la la"]),
    (["new york"], ["york"]),
    (["York Minster"], ["York"]),
]
DEPTHS = (1, 2, 5, 100, 2000)
