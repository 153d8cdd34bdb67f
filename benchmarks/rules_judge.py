"""The offline rules judge on real text: how often it accepts documents that answer a question.

    python -m benchmarks.rules_judge [--data ../shared/data] [--negatives 200]

The check set is built at run time from the real samples in `shared/data` (their text is never
copied into this repository; see its README):

- answering pairs: the TriviaQA official-sample questions with those of their own evidence
  documents (Wikipedia articles, web pages) that state the answer, by our reading of each
  document (`READING` below names each pair; a pair it does not name stops the benchmark);
- non-answering pairs: (a) own evidence documents that contain an answer alias but do not
  state the answer (by the same reading), (b) another question's evidence document that
  contains one of this question's aliases, (c) llm-foundry TriviaQA questions whose aliases
  occur in no document of the whole sample corpus, each with the `--pair-docs` documents that
  share the most content words with it (a stand-in for the vector stage's nearest chunks).

Every pair is judged as the token stage judges a candidate: keywords from the rules extractor,
judge windows (appendix A.2), the rules judge on each window; a document is accepted when one
of its windows is. Recall is over answering pairs, precision over every accepted pair. Also
reported: recall with TriviaQA's own criterion (every own evidence document that contains an
alias counts as answering), the share of answering pairs that token search would even find
(all rule keywords and an alias in the document), and per question whether any answering
document was accepted. Runs in seconds.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from benchmarks.common import RESULTS, ROOT, save, table
from tipqa.core.records import Document, JudgeRequest, Question
from tipqa.core.text import contains_phrase, tokenize
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.corpus.files import FileCorpus
from tipqa.sources.questions.jsonl import LLMFoundryJsonl
from tipqa.sources.questions.triviaqa import TriviaQAJson
from tipqa.stages.windows import judge_windows

Reading = Literal["answers", "no", "unclear"]

READING: dict[tuple[str, str], Reading] = {
    ("tc_1", "web/194/194_50.txt"): "answers",
    ("tc_1", "web/46/46_46.txt"): "answers",
    ("tc_10", "wikipedia/Super_Bowl_XX.txt"): "answers",
    ("tc_2", "web/10/10_99.txt"): "answers",
    ("tc_2", "web/61/61_97.txt"): "answers",
    ("tc_3", "web/100/100_1957043.txt"): "answers",
    ("tc_3", "wikipedia/England.txt"): "no",
    ("tc_3", "wikipedia/Judi_Dench.txt"): "unclear",  # names a district of York, not York
    ("tc_33", "web/35/35_995.txt"): "answers",
    ("tc_33", "web/46/46_996.txt"): "answers",
    ("tc_33", "wikipedia/Andrew_Lloyd_Webber.txt"): "no",
    ("tc_40", "wikipedia/Arthur_Balfour.txt"): "answers",
    ("tc_40", "wikipedia/Prime_Minister_of_the_United_Kingdom.txt"): "no",
    ("tc_5", "web/112/112_148.txt"): "answers",
    ("tc_5", "web/24/24_151.txt"): "answers",
    ("tc_8", "wikipedia/Angola.txt"): "answers",
    ("tc_8", "wikipedia/Angolan_Civil_War.txt"): "answers",
    ("tc_8", "wikipedia/Nation_state.txt"): "no",
    ("tc_9", "wikipedia/David_Soul.txt"): "answers",
}
"""Our reading of each (question, own evidence document) pair of the official sample."""

STOP = frozenset(
    "a an the of in on at to for by from with and or is was are were be been which what who "
    "whom whose where when why how did does do that this these those it its as name".split()
)


@dataclass(frozen=True)
class Pair:
    """One question with one document, the group it belongs to, and whether it answers."""

    question: Question
    document: Document
    group: str
    answers: bool


def official_pairs(data: Path) -> tuple[list[Pair], list[Pair]]:
    """Own-evidence pairs (every one, alias-bearing) and cross pairs of the official sample."""
    sample = data / "triviaqa" / "official-sample"
    questions = {q.id: q for q in TriviaQAJson(sample / "qa").load()}
    evidence: dict[str, set[str]] = {}
    for path in sorted((sample / "qa").glob("*.json")):
        for entry in orjson.loads(path.read_bytes())["Data"]:
            own = evidence.setdefault(entry["QuestionId"], set())
            own.update(f"wikipedia/{p['Filename']}" for p in entry.get("EntityPages", []))
            own.update(f"web/{p['Filename']}" for p in entry.get("SearchResults", []))
    folder = sample / "evidence"
    documents = {
        str(p.relative_to(folder)): Document(str(p.relative_to(folder)), p.read_text())
        for p in sorted(folder.rglob("*.txt"))
    }
    own_pairs, cross_pairs = [], []
    for qid, question in sorted(questions.items()):
        for doc_id, document in documents.items():
            if doc_id in evidence[qid]:
                reading = READING.get((qid, doc_id))
                if reading is None:
                    raise SystemExit(f"no reading for ({qid}, {doc_id}): add it to READING")
                own_pairs.append(Pair(question, document, reading, reading == "answers"))
            elif has_alias(question, document):
                cross_pairs.append(Pair(question, document, "cross", False))
    return own_pairs, cross_pairs


def has_alias(question: Question, document: Document) -> bool:
    """Whether an answer alias occurs in the document as a phrase."""
    tokens = tokenize(document.text)
    return any(contains_phrase(tokens, tokenize(alias)) for alias in question.aliases)


def absent_answer_pairs(data: Path, extra: list[Document], limit: int, per: int) -> list[Pair]:
    """llm-foundry questions whose aliases occur in no sample document, with nearby documents."""
    corpus = [
        *FileCorpus.of(data / "corpus" / "wikipedia-passages-1000.jsonl", text_field="contents"),
        *FileCorpus.of(data / "corpus" / "web-cc"),
        *extra,
    ]
    questions = LLMFoundryJsonl(data / "triviaqa" / "llm-foundry-triviaqa-3000.jsonl").load()
    words = [set(tokenize(d.text)) - STOP for d in corpus]
    pairs: list[Pair] = []
    with tempfile.TemporaryDirectory(prefix="tipqa-rules-judge-") as folder:
        index = TantivyTokenIndex.at(Path(folder) / "index")
        index.build(corpus)
        for question in questions:
            if len(pairs) >= limit * per:
                break
            if index.search([], question.aliases, 0).total:
                continue
            content = set(tokenize(question.text)) - STOP
            nearest = sorted(range(len(corpus)), key=lambda i: (-len(content & words[i]), i))
            pairs.extend(Pair(question, corpus[i], "absent", False) for i in nearest[:per])
    return pairs


@dataclass(frozen=True)
class Verdict:
    """The rules' decision on one pair, and whether token search would have found it."""

    pair: Pair
    accepted: bool
    searchable: bool


