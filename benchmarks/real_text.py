"""Real text for the vector benchmarks: the public samples in `../shared/data` (when present).

Documents: the Wikipedia passages, the Common Crawl (Dolma) documents and the TriviaQA
evidence files. Queries: the TriviaQA questions of the llm-foundry sample. Nothing of theirs is
copied into the repository; without the folder these return nothing and the benchmarks run on
demo text alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.common import ROOT
from tipqa.core.records import Document, Question
from tipqa.sources.corpus.files import FileCorpus

SHARED_DATA = Path(os.environ.get("TIPQA_SHARED_DATA", ROOT.parent / "shared" / "data"))


def real_documents(data: Path = SHARED_DATA) -> list[Document]:
    """Every real document of the samples, with ids prefixed by where they came from."""
    documents: list[Document] = []
    passages = data / "corpus" / "wikipedia-passages-1000.jsonl"
    if passages.is_file():
        corpus = FileCorpus.of(passages, text_field="contents", progress=False)
        documents += [Document(f"wiki:{d.id}", d.text) for d in corpus]
    web = sorted((data / "corpus" / "web-cc").glob("*.json*"))
    if web:
        documents += [Document(f"cc:{d.id}", d.text) for d in FileCorpus.of(web, progress=False)]
    evidence = data / "triviaqa" / "official-sample" / "evidence"
    for path in sorted(p for p in evidence.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        documents.append(Document(f"evidence:{path.relative_to(evidence)}", text))
    return documents


def real_questions(data: Path = SHARED_DATA, limit: int | None = None) -> list[Question]:
    """The TriviaQA questions of the llm-foundry sample (first `limit`)."""
    from tipqa.sources.questions.base import load_questions

    path = data / "triviaqa" / "llm-foundry-triviaqa-3000.jsonl"
    if not path.is_file():
        return []
    questions = load_questions("llm-foundry-jsonl", paths=[str(path)])
    return questions[:limit] if limit is not None else questions
