"""The scorer at benchmark scale: seconds and peak memory of scoring and comparing systems.

    python -m benchmarks.scorer [--questions 2000 10000] [--embed 500] [--results DIR]

For each size, a synthetic gold split (half answerable) and two systems' predictions with
confidences are written, then timed: reading and scoring one file with the rule-based refusal
reading (bootstrap of 1,000 resamples included), writing its report and figures, and comparing
the two systems (10,000 randomization trials). `--embed N` also times embedding-based refusal
detection of N distinct responses with the bundled all-MiniLM-L6-v2.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, save, stopwatch, table
from tipqa.core.jsonl import write_records
from tipqa.core.records import LabeledQuestion
from tipqa.core.stats import StepStats
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predictions import Prediction, write_predictions
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings
from tipqa.evaluate.score import ScoringSettings, compare_systems, score_file, write_evaluation


def write_world(folder: Path, count: int, seed: int) -> tuple[Path, list[Path]]:
    """A split of `count` questions and two systems' predictions on it."""
    rng = np.random.default_rng(seed)
    rows = [
        LabeledQuestion(
            id=f"q{i}",
            question=f"Question number {i}?",
            answer=f"Answer {i}",
            aliases=[f"Answer {i}", f"A{i}"],
            label="answerable" if i % 2 else "unanswerable",
            stage="token" if i % 3 else "vector",
            reason="synthetic",
            keywords=[],
            total_matches=int(rng.integers(0, 20_000)),
            evidence=None,
        )
        for i in range(count)
    ]
    split = folder / "splits" / "test"
    write_records(split / "questions.jsonl", rows)
    StepStats("splits").write(folder / "splits" / "stats.json")
    systems = []
    for name, skill in (("a", 0.6), ("b", 0.5)):
        predictions = []
        for row in rows:
            right = rng.random() < skill
            text = row.answer if right else ("I don't know" if rng.random() < 0.5 else "Other")
            predictions.append(Prediction(row.id, text, float(rng.random())))
        path = folder / f"{name}.jsonl"
        write_predictions(path, predictions)
        systems.append(path)
    return split, systems


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(sizes: list[int], embed: int) -> dict[str, Any]:
    """Time every size; then the embedding rule on `embed` responses."""
    rows = []
    detector = RefusalDetector(RefusalSettings(embedding=False))
    with tempfile.TemporaryDirectory(prefix="tipqa-scorer-") as tmp:
        for size in sizes:
            folder = Path(tmp) / str(size)
            split, systems = write_world(folder, size, seed=size)
            gold = load_gold(split)
            with stopwatch() as scoring:
                result, scored = score_file(gold, systems[0], detector, ScoringSettings())
            with stopwatch() as writing:
                write_evaluation(result, scored, folder / "out")
            with stopwatch() as comparing:
                compare_systems(gold, systems, detector, ScoringSettings())
            rows.append(
                {
                    "questions": size,
                    "score s": scoring["seconds"],
                    "report s": writing["seconds"],
                    "compare s": comparing["seconds"],
                    "peak MB": peak_mb(),
                }
            )
    print(table(rows, ["questions", "score s", "report s", "compare s", "peak MB"]))
    data: dict[str, Any] = {"sizes": rows}
    if embed:
        from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

        embedded = RefusalDetector(RefusalSettings(), SentenceTransformerEmbedder.of())
        texts = [f"I think the answer might be number {i}." for i in range(embed)]
        with stopwatch() as timing:
            embedded.read(texts, [None] * embed)
        rate = embed / timing["seconds"]
        print(
            f"embedding refusal rule: {embed} responses in {timing['seconds']:.1f} s "
            f"({rate:.0f} responses/s)"
        )
        data["embedding"] = {"responses": embed, "seconds": timing["seconds"], "per_second": rate}
    return data


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, nargs="+", default=[2_000, 10_000])
    parser.add_argument("--embed", type=int, default=500)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    print("saved", save("scorer", measure(args.questions, args.embed), args.results))


if __name__ == "__main__":
    main()