def judge_pair(pair: Pair, judge: RuleJudge) -> Verdict:
    """Judge a pair as the token stage does: rule keywords, windows, rules judge per window."""
    keywords = extract_keywords(pair.question.text)
    windows, _ = judge_windows(pair.document, keywords, pair.question.aliases)
    requests = [
        JudgeRequest(
            pair.question.id,
            pair.question.text,
            pair.question.answer,
            pair.question.aliases,
            keywords,
            "token",
            pair.document.id,
            f"{pair.document.id}@w{window.index}",
            window.text,
        )
        for window in windows
    ]
    accepted = any(j.label == "yes" for j in judge.judge(requests))
    tokens = tokenize(pair.document.text)
    searchable = has_alias(pair.question, pair.document) and all(
        contains_phrase(tokens, tokenize(k)) for k in keywords if tokenize(k)
    )
    return Verdict(pair, accepted, searchable)


def summarise(verdicts: list[Verdict], own: list[Pair]) -> dict[str, Any]:
    """Recall, precision and the counts behind them."""
    positives = [v for v in verdicts if v.pair.answers]
    accepted = [v for v in verdicts if v.accepted]
    true = sum(v.pair.answers for v in accepted)
    own_ids = {(p.question.id, p.document.id) for p in own}
    alias_positives = [v for v in verdicts if (v.pair.question.id, v.pair.document.id) in own_ids]
    by_question: dict[str, bool] = {}
    for v in positives:
        by_question[v.pair.question.id] = by_question.get(v.pair.question.id, False) or v.accepted
    groups: Counter[str] = Counter(v.pair.group for v in verdicts)
    accepted_groups: Counter[str] = Counter(v.pair.group for v in accepted)
    return {
        "answering_pairs": len(positives),
        "accepted_answering": true,
        "recall": round(true / len(positives), 3) if positives else None,
        "accepted_pairs": len(accepted),
        "precision": round(true / len(accepted), 3) if accepted else None,
        "non_answering_pairs": len(verdicts) - len(positives),
        "recall_alias_criterion": round(
            sum(v.accepted for v in alias_positives) / len(alias_positives), 3
        ),
        "alias_criterion_pairs": len(alias_positives),
        "found_by_token_search": sum(v.searchable for v in positives),
        "questions": len(by_question),
        "questions_with_an_accepted_document": sum(by_question.values()),
        "pairs_by_group": dict(groups),
        "accepted_by_group": dict(accepted_groups),
    }


def main() -> None:
    """Build the check set from the shared data, judge it, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--negatives", type=int, default=200, help="absent-answer questions")
    parser.add_argument("--pair-docs", type=int, default=3, help="documents per such question")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not (args.data / "triviaqa" / "official-sample").is_dir():
        raise SystemExit(f"{args.data}: no triviaqa/official-sample (see shared/data/README.md)")
    own, cross = official_pairs(args.data)
    evidence = list({p.document.id: p.document for p in own}.values())
    absent = absent_answer_pairs(args.data, evidence, args.negatives, args.pair_docs)
    judge = RuleJudge()
    pairs = [p for p in [*own, *cross, *absent] if p.group != "unclear"]
    verdicts = [judge_pair(pair, judge) for pair in pairs]
    figures = summarise(verdicts, [p for p in own if p.group != "unclear"])
    rows = [
        {
            "question": v.pair.question.id,
            "document": v.pair.document.id,
            "group": v.pair.group,
            "accepted": "yes" if v.accepted else "no",
            "found by token search": "yes" if v.searchable else "no",
        }
        for v in verdicts
        if v.pair.group != "absent"
    ]
    print("## rules judge on real TriviaQA text\n")
    print(table(rows, ["question", "document", "group", "accepted", "found by token search"]))
    print()
    print(table([figures], ["answering_pairs", "accepted_answering", "recall", "precision"]))
    print()
    print(
        table(
            [figures],
            [
                "non_answering_pairs",
                "accepted_pairs",
                "recall_alias_criterion",
                "found_by_token_search",
                "questions_with_an_accepted_document",
                "questions",
            ],
        )
    )
    path = save("rules_judge", {"figures": figures, "pairs": rows}, args.results)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
