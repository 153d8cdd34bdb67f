"""The token query's meaning, checked in Lucene itself (the engine inside Elasticsearch).

The query body that ElasticsearchTokenIndex sends is translated clause by clause into Lucene
queries (match_phrase: the text analyzed by the index analyzer, then a term query for one
token or an exact phrase query; bool: must/should clauses and minimum_should_match) and run
over the contract corpus, analyzed by the same char filters, pattern tokenizer and lowercase
filter as the index settings define, and scored by a similarity that returns
`boost * freq`, as the scripted similarity of the settings does. Totals, frequencies and
order (score descending, then doc_id) must equal the definition in `tipqa.text`, on the
contract corpus and on the ranking corpus of tests/tipqa/token_index/ranking_data.py (more
than 1,000 matches, long rare best documents, ties, overlapping phrases), where they must also
equal the tantivy backend's.

Needs `java` and the Lucene core and analyzers-common jars (Debian: liblucene8-java; or a
folder named by TIPQA_LUCENE_JARS); skipped otherwise.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tipqa.es import mappings, queries
from tipqa.records import TokenHit
from tipqa.token_index.base import TokenResult


def _jars() -> list[Path]:
    """The Lucene jars: core and analyzers-common (empty when not found)."""
    folder = Path(os.environ.get("TIPQA_LUCENE_JARS", "/usr/share/java"))
    found = []
    for name in ("lucene-core", "lucene-analyzers-common"):
        candidates = sorted(folder.glob(f"{name}-[0-9]*.jar")) or sorted(folder.glob(f"{name}.jar"))
        if not candidates:
            return []
        found.append(candidates[-1])
    return found


JARS = _jars()
pytestmark = pytest.mark.skipif(
    shutil.which("java") is None or not JARS,
    reason="needs java and the Lucene jars (liblucene8-java, or TIPQA_LUCENE_JARS)",
)


def _load(path: Path) -> Any:
    """A test data module (tests are not a package under --import-mode=importlib)."""
    spec = importlib.util.spec_from_file_location(f"tipqa_test_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DATA = _load(Path(__file__).parent / "contract_data.py")
RANKING = _load(Path(__file__).parents[1] / "token_index" / "ranking_data.py")

LUCENE_CHECK = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.charfilter.*;
import org.apache.lucene.analysis.pattern.*;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneCheck {
    static String dec(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }

    static class Frequency extends Similarity {
        public long computeNorm(FieldInvertState state) { return 1; }
        public SimScorer scorer(float boost, CollectionStatistics c, TermStatistics... t) {
            return new SimScorer() {
                public float score(float freq, long norm) { return boost * freq; }
            };
        }
    }

    static Analyzer analyzer(Pattern token, Pattern sigma, String repl, String from, String to) {
        return new Analyzer() {
            @Override protected Reader initReader(String field, Reader reader) {
                NormalizeCharMap.Builder map = new NormalizeCharMap.Builder();
                map.add(from, to);
                Reader mapped = new MappingCharFilter(map.build(), reader);
                return new PatternReplaceCharFilter(sigma, repl, mapped);
            }
            @Override protected TokenStreamComponents createComponents(String field) {
                Tokenizer tokenizer = new PatternTokenizer(token, 0);
                return new TokenStreamComponents(tokenizer, new LowerCaseFilter(tokenizer));
            }
        };
    }

    static List<String> terms(Analyzer analyzer, String text) throws IOException {
        List<String> out = new ArrayList<>();
        try (TokenStream stream = analyzer.tokenStream("text", text)) {
            CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
            stream.reset();
            while (stream.incrementToken()) out.add(term.toString());
            stream.end();
        }
        return out;
    }

    static String[] toks;
    static int pos;

    static Query parse(Analyzer analyzer) throws IOException {
        pos++;  // "("
        String kind = toks[pos++];
        if (kind.equals("phrase")) {
            List<String> ts = terms(analyzer, dec(toks[pos++]));
            pos++;  // ")"
            if (ts.isEmpty()) return new MatchNoDocsQuery();
            if (ts.size() == 1) return new TermQuery(new Term("text", ts.get(0)));
            PhraseQuery.Builder phrase = new PhraseQuery.Builder();
            for (int i = 0; i < ts.size(); i++) phrase.add(new Term("text", ts.get(i)), i);
            return phrase.build();
        }
        BooleanQuery.Builder bool = new BooleanQuery.Builder();
        bool.setMinimumNumberShouldMatch(Integer.parseInt(toks[pos++]));
        while (toks[pos].equals("(")) {
            pos++;
            BooleanClause.Occur occur = toks[pos++].equals("must")
                ? BooleanClause.Occur.MUST : BooleanClause.Occur.SHOULD;
            while (!toks[pos].equals(")")) bool.add(parse(analyzer), occur);
            pos++;
        }
        pos++;  // ")"
        return bool.build();
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]));
        Analyzer analyzer = analyzer(
            Pattern.compile(dec(lines.get(0))), Pattern.compile(dec(lines.get(1))),
            dec(lines.get(2)), dec(lines.get(3)), dec(lines.get(4)));
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(new Frequency());
        FieldType textType = new FieldType();
        textType.setTokenized(true);
        textType.setOmitNorms(true);
        textType.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);
        textType.freeze();
        List<String> queries = new ArrayList<>();
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            for (String line : lines.subList(5, lines.size())) {
                String[] parts = line.split(" ", 2);
                if (parts[0].equals("Q")) { queries.add(parts[1]); continue; }
                String[] doc = parts[1].split(" ");
                Document d = new Document();
                d.add(new StringField("doc_id", dec(doc[0]), Field.Store.YES));
                d.add(new SortedDocValuesField("doc_id", new BytesRef(dec(doc[0]))));
                d.add(new Field("text", dec(doc[1]), textType));
                writer.addDocument(d);
            }
        }
        IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(dir));
        searcher.setSimilarity(new Frequency());
        Sort sort = new Sort(SortField.FIELD_SCORE, new SortField("doc_id", SortField.Type.STRING));
        StringBuilder out = new StringBuilder();
        for (String q : queries) {
            toks = q.trim().split(" ");
            pos = 0;
            TopFieldCollector collector = TopFieldCollector.create(sort, 1000, Integer.MAX_VALUE);
            searcher.search(parse(analyzer), collector);
            TopDocs top = collector.topDocs();
            out.append(top.totalHits.value).append(' ').append(top.totalHits.relation);
            for (ScoreDoc hit : top.scoreDocs) {
                FieldDoc fd = (FieldDoc) hit;
                out.append(' ').append(searcher.doc(hit.doc).get("doc_id")).append('=')
                   .append(fd.fields[0]);
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
"""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def to_sexpr(query: dict[str, Any]) -> str:
    """An Elasticsearch bool/match_phrase query as the s-expression LuceneCheck reads."""
    ((kind, spec),) = query.items()
    if kind == "match_phrase":
        ((field, options),) = spec.items()
        assert field == queries.TEXT_FIELD and set(options) == {"query"}
        return f"( phrase {_b64(options['query'])} )"
    assert kind == "bool" and set(spec) <= {"must", "should", "minimum_should_match"}
    default = 0 if "must" in spec else 1
    parts = [f"( bool {spec.get('minimum_should_match', default)}"]
    for occur in ("must", "should"):
        if spec.get(occur):
            parts.append(f"( {occur} " + " ".join(to_sexpr(q) for q in spec[occur]) + " )")
    return " ".join([*parts, ")"])


