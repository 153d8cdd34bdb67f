"""A world of our own with planted misses, and a judge that is always right about it.

Every fact of the world is one sentence of one document; a question is truly answerable when
its fact is in the corpus, truly unanswerable when not. Built with the offline rule keywords,
k1 = 3 and k2 = 2, Algorithm 1 misses four planted facts:

- `misspelled`: the question writes the composer's name with one letter less than the document,
  so its keyword matches nothing, and three documents that only repeat the question's words
  hold the two nearest chunks;
- `wrong_keyword`: the question names an almanac that the fact's document never mentions, so
  the AND of its keywords matches nothing (near chunks as above);
- `deeper`: the naturalist's name is written "Vorane, Pell" and the answer as two words, so
  no phrase matches and only the vector stage can reach it, past the k2 nearest chunks;
- `after_k1`: four documents name the climber and the mountain twice each without the fact,
  so the fact's document ranks fifth by frequency, after the first k1.

Truly unanswerable questions (`absent*`) mention their names and answers apart, or together
without the fact; `absent_discarded` has more than k1 such documents. The perfect judge
(`perfect_judge`, behind the local OpenAI-compatible server) answers "yes" exactly when the
passage holds a fact sentence of the question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import openai_server as fake
from tipqa.core.jsonl import read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS as ALL_LABELS
from tipqa.core.records import Document, JudgeRequest, Judgment, LabeledQuestion, Question

FACTS = {
    "normal_city": "The explorer Tovan Quillry founded the city of Marsk.",
    "normal_fruit": "The gardener Ilse Formaro bred the Plumwort.",
    "vector": "Alcott, Jory painted Lake Mirrin at dawn.",
    "misspelled": "The composer Orrin Feldsparr played the Varlute at every concert.",
    "wrong_keyword": "Selwyn Droke mapped the river Tellan from its source to the sea.",
    "deeper": "Vorane, Pell described the small gorse wren of the heath in a short note.",
    "after_k1": "The climber Brannoc Hale first climbed Serrik in the spring.",
}
QUESTIONS = [
    ("normal_city", "Which city did the explorer Tovan Quillry found?", "Marsk"),
    ("normal_fruit", "Which fruit did the gardener Ilse Formaro breed?", "Plumwort"),
    ("vector", "Which lake did the painter Jory Alcott paint?", "Lake Mirrin"),
    ("misspelled", "Which instrument did the composer Orrin Feldspar play?", "Varlute"),
    ("wrong_keyword", "In the Harrowgate Almanac, which river did Selwyn Droke map?", "Tellan"),
    ("deeper", "Which bird did the naturalist Pell Vorane describe?", "Gorsewren"),
    ("after_k1", "Which mountain did the climber Brannoc Hale first climb?", "Serrik"),
    ("absent_ship", "Which ship did Corvin Ashdale command?", "Gullwing"),
    ("absent_flag", "What colour was the flag of the Tarrow Guild?", "Ochre"),
    ("absent_horse", "Which horse did the rider Mave Tolland own?", "Brisket"),
    ("absent_discarded", "Which bridge did the mason Ulric Penhale build?", "Stonemere"),
]
DOCUMENTS = [
    FACTS["normal_city"] + " Its harbour is small.",
    "Quiz night. Which city did the explorer Tovan Quillry found? Answer: Marsk.",
    FACTS["normal_fruit"] + " The orchard still stands.",
    FACTS["vector"] + " The canvas hangs in a chapel.",
    FACTS["misspelled"] + " Critics praised his hands.",
    "Which instrument did the composer Orrin Feldspar play? Nobody in the village can say.",
    "The composer Orrin Feldspar wrote letters about which instrument to play at weddings.",
    "Orrin Feldspar was a composer; which instrument he would play is not written down.",
    FACTS["wrong_keyword"] + " His maps were copied for a century.",
    "The Harrowgate Almanac asks which river Selwyn Droke would map next.",
    "In the Harrowgate Almanac, Selwyn Droke writes about maps and rivers.",
    "Selwyn Droke, says the Harrowgate Almanac, wanted to map a river.",
    FACTS["deeper"] + " The note was printed twice.",
    "Which bird did the naturalist Pell Vorane describe? The question is asked often.",
    "The naturalist Pell Vorane liked to describe every bird she saw.",
    "Pell Vorane, a naturalist, wrote that one bird was hard to describe.",
    "Brannoc Hale spoke of Serrik. Later Brannoc Hale painted Serrik from afar.",
    "Brannoc Hale was born far from Serrik, and Brannoc Hale never saw Serrik in winter.",
    "Maps of Serrik were sold to Brannoc Hale; Brannoc Hale lost the maps of Serrik.",
    "Brannoc Hale wrote a song about Serrik. Brannoc Hale sang it below Serrik once.",
    FACTS["after_k1"],
    "Corvin Ashdale was an admiral of the northern fleet.",
    "The Gullwing was a fishing boat sold in Marsk.",
    "The Tarrow Guild met every winter in a cold hall.",
    "Ochre paint was cheap in the markets of Marsk.",
    "Mave Tolland rode in the Brisket valley race once.",
    "Ulric Penhale visited Stonemere. Ulric Penhale left Stonemere.",
    "Ulric Penhale wrote to Stonemere. Ulric Penhale sold a cart in Stonemere.",
    "Ulric Penhale dreamt of Stonemere. Ulric Penhale walked to Stonemere.",
    "Ulric Penhale sang in Stonemere. Ulric Penhale slept in Stonemere.",
    "The weather of the coast changes quickly in autumn.",
    "Farmers in the valley grow barley and oats.",
]
MISSED = {"misspelled": "unanswerable", "wrong_keyword": "unanswerable",
          "deeper": "unanswerable", "after_k1": "discarded"}  # fmt: skip
"""The truly answerable questions that Algorithm 1 labels unanswerable or discarded here."""
LABELS = {
    "normal_city": "answerable", "normal_fruit": "answerable", "vector": "answerable",
    **MISSED, "absent_ship": "unanswerable", "absent_flag": "unanswerable",
    "absent_horse": "unanswerable", "absent_discarded": "discarded",
}  # fmt: skip
"""The build's labels with the perfect judge (k1 = 3, k2 = 2, rule keywords)."""
SETTINGS = {
    "build": {"name": "t", "shard_size": "4", "k1": "3", "k2": "2"},
    "judge": {"backend": "openai", "model": "perfect"},
    "audit": {"sample": "1", "budget": "10"},
}
"""The build settings of the planted world (the judge's `base_url` is the test server's)."""


