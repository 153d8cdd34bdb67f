"""One huge one-line document in the candidate vector stage: time, first progress, peak memory.

    python -m benchmarks.huge_document [--mb 16] [--embed-mb 2] [--old-tree DIR]

A one-line document of `--mb` megabytes of words (generated, never stored) is chunked with the
default embedder's splitter: seconds, chunks, and the process's peak memory above what it held
before (the largest resident set, so each measurement runs in a process of its own). Then a
candidate vector stage (`backend = candidates`, its default `batch_size`) embeds the chunks of
a `--embed-mb` document that is a question's only candidate, with the default embedder:
seconds until the first embedding call returns (the bar's first step), seconds in all, and
peak memory above that of the loaded embedder after one full batch of 256 chunks. With
`--old-tree` the same probes run on an older checkout's tipqa too, for before/after figures
measured in one run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, ratio, run_probe, save, table

SETUP = r"""
import json, random, resource, shutil, sys, time
from pathlib import Path

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def one_line(mb):
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa harbour keeper".split()
    rng = random.Random(0)
    return " ".join(rng.choice(words) for _ in range(int(mb * 1e6 / 6.5)))

from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder
embedder = SentenceTransformerEmbedder.of()
embedder.encode_passages([one_line(0.001)] * 256)  # one full batch: its working memory
mb, folder = float(sys.argv[1]), Path(sys.argv[2])
shutil.rmtree(folder, ignore_errors=True)
text = one_line(mb)
"""

CHUNK = (
    SETUP
    + r"""
from tipqa.core.records import Document
from tipqa.indexes.chunking import chunk_document, make_splitter
splitter = make_splitter(embedder, chars_per_token=3.5)
base = peak_mb()
started = time.perf_counter()
chunks = len(chunk_document(Document("huge", text), splitter))
print(json.dumps({"chunk_s": round(time.perf_counter() - started, 2), "chunks": chunks,
                  "chunk_peak_mb": round(peak_mb() - base)}))
"""
)

EMBED = (
    SETUP
    + r"""
from tipqa.core.records import Document, Question
from tipqa.core.stats import StepStats
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.vector_index import candidates as stage
from tipqa.indexes.vector_index.candidates import CandidateSettings, CandidateVectorIndex

class OnlyCandidate:
    def rank_texts(self, texts, n):
        return [["huge"] for _ in texts]
    def get(self, ids):
        return {"huge": Document("huge", text)}

vectors = CandidateVectorIndex(CandidateSettings(), IndexPlace(folder), embedder.dimension)
vectors.prepare([Document("sample", one_line(0.05))], embedder, 0)
progress = []
encode = embedder.encode_passages
def timed_encode(texts):
    vectors = encode(texts)
    progress.append(time.perf_counter())
    return vectors
embedder.encode_passages = timed_encode
base = peak_mb()
started = time.perf_counter()
stats = StepStats("vector_search")
vectors.search_questions([Question("q", "Who keeps the harbour?", "x", [])], OnlyCandidate(),
                         embedder, 3, stats)
print(json.dumps({"embed_s": round(time.perf_counter() - started, 2),
                  "first_progress_s": round(progress[0] - started, 2),
                  "embed_calls": len(progress),
                  "chunks_embedded": int(stats.counts["chunks_embedded"]),
                  "embed_peak_mb": round(peak_mb() - base)}))
"""
)


def probe(tree: Path, script: str, mb: float, folder: Path) -> dict[str, Any]:
    """Run one probe with the tipqa of `tree`, in a process of its own; its figures."""
    printed = run_probe(tree, script, [str(mb), str(folder)], {"HF_HUB_OFFLINE": "1"})
    return json.loads(printed.splitlines()[-1])


def measure(tree: Path, args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Chunking of the `--mb` document and embedding of the `--embed-mb` one, by `tree`."""
    folder = args.workdir / f"huge-document-{name}"
    row = probe(tree, CHUNK, args.mb, folder)
    row.update(probe(tree, EMBED, args.embed_mb, folder))
    return row


def main() -> None:
    """Measure this tree (and an older one), print the table, save the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=16.0, help="size of the chunked document")
    parser.add_argument("--embed-mb", type=float, default=2.0, help="size of the embedded one")
    parser.add_argument("--old-tree", type=Path, help="an older checkout, measured too")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tipqa-bench"))
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parents[1]
    rows = {"now": measure(here, args, "now")}
    if args.old_tree is not None:
        rows["before"] = measure(args.old_tree.resolve(), args, "before")
    columns = ["tree", *rows["now"]]
    print(f"one-line document: {args.mb} MB chunked, {args.embed_mb} MB embedded")
    print(table([{"tree": tree, **row} for tree, row in rows.items()], columns))
    data: dict[str, Any] = {"mb": args.mb, "embed_mb": args.embed_mb, **rows}
    if "before" in rows:
        data["now_over_before"] = {k: ratio(rows["now"][k], rows["before"][k]) for k in rows["now"]}
        print("now / before:", json.dumps(data["now_over_before"]))
    print("saved", save("huge_document", data, args.results))


if __name__ == "__main__":
    main()