def lucene_results(
    tmp_path: Path, documents: list[Any], asked: list[tuple[list[str], list[str]]]
) -> list[TokenResult]:
    """Run each query's Elasticsearch body in Lucene over `documents` (first text per id)."""
    analysis = mappings.analysis_settings()
    sigma = analysis["char_filter"]["tipqa_final_sigma"]
    mapped_from, mapped_to = (p.strip() for p in mappings.DOTTED_CAPITAL_I_RULE.split("=>"))
    assert mappings.FREQUENCY_SCRIPT == "return query.boost * doc.freq;"
    lines = [
        _b64(x)
        for x in (mappings.TOKEN_PATTERN, sigma["pattern"], "\u03c2", mapped_from, mapped_to)
    ]
    indexed: dict[str, str] = {}
    for doc in documents:
        if doc.text.strip():
            indexed.setdefault(doc.id, doc.text)
    lines += [f"D {_b64(i)} {_b64(text)}" for i, text in indexed.items()]
    for keywords, aliases in asked:
        body = queries.token_search_body(queries.phrases(keywords), queries.phrases(aliases), 100)
        assert body["sort"] == [{"_score": {"order": "desc"}}, {"doc_id": {"order": "asc"}}]
        assert body["track_total_hits"] is True
        lines.append("Q " + to_sexpr(body["query"]))
    classpath = os.pathsep.join(map(str, JARS))
    source, data = tmp_path / "LuceneCheck.java", tmp_path / "input.txt"
    source.write_text(LUCENE_CHECK)
    data.write_text("\n".join(lines) + "\n")
    run = subprocess.run(
        ["java", "-cp", classpath, str(source), str(data)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    results = []
    for line in run.stdout.strip().split("\n"):
        total, relation, *hits = line.split(" ")
        assert relation == "EQUAL_TO"
        parsed = [TokenHit(h.rsplit("=", 1)[0], float(h.rsplit("=", 1)[1])) for h in hits]
        results.append(TokenResult(int(total), parsed))
    assert len(results) == len(asked)
    return results


def test_lucene_ranks_the_query_body_as_the_definition_says(tmp_path: Path) -> None:
    asked = [(k, a) for k, a in DATA.QUERIES if queries.phrases(a)]
    for (keywords, aliases), result in zip(
        asked, lucene_results(tmp_path, DATA.CORPUS, asked), strict=True
    ):
        assert TokenResult(result.total, result.hits[:100]) == DATA.oracle(
            keywords, aliases, 100
        ), (keywords, aliases)


def test_lucene_and_tantivy_agree_where_ranking_is_hard(tmp_path: Path) -> None:
    """Long rare best documents, ties, overlapping phrases, more than 1,000 matches."""
    from tipqa.token_index.tantivy import TantivySettings, TantivyTokenIndex

    documents = RANKING.corpus()
    index = TantivyTokenIndex(TantivySettings(threads=1, heap_mb=64), path=tmp_path / "tantivy")
    index.build(documents)
    results = lucene_results(tmp_path, documents, RANKING.QUERIES)
    for (keywords, aliases), result in zip(RANKING.QUERIES, results, strict=True):
        lucene = TokenResult(result.total, result.hits[:100])
        assert lucene == RANKING.oracle(documents, keywords, aliases, 100), (keywords, aliases)
        assert index.search(keywords, aliases, 100) == lucene, (keywords, aliases)
    assert max(r.total for r in results) > 1000
