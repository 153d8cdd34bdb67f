"""Training order: the one streaming pass over a Megatron `.bin`, against merely reading it.

    nice -n 10 python -m benchmarks.training_order [--gb 3] [--workdir DIR] [--spans 2000]

Generates a GPT-NeoX-style stream of about `--gb` GB under the work folder: documents of
random token ids (geometric lengths, mean 1,500 tokens, about the deduplicated Pile's),
each followed by an EOD, 2,049-token samples overlapping by one, shuffled within chunks of
64M tokens, written with our indexed-dataset writer. Then measures, one worker (one core):

* `read`: a sequential read of the `.bin` in 64 MB blocks (`np.fromfile`, a copy);
* `touch`: the `.bin` memory-mapped and every 64 MB block reduced (`max`), no copy;
* `index`: `build_anchor_index`, the streaming pass (EOD anchors and sequence heads hashed);

each from disk (the file's pages evicted first with `posix_fadvise(DONTNEED)`) and from the
page cache; and `match`: finding `--spans` windows of known documents through the index
(`SpanFinder`), checked against where the generator put them. Prints the results as JSON
(and writes them under `results/`), with what the full Pythia stream would cost on one
64-core machine. The generated data is deleted afterwards unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import save, stopwatch
from tipqa.training_order.anchors import build_anchor_index, iter_index
from tipqa.training_order.locate import SpanFinder, span_steps
from tipqa.training_order.megatron_format import IndexedDatasetWriter
from tipqa.training_order.streams import MegatronStream
from tipqa.training_order.wanted import WantedDocument

SEQ = 2049
BATCH = 1024
EOD = 0
VOCAB = 50_277
CHUNK_TOKENS = 64 << 20
MEAN_DOC = 1500
WIDTH = 16
PYTHIA_SEQUENCES = 146_432_000
PYTHIA_BYTES = PYTHIA_SEQUENCES * SEQ * 2
CORES = 64


def generate(prefix: Path, gigabytes: float, spans: int, seed: int = 0) -> list[WantedDocument]:
    """Write the stream; return wanted documents (one window each) with known placement."""
    rng = np.random.default_rng(seed)
    total = int(gigabytes * 1e9 / 2)
    size = min(CHUNK_TOKENS, total)
    chunks = max(1, round(total / size))
    per_chunk = max(1, spans // chunks)
    wanted: list[WantedDocument] = []
    with IndexedDatasetWriter(prefix) as writer:
        for chunk in range(chunks):
            lengths = rng.geometric(1 / MEAN_DOC, size=size // MEAN_DOC + 1)
            lengths = lengths[np.cumsum(lengths + 1) <= size]
            tokens = rng.integers(1, VOCAB, size=int((lengths + 1).sum()), dtype=np.uint16)
            ends = np.cumsum(lengths + 1) - 1
            tokens[ends] = EOD
            count = (len(tokens) - 1) // (SEQ - 1)
            view = np.lib.stride_tricks.as_strided(
                tokens, shape=(count, SEQ), strides=(2 * (SEQ - 1), 2), writeable=False
            )
            writer.add_sequences(view[rng.permutation(count)])
            starts = ends - lengths
            inside = np.flatnonzero((lengths > 400) & (ends < count * (SEQ - 1) - 1))
            for doc in rng.choice(inside, size=min(per_chunk, inside.size), replace=False):
                body = tokens[starts[doc] : ends[doc] + 1].astype(np.int64)
                first = int(rng.integers(0, len(body) - 300))
                stop = first + int(rng.integers(50, 300))
                span = (f"c{chunk}-d{doc}", first, stop)
                wanted.append(WantedDocument(span[0], len(body), [(0, body)], [span]))
    return wanted


def evict(path: Path) -> None:
    """Drop the file's pages from the page cache (clean pages: no privilege needed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_rate(path: Path) -> dict[str, Any]:
    """Seconds to read the file once, sequentially, in 64 MB blocks."""
    total = 0
    with stopwatch() as clock, open(path, "rb") as handle:
        while (size := np.fromfile(handle, dtype=np.uint16, count=32 << 20).size) > 0:
            total += size
    return _rates(total, clock["seconds"])


def touch_rate(path: Path) -> dict[str, Any]:
    """Seconds to map the file and reduce every 64 MB block (no copy, one pass, like the index)."""
    tokens = np.memmap(path, dtype=np.uint16, mode="r")
    step = 32 << 20
    with stopwatch() as clock:
        for start in range(0, tokens.size, step):
            tokens[start : start + step].max()
    return _rates(int(tokens.size), clock["seconds"])


def _rates(tokens: float, seconds: float) -> dict[str, Any]:
    return {
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds),
        "mb_per_s": round(tokens * 2 / 1e6 / seconds, 1),
    }


def _times(row: dict[str, Any], base: dict[str, Any]) -> float:
    """How many times the time of `base` `row` took, over the same tokens (from the rates:
    the rounded seconds of a tiny run may be 0)."""
    return round(base["tokens_per_s"] / row["tokens_per_s"], 2)


