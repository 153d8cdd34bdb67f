// Lucene 8 as the peer of tipqa's token index: the Elasticsearch token index's analysis,
// query and scoring, in Lucene itself (Debian's liblucene8-java: core, analyzers-common).
//
//   java -cp CLASSES:JARS TipqaLucene index DIR THREADS ANALYSIS FILE...
//   java -cp CLASSES:JARS TipqaLucene search DIR ANALYSIS QUERIES K REPEATS
//
// index: reads corpus JSONL files ({"id": ..., "text": ...} per line, one thread per file
// at a time), skips blank texts, and writes DIR: doc_id (stored, sorted doc values), text
// (tipqa's analyzer: the char filters, pattern tokenizer and lowercase filter of
// tipqa.es.mappings; positions, no norms) and the stored text. Prints "documents bytes
// seconds". ANALYSIS holds, base64 per line: token pattern, final-sigma pattern, its
// replacement, and the mapping rule's from and to.
//
// search: QUERIES holds one query per line as the s-expression of tests/tipqa/es/
// test_lucene_semantics.py (an Elasticsearch bool / match_phrase body). Each query is scored
// by a similarity returning boost * freq (the scripted similarity of tipqa.es.mappings), with
// an exact total, sorted by score then doc_id. One warm-up pass, then REPEATS timed passes.
// Prints per query "total relation id=score ..." and then "T wall,cpu wall,cpu ..." (in
// microseconds: wall time and the thread's CPU time of each timed pass).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.charfilter.*;
import org.apache.lucene.analysis.pattern.*;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class TipqaLucene {
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

    static Analyzer analyzer(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        Pattern token = Pattern.compile(dec(lines.get(0)));
        Pattern sigma = Pattern.compile(dec(lines.get(1)));
        String repl = dec(lines.get(2)), from = dec(lines.get(3)), to = dec(lines.get(4));
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

    // The top-level string fields of one JSON object line (other values skipped).
    static final class JsonLine {
        final String s;
        int i;

        JsonLine(String s) { this.s = s; }

        // The JSON string literal at i (the quote), leaving i after it.
        String string() {
            StringBuilder out = new StringBuilder();
            i++;
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return out.toString();
                if (c != '\\') { out.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u': out.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: out.append(e);
                }
            }
        }

        // Skip a non-string value (object, array, number, literal), leaving i at its end.
        void skip() {
            int depth = 0;
            for (; i < s.length(); i++) {
                char d = s.charAt(i);
                if (d == '"') { string(); i--; continue; }
                if (d == '{' || d == '[') depth++;
                if (d == '}' || d == ']') { if (depth == 0) return; depth--; }
                if (d == ',' && depth == 0) return;
            }
        }

        Map<String, String> fields() {
            Map<String, String> found = new HashMap<>();
            i = s.indexOf('{') + 1;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == '}') break;
                if (c != '"') { i++; continue; }
                String key = string();
                while (s.charAt(i) != ':') i++;
                i++;
                while (Character.isWhitespace(s.charAt(i))) i++;
                if (s.charAt(i) == '"') found.put(key, string());
                else skip();
            }
            return found;
        }
    }

    static void index(String[] args) throws Exception {
        Path dir = Paths.get(args[1]);
        int threads = Integer.parseInt(args[2]);
        Analyzer analyzer = analyzer(Paths.get(args[3]));
        ConcurrentLinkedQueue<String> files = new ConcurrentLinkedQueue<>(
            Arrays.asList(args).subList(4, args.length));
        IndexWriterConfig config = new IndexWriterConfig(analyzer)
            .setSimilarity(new Frequency())
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setRAMBufferSizeMB(256);
        FieldType textType = new FieldType();
        textType.setTokenized(true);
        textType.setOmitNorms(true);
        textType.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);
        textType.freeze();
        AtomicLong documents = new AtomicLong(), bytes = new AtomicLong();
        long started = System.nanoTime();
        try (IndexWriter writer = new IndexWriter(FSDirectory.open(dir), config)) {
            ExecutorService pool = Executors.newFixedThreadPool(threads, task -> {
                Thread thread = new Thread(task);
                thread.setDaemon(true);  // a failed file ends the program, not waits on it
                return thread;
            });
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    String file;
                    while ((file = files.poll()) != null) {
                        try (BufferedReader in = Files.newBufferedReader(Paths.get(file))) {
                            String line;
                            while ((line = in.readLine()) != null) {
                                Map<String, String> f = new JsonLine(line).fields();
                                String id = f.get("id"), text = f.get("text");
                                if (id == null || text == null || text.isBlank()) continue;
                                Document d = new Document();
                                d.add(new StringField("doc_id", id, Field.Store.YES));
                                d.add(new SortedDocValuesField("doc_id", new BytesRef(id)));
                                d.add(new Field("text", text, textType));
                                d.add(new StoredField("body", text));
                                writer.addDocument(d);
                                documents.incrementAndGet();
                                bytes.addAndGet(text.getBytes(StandardCharsets.UTF_8).length);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) f.get();
            pool.shutdown();
            writer.commit();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.println(documents.get() + " " + bytes.get() + " " + seconds);
    }

    static String[] toks;
    static int at;

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

    static Query parse(Analyzer analyzer) throws IOException {
        at++;  // "("
        String kind = toks[at++];
        if (kind.equals("phrase")) {
            List<String> ts = terms(analyzer, dec(toks[at++]));
            at++;  // ")"
            if (ts.isEmpty()) return new MatchNoDocsQuery();
            if (ts.size() == 1) return new TermQuery(new Term("text", ts.get(0)));
            PhraseQuery.Builder phrase = new PhraseQuery.Builder();
            for (int i = 0; i < ts.size(); i++) phrase.add(new Term("text", ts.get(i)), i);
            return phrase.build();
        }
        BooleanQuery.Builder bool = new BooleanQuery.Builder();
        bool.setMinimumNumberShouldMatch(Integer.parseInt(toks[at++]));
        while (toks[at].equals("(")) {
            at++;
            BooleanClause.Occur occur = toks[at++].equals("must")
                ? BooleanClause.Occur.MUST : BooleanClause.Occur.SHOULD;
            while (!toks[at].equals(")")) bool.add(parse(analyzer), occur);
            at++;
        }
        at++;  // ")"
        return bool.build();
    }

    static void search(String[] args) throws Exception {
        Analyzer analyzer = analyzer(Paths.get(args[2]));
        List<Query> queries = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(args[3]))) {
            toks = line.trim().split(" ");
            at = 0;
            queries.add(parse(analyzer));
        }
        int k = Integer.parseInt(args[4]), repeats = Integer.parseInt(args[5]);
        try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(args[1])))) {
            IndexSearcher searcher = new IndexSearcher(reader);
            searcher.setSimilarity(new Frequency());
            Sort sort = new Sort(SortField.FIELD_SCORE, new SortField("doc_id", SortField.Type.STRING));
            long[][] micros = new long[queries.size()][repeats];
            long[][] cpu = new long[queries.size()][repeats];
            java.lang.management.ThreadMXBean threads =
                java.lang.management.ManagementFactory.getThreadMXBean();
            StringBuilder out = new StringBuilder();
            for (int pass = -1; pass < repeats; pass++) {
                for (int q = 0; q < queries.size(); q++) {
                    long started = System.nanoTime(), startedCpu = threads.getCurrentThreadCpuTime();
                    TopFieldCollector collector = TopFieldCollector.create(sort, Math.max(k, 1), Integer.MAX_VALUE);
                    searcher.search(queries.get(q), collector);
                    TopDocs top = collector.topDocs();
                    List<String> ids = new ArrayList<>();
                    for (ScoreDoc hit : top.scoreDocs) {
                        Object[] keys = ((FieldDoc) hit).fields;  // the score, the doc_id
                        ids.add(((BytesRef) keys[1]).utf8ToString() + "=" + keys[0]);
                    }
                    long elapsed = (System.nanoTime() - started) / 1000;
                    if (pass >= 0) {
                        micros[q][pass] = elapsed;
                        cpu[q][pass] = (threads.getCurrentThreadCpuTime() - startedCpu) / 1000;
                    }
                    if (pass == repeats - 1) {
                        out.append(top.totalHits.value).append(' ').append(top.totalHits.relation);
                        for (String id : ids) out.append(' ').append(id);
                        out.append('\n');
                    }
                }
            }
            for (int q = 0; q < queries.size(); q++) {
                out.append('T');
                for (int r = 0; r < repeats; r++) out.append(' ').append(micros[q][r]).append(',').append(cpu[q][r]);
                out.append('\n');
            }
            System.out.print(out);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("index")) index(args);
        else if (args[0].equals("search")) search(args);
        else throw new IllegalArgumentException("mode must be index or search: " + args[0]);
    }
}