def write_world(folder: Path) -> dict[str, dict[str, str]]:
    """Write the corpus and the questions; the `[corpus]` and `[pool.dev]` sections."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus, questions = folder / "corpus.jsonl", folder / "questions.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"d{i:02d}", "text": t}) + "\n" for i, t in enumerate(DOCUMENTS))
    )
    questions.write_text(
        "".join(
            json.dumps({"id": qid, "text": text, "answer": answer, "aliases": [answer]}) + "\n"
            for qid, text, answer in QUESTIONS
        )
    )
    return {
        "corpus": {"source": "files", "paths": str(corpus)},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(questions)},
    }


FACT_OF = {text: FACTS.get(qid) for qid, text, _ in QUESTIONS}


def states_fact(question: str, passage: str) -> bool:
    """True when `passage` states the fact of `question` (whitespace aside)."""
    fact = FACT_OF[question.strip()]
    return fact is not None and fact in " ".join(passage.split())


def perfect_judge(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
    """A judge that is always right in this world, behind the local server."""
    match = fake.JUDGE_LAYOUT.search(fake.last_user_message(body))
    if match is None:
        return fake.Reply(text="keywords are not asked of this judge", status=400)
    passage, question, _ = match.groups()
    relevant = states_fact(question, passage)
    return fake.Reply(text="yes" if relevant else "no", yes_probability=0.9 if relevant else 0.1)


class PerfectJudge:
    """The same judge as a relevance judge in process, counting what it was asked."""

    name = "perfect"

    def __init__(self) -> None:
        self.asked: list[JudgeRequest] = []

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """ "yes" exactly for the passages that state their question's fact."""
        self.asked += requests
        return [
            Judgment.of(r, label=label, raw=label, judge=self.name)
            for r in requests
            for label in ["yes" if states_fact(r.question, r.text) else "no"]
        ]


def planted_questions() -> dict[str, Question]:
    """The questions by id."""
    return {qid: Question(qid, text, answer, [answer]) for qid, text, answer in QUESTIONS}


def planted_documents() -> dict[str, Document]:
    """The documents by id (as `write_world` writes them)."""
    return {f"d{i:02d}": Document(f"d{i:02d}", text) for i, text in enumerate(DOCUMENTS)}


def labels(run: RunLayout) -> dict[str, str]:
    """Every question of the run's dev pool and the label its partition gave it."""
    files = run.pool("dev").partition_files
    return {
        row.id: row.label
        for label in ALL_LABELS
        for row in read_records(files.labelled(label), LabeledQuestion)
    }
