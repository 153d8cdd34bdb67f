"""The token query's meaning, checked in Lucene itself (the engine inside Elasticsearch).

The query body that ElasticsearchTokenIndex sends is translated clause by clause into Lucene
queries (match_phrase: the text analyzed by the index analyzer, then a term query for one
token or an exact phrase query; bool: must/should clauses and minimum_should_match) and run
over the contract corpus, analyzed by the same char filters, pattern tokenizer and lowercase
filter as the index settings define, and scored by a similarity that returns
`boost * freq`, as the scripted similarity of the settings does. Totals, frequencies and
order (score descending, then doc_id) must equal the definition in `tipqa.core.text`, on the
contract corpus and on the ranking corpus of tests/support/ranking_support.py (more
than 1,000 matches, long rare best documents, ties, overlapping phrases), where they must also
equal the tantivy backend's.

The Lucene program is the one the scale benchmark measures (benchmarks/lucene/
TipqaLucene.java), so its results are the ones checked here. Needs `java`, `javac` and the
Lucene core and analyzers-common jars (Debian: liblucene8-java; or a folder named by
TIPQA_LUCENE_JARS); skipped otherwise.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from support import contract_support as contract
from support import ranking_support as ranking
from support.token_oracle import oracle

from benchmarks import lucene
from tipqa.core.records import Document
from tipqa.indexes.es import queries
from tipqa.indexes.token_index.base import TokenResult

pytestmark = pytest.mark.skipif(
    not lucene.available(),
    reason="needs java, javac and the Lucene jars (liblucene8-java, or TIPQA_LUCENE_JARS)",
)


def lucene_results(
    tmp_path: Path, documents: list[Document], asked: list[tuple[list[str], list[str]]]
) -> list[TokenResult]:
    """Index `documents` (the first text per id) in Lucene; run each query's body, k = 100."""
    first: dict[str, str] = {}
    for doc in documents:
        first.setdefault(doc.id, doc.text)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(
        b"".join(orjson.dumps({"id": i, "text": t}) + b"\n" for i, t in first.items())
    )
    program = lucene.Lucene(tmp_path)
    command = program.index_command(tmp_path / "lucene", [corpus], 2)
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    results, _ = program.search(tmp_path / "lucene", asked, 100, 1)
    assert len(results) == len(asked)
    return results


def test_lucene_ranks_the_query_body_as_the_definition_says(tmp_path: Path) -> None:
    asked = [(k, a) for k, a in contract.QUERIES if queries.phrases(a)]
    for (keywords, aliases), result in zip(
        asked, lucene_results(tmp_path, contract.CORPUS, asked), strict=True
    ):
        assert result == oracle(contract.CORPUS, keywords, aliases, 100), (keywords, aliases)


def test_lucene_and_tantivy_agree_where_ranking_is_hard(tmp_path: Path) -> None:
    """Long rare best documents, ties, overlapping phrases, more than 1,000 matches."""
    from tipqa.indexes.token_index.tantivy import TantivyTokenIndex

    documents = ranking.corpus()
    index = TantivyTokenIndex.at(tmp_path / "tantivy", threads=1, heap_mb=64)
    index.build(documents)
    results = lucene_results(tmp_path, documents, ranking.QUERIES)
    for (keywords, aliases), result in zip(ranking.QUERIES, results, strict=True):
        assert result == oracle(documents, keywords, aliases, 100), (keywords, aliases)
        assert index.search(keywords, aliases, 100) == result, (keywords, aliases)
    assert max(r.total for r in results) > 1000
