"""Questions found verbatim in the corpus: a model may have read the question itself.

A question is *in* a document when the document contains the question's text as a phrase:
its tokens (`tipqa.core.text.tokenize`: lower-cased runs of letters and digits, so case,
punctuation and the question mark are ignored) one after another. Per question, two exact
counts from the token index's phrase search: the documents that contain the question, and
those of them that also contain an answer alias (the question and its answer together, as a
quiz page or a benchmark dump has them).
"""

from __future__ import annotations

from collections.abc import Iterable

from tqdm import tqdm

from tipqa.core.records import Question, Verbatim
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import TokenIndex


def count_verbatim(
    questions: Iterable[Question], index: TokenIndex, stats: StepStats
) -> list[Verbatim]:
    """Per question: documents with its text as a phrase, and those with an alias as well."""
    out = []
    for question in tqdm(list(questions), desc="verbatim questions", unit="q", leave=False):
        documents = index.search([], [question.text], 0).total
        with_alias = index.search([question.text], question.aliases, 0).total if documents else 0
        stats.add("questions")
        stats.add("questions_in_a_document", int(documents > 0))
        stats.add("questions_with_an_alias_in_a_document", int(with_alias > 0))
        out.append(Verbatim(question.id, documents, with_alias))
    return out