def index_rate(stream: MegatronStream, folder: Path) -> dict[str, Any]:
    """The streaming pass with one worker, from scratch."""
    shutil.rmtree(folder, ignore_errors=True)
    with stopwatch() as clock:
        stats = build_anchor_index(stream, folder, width=WIDTH, eod=EOD, workers=1,
                                   sequences_per_unit=65_536, block_sequences=4096,
                                   progress=False)  # fmt: skip
    row = _rates(stats.counts["tokens"], clock["seconds"])
    row["anchors"] = stats.counts["anchors"] + stats.counts["anchors_truncated"]
    return row


def match(stream: MegatronStream, folder: Path, wanted: list[WantedDocument]) -> dict[str, Any]:
    """Find every wanted window through the index; all must be found, nothing unlocated.

    `scan_seconds` is one pass over the index looking up as many random keys (the part
    that grows with the stream); the rest of `seconds` grows with the number of keys.
    """
    finder = SpanFinder(stream, folder, width=WIDTH, eod=EOD, overlap=1,
                        sequences_per_unit=65_536)  # fmt: skip
    with stopwatch() as clock:
        finder.find(wanted)
    steps = span_steps(wanted, finder)
    keys = int(finder.stats.counts["piece_keys"])
    random_keys = np.sort(np.random.default_rng(1).integers(0, 2**63, size=keys, dtype=np.uint64))
    with stopwatch() as scan:
        for unit in iter_index(stream, folder, 65_536):
            for found in (unit.heads, unit.complete.hashes):
                np.searchsorted(random_keys, found)
    return {
        "spans": len(steps),
        "found_whole": sum(s.step is not None and s.unlocated == 0 for s in steps),
        "seconds": round(clock["seconds"], 2),
        "scan_seconds": round(scan["seconds"], 2),
        "rounds": finder.stats.counts["rounds"],
        "piece_keys": keys,
        "pieces_confirmed": finder.stats.counts["pieces_confirmed"],
        "candidates_rejected": finder.stats.counts["candidates_rejected"],
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=3.0, help="size of the generated .bin")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tipqa-bench/training-order"))
    parser.add_argument("--spans", type=int, default=2000)
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    prefix = args.workdir / "document"
    started = time.perf_counter()
    try:
        wanted = generate(prefix, args.gb, args.spans)
        generated = time.perf_counter() - started
        stream = MegatronStream(prefix, SEQ, BATCH)
        data = prefix.with_suffix(".bin")
        rows: dict[str, Any] = {}
        for cache in ("disk", "page_cache"):
            if cache == "disk":
                evict(data)
            rows[f"read_{cache}"] = read_rate(data)
            if cache == "disk":
                evict(data)
            rows[f"touch_{cache}"] = touch_rate(data)
            if cache == "disk":
                evict(data)
            rows[f"index_{cache}"] = index_rate(stream, args.workdir / "index")
        index_bytes = folder_bytes(args.workdir / "index")
        rows["match"] = match(stream, args.workdir / "index", wanted)
    finally:
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    result = report(rows, stream, data_bytes=stream.count * SEQ * 2, index_bytes=index_bytes)
    result["generate_seconds"] = round(generated, 1)
    print(json.dumps(result, indent=2))
    path = save("training_order", result, **({"results": args.results} if args.results else {}))
    print(f"written: {path}")


def report(rows: dict[str, Any], stream: MegatronStream, *, data_bytes: int,
           index_bytes: int) -> dict[str, Any]:  # fmt: skip
    """The measured rows, ratios, and what Pythia's full stream would cost on 64 cores."""
    per_core = rows["index_page_cache"]["mb_per_s"] * 1e6
    index_ratio = index_bytes / data_bytes
    scale = PYTHIA_BYTES / data_bytes
    matched = rows["match"]
    per_key = max(0.0, matched["seconds"] - matched["scan_seconds"]) / max(1, matched["piece_keys"])
    spans, keys = 100_000, 100_000 * (SEQ - 1 + 200)
    rounds = -(-keys // 16_000_000)
    return {
        "sequences": stream.count,
        "data_gb": round(data_bytes / 1e9, 2),
        "index_gb": round(index_bytes / 1e9, 3),
        "index_to_data": round(index_ratio, 4),
        "rows": rows,
        "index_seconds_over": {
            f"{base}_{cache}": _times(rows[f"index_{cache}"], rows[f"{base}_{cache}"])
            for base in ("read", "touch")
            for cache in ("disk", "page_cache")
        },
        "pythia_estimate": {
            "sequences": PYTHIA_SEQUENCES,
            "tokens": PYTHIA_SEQUENCES * SEQ,
            "bytes": PYTHIA_BYTES,
            "cores": CORES,
            "index_pass_minutes_if_cpu_bound": round(PYTHIA_BYTES / (CORES * per_core) / 60, 1),
            "index_pass_minutes_at_disk_gb_per_s": {
                str(gbps): round(PYTHIA_BYTES / (gbps * 1e9) / 60, 1) for gbps in (1, 3, 7)
            },
            "index_gb": round(PYTHIA_BYTES * index_ratio / 1e9, 1),
            "match": {
                "spans": spans,
                "piece_keys": keys,
                "rounds": rounds,
                "minutes_one_core": round(
                    (rounds * matched["scan_seconds"] * scale + keys * per_key) / 60, 1
                ),
            },
        },
    }


if __name__ == "__main__":
    main()
