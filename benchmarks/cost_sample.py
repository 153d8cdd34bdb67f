"""PreviewCost from a corpus sample against what the full build sent, as whole builds.

    python -m benchmarks.cost_sample [--mixed 100000] [--documents 100000] [--share 0.05]
        [--seeds 0 1 2] [--reuse]

Worlds: the real sample of ../shared/data with `--mixed` demo documents beside it (the world of
`benchmarks.candidates --mixed`), and the demo world of `--documents` documents with its
question mix scaled to the size (`benchmarks.common.world_spec`). Each is built once whole
(`CreateDataset`, the candidate vector stage, the offline rules for keywords and judge); then
`PreviewCost` runs in the same folder once per seed, at `[build] cost_sample = share`,
reusing the build's keywords and indexing only its sample. Reported per world and seed: the
predicted judge prompts (token stage at most, vector stage at most, their sum, with the 95%
bootstrap interval), the exact upper bound counted over the full index's candidates (what the
token stage sends with `judge_all_candidates`, plus k2 per question that can reach the vector
stage), the prompts the build actually sent (early exit on), the relative errors, and the
seconds of the preview against the full build's token index.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks import candidates as worlds_of
from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    ensure_world,
    keep,
    save,
    start_luigi,
    table,
    write_luigi_config,
)
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.records import Question, TokenCandidates
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.stages.cost import preview_cost
from tipqa.stages.windows import WindowSettings

K1, K2 = 100, 10
VECTOR = {"backend": "candidates", "candidates": "100", "query": "question"}


def demo_sections(documents: int, workdir: Path) -> dict[str, dict[str, str]]:
    """The demo world of `documents` documents, its questions scaled, as corpus files."""
    world = ensure_world(documents, workdir)
    return {
        "corpus": {"source": "files", "paths": str(world / "corpus")},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(world / "questions.jsonl")},
    }


def sent(run: Path) -> dict[str, int]:
    """Judge prompts the build sent, by stage, over every shard."""
    shards = sorted((run / "pools" / "dev" / "shards").iterdir())
    token = sum(_counts(s / "token_judge.stats.json").get("prompts", 0) for s in shards)
    vector = sum(_counts(s / "vector_judge.stats.json").get("prompts", 0) for s in shards)
    return {"token": int(token), "vector": int(vector)}


def _counts(path: Path) -> dict[str, Any]:
    """The counts of a stats file (none when the step did not run: no question reached it)."""
    data: Any = read_json(path) if path.exists() else {"counts": {}}
    return dict(data["counts"])


def exact_bound(run: Path) -> dict[str, int]:
    """The upper bound counted over the full index's candidates (the exact preview)."""
    shards = sorted((run / "pools" / "dev" / "shards").iterdir())
    questions = [q for s in shards for q in read_records(s / "questions.jsonl", Question)]
    found = {
        c.question_id: c
        for s in shards
        for c in read_records(s / "token_candidates.jsonl", TokenCandidates)
    }
    index = TantivyTokenIndex.at(run / "index" / "token")
    preview = preview_cost(questions, found, index.get, WindowSettings(), K1, K2, 0, 0)
    token = preview["token_stage"]["prompts_at_most"]
    vector = preview["vector_stage"]["prompts_at_most"]
    return {"token": token, "vector": vector}


def preview(folder: Path, sections: dict, share: float, seed: int) -> tuple[dict, float]:
    """Run PreviewCost in the build's folder with this sample; its output and seconds."""
    build = {**sections.get("build", {}), "cost_sample": str(share), "cost_seed": str(seed)}
    task = {"PreviewCost": {"pool": "dev"}}
    config = write_luigi_config(folder, {**sections, "build": build, **task})
    began = time.perf_counter()
    process = start_luigi(config, folder / "preview.log", "PreviewCost")
    if process.wait() != 0:
        raise RuntimeError(f"PreviewCost failed in {folder}; see {folder / 'preview.log'}")
    seconds = time.perf_counter() - began
    found: Any = read_json(worlds_of.run_folder(folder) / "pools" / "dev" / "cost_preview.json")
    return dict(found), seconds


def error(predicted: float, actual: float) -> float | None:
    """Relative error of `predicted` against `actual`."""
    return round(predicted / actual - 1, 3) if actual else None


def measure(
    world: str, sections: dict, workdir: Path, share: float, seeds: list[int], reuse: bool
) -> list[dict[str, Any]]:
    """The full build once, then one preview per seed, compared."""
    sections = {**sections, "build": {"k1": str(K1), "k2": str(K2)}, "vector_index": VECTOR}
    folder = workdir / world.replace(" ", "-")
    built = worlds_of.build(folder, sections, reuse)
    run = worlds_of.run_folder(folder)
    actual, bound = sent(run), exact_bound(run)
    index_stats: Any = read_json(run / "index" / "token.stats.json")
    index_s = index_stats["seconds"]
    rows = []
    for seed in seeds:
        found, seconds = preview(folder, sections, share, seed)
        judge = found["judge_prompts_at_most"]
        token = found["token_stage"]["prompts_at_most"]
        upper = bound["token"] + bound["vector"]
        rows.append(
            {
                "world": world,
                "questions": found["questions"],
                "seed": seed,
                "sampled_documents": found["sample"]["documents"],
                "predicted_token": token["estimate"],
                "token_interval": "–".join(str(v) for v in token["interval_95"]),
                "exact_token_at_most": bound["token"],
                "predicted_judge": judge["estimate"],
                "judge_interval": "–".join(str(v) for v in judge["interval_95"]),
                "exact_judge_at_most": upper,
                "sent_by_build": actual["token"] + actual["vector"],
                "error_vs_exact": error(judge["estimate"], upper),
                "error_vs_sent": error(judge["estimate"], actual["token"] + actual["vector"]),
                "preview_s": round(seconds, 1),
                "full_token_index_s": index_s,
                "full_build_s": built["wall_s"],
            }
        )
    return rows


def main() -> None:
    """Every world and seed; print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mixed", type=int, default=100_000, metavar="N")
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "cost_sample")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--reuse", action="store_true", help="keep builds already finished")
    args = parser.parse_args()
    found = {}
    if args.documents:
        found[f"demo {args.documents}"] = demo_sections(args.documents, args.workdir)
    if args.mixed:
        mixed = worlds_of.worlds(2000, False, args.mixed, args.workdir)
        found.update({k: v for k, v in mixed.items() if k.startswith("mixed")})
    rows = []
    for world, sections in found.items():
        rows += measure(world, sections, args.workdir, args.share, args.seeds, args.reuse)
    columns = [
        "world", "questions", "seed", "sampled_documents", "predicted_token", "token_interval",
        "exact_token_at_most", "predicted_judge", "judge_interval", "exact_judge_at_most",
        "sent_by_build", "error_vs_exact", "error_vs_sent", "preview_s", "full_token_index_s",
    ]  # fmt: skip
    markdown = table(rows, columns)
    print(markdown)
    settings = {"share": args.share, "seeds": args.seeds, "k1": K1, "k2": K2}
    settings.update(mixed=args.mixed, documents=args.documents)
    keep(save("cost_sample", {"settings": settings, "rows": rows}, args.results), markdown)


if __name__ == "__main__":
    main()
