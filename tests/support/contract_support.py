"""The authored corpus and queries of the token-index contract tests.

Shared by tests/tipqa/indexes/token_index/test_elasticsearch_contract.py (a real cluster) and
tests/tipqa/indexes/es/test_lucene_semantics.py (Lucene itself).
"""

from __future__ import annotations

from tipqa.core.records import Document

LONG = "a" * 50
CORPUS = [
    Document("d01", "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."),
    Document(
        "d02", "Paris has the Eiffel Tower. The Eiffel Tower is 330 metres tall. Paris, Paris!"
    ),
    Document("d03", "Tower Eiffel: the words in another order. tower, eiffel, Paris."),
    Document(
        "d04", "EIFFEL-TOWER (Paris): a wrought-iron lattice tower. eiffel tower again.", {"k": 1}
    ),
    Document(
        "d05", "Gustave Eiffel's company built it in Paris; the Eiffel  Tower opened in 1889."
    ),
    Document("d06", "   "),
    Document("d07", "la la la land: La La Land won six awards."),
    Document("d08", "Mount Everest is 8,849 metres high; Everest lies in Nepal and Tibet."),
    Document("d09", "Sagarmatha (Everest) is Nepal's name for Mount Everest."),
    Document(
        "d10", "\u039f\u0394\u039f\u03a3 is Greek for road; \u039f\u03b4\u03bf\u03c2 as well."
    ),
    Document("d11", "\u0130stanbul and Istanbul: the city on the Bosphorus, once Constantinople."),
    Document("d12", "Constantinople became Istanbul in 1930."),
    Document("d13", f"Before {LONG} after: the river Thames flows through London."),
    Document("d14", "caf\u00e9 au lait and cafe\u0301 au lait"),
    Document("d15", "snake_case_name and snake case name"),
    Document("d16", "Apollo 11 landed on the Moon."),
    Document("d17", "On the Moon: Apollo 11."),
    Document("d20", "The Moon, reached by Apollo 11."),
    Document("d21", "Moon Moon Moon Apollo 11"),
    Document("d22", "Neil Armstrong walked on the Moon during Apollo 11 in 1969."),
    Document("d23", "Les Mis\u00e9rables by Victor Hugo; the Les Miserables musical."),
    Document("d24", "Victor Hugo wrote Notre-Dame de Paris (The Hunchback of Notre-Dame)."),
    Document("d25", "Hugo Victor is another name order."),
    Document("d01", "A second d01 about Paris, the Eiffel Tower and 1889: not indexed."),
]

QUERIES = [
    (["Eiffel Tower"], ["Paris"]),
    (["Eiffel Tower"], ["1889", "eighteen eighty-nine"]),
    ([], ["la la"]),
    (["Everest"], ["Nepal", "Tibet"]),
    (["road"], ["\u039f\u0394\u039f\u03a3"]),
    (["Istanbul"], ["Constantinople"]),
    (["\u0130stanbul"], ["Bosphorus"]),
    (["before after"], ["London"]),
    (["au lait"], ["caf\u00e9", "cafe"]),
    (["snake case"], ["name"]),
    (["Apollo 11"], ["Moon"]),
    (["Victor Hugo"], ["Les Mis\u00e9rables", "Les Miserables", "Notre-Dame"]),
    (["Paris"], ["Paris", "Eiffel Tower"]),
    (["Paris", "paris"], ["PARIS"]),
    (["Atlantis"], ["Paris"]),
    (["Eiffel Tower"], ["!!!"]),
]

ANALYZED = [
    "Hello, World! It's 3.14 o'clock_now",
    "\u039f\u0394\u039f\u03a3 \u0391\u03a3.\u0392 \u0130stanbul caf\u00e9 cafe\u0301",
    f"x {LONG} y " + "\U0001d400" * 41 + " z " + "\U0001d400" * 40,
    "\u4e2d\u6587 \u0661\u0662 \u0939\u093f\u0928\u094d\u0926\u0940 \u2160 \u00bd \u24b6",
]
