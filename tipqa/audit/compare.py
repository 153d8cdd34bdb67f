"""`tipqa flips RUN_A RUN_B`: the labels of two builds of the same questions, side by side.

Reads each build's partitions (the labels of Algorithm 1, before any audit is applied) of the
pools both builds have: the matrix of labels (A's by B's), the flips by deciding stage
(`token -> vector`), and every question whose label differs, with both sides' stage, reason
and evidence. Builds of different questions (another pool's, or other question texts under
the same ids) are an error. Writes `flips.json` and `flips.md` into `--out` (default
`RUN_A/flips/<RUN_B's name>/`).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tipqa.core import cli
from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open, iter_records, write_json
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.core.stats import read_stats
from tipqa.core.text import markdown_table
from tipqa.dataset.provenance import REMEDY, construction_parameters

COMPARE_SCHEMA_VERSION = 1
SHOWN = (
    "judge",
    "confirm_judge",
    "keywords",
    "k1",
    "k2",
    "token_index",
    "vector_index",
    "windows",
)
"""The construction parameters the comparison shows for each build."""


def pools(run: RunLayout) -> list[str]:
    """The pools of a run that have a finished partition."""
    folder = run.root / "pools"
    if not run.root.is_dir():
        raise InputError("no build here (the run folder does not exist)", path=str(run.root))
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return [name for name in names if run.pool(name).partition_stats.is_file()]


def labelled(run: RunLayout, pool: str) -> dict[str, LabeledQuestion]:
    """Every question of a pool's partition, by id."""
    files = run.pool(pool).partition_files
    return {
        row.id: row
        for label in LABELS
        for row in iter_records(files.labelled(label), LabeledQuestion)
    }


def side(run: RunLayout, names: list[str]) -> dict[str, Any]:
    """One build as the comparison names it: its folder, partitions' fingerprints, parameters."""
    fingerprints: dict[str, Any] = {}
    parameters: dict[str, Any] = {}
    for pool in names:
        stats = read_stats(run.pool(pool).partition_stats, REMEDY)
        fingerprints[pool] = stats.get("fingerprint")
        build = stats.get("info", {}).get("build")
        if isinstance(build, dict) and "steps" in build and not parameters:
            shown = construction_parameters(build)
            parameters = {key: shown[key] for key in SHOWN if key in shown}
    return {"run": str(run.root), "fingerprint": fingerprints, "parameters": parameters}


def _side(row: LabeledQuestion) -> dict[str, Any]:
    evidence = row.evidence.to_dict() if row.evidence is not None else None
    return {"label": row.label, "stage": row.stage, "reason": row.reason, "evidence": evidence}


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    """The comparison of two builds of the same questions (see the module docstring)."""
    a, b = RunLayout(Path(run_a)), RunLayout(Path(run_b))
    shared = [pool for pool in pools(a) if pool in pools(b)]
    if not shared:
        raise InputError(
            f"the builds share no pool with a finished partition ({a.root}: "
            f"{', '.join(pools(a)) or 'none'}; {b.root}: {', '.join(pools(b)) or 'none'})"
        )
    matrix = {label: dict.fromkeys(LABELS, 0) for label in LABELS}
    by_stage: Counter[str] = Counter()
    flips = []
    for pool in shared:
        rows_a, rows_b = labelled(a, pool), labelled(b, pool)
        _same_questions(pool, rows_a, rows_b, b)
        for qid, row in rows_a.items():
            other = rows_b[qid]
            matrix[row.label][other.label] += 1
            if row.label != other.label:
                by_stage[f"{row.stage} -> {other.stage}"] += 1
                flips.append(
                    {
                        "id": qid,
                        "pool": pool,
                        "question": row.question,
                        "a": _side(row),
                        "b": _side(other),
                    }
                )
    return {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "a": side(a, shared),
        "b": side(b, shared),
        "pools": shared,
        "questions": sum(sum(row.values()) for row in matrix.values()),
        "matrix": matrix,
        "flips_by_stage": dict(sorted(by_stage.items())),
        "flips": flips,
    }


def _same_questions(
    pool: str, rows_a: dict[str, LabeledQuestion], rows_b: dict[str, LabeledQuestion], b: RunLayout
) -> None:
    """An InputError unless both partitions hold the same questions (ids and texts)."""
    only = sorted(set(rows_a) ^ set(rows_b))
    if only:
        raise InputError(
            f"pool {pool!r} holds other questions in the two builds ({len(only)} ids in one "
            f"only, e.g. {only[0]!r}): compare builds of the same questions",
            path=str(b.pool(pool).partition),
        )
    for qid, row in rows_a.items():
        if row.question != rows_b[qid].question:
            raise InputError(
                f"question {qid!r} of pool {pool!r} has another text in the second build",
                path=str(b.pool(pool).partition),
            )


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _flip_row(flip: dict[str, Any]) -> list[str]:
    """A flipped question: its id and text, its pool, and each side's label and evidence."""
    sides = [value for side in (flip["a"], flip["b"]) for value in _side_cells(side)]
    return [f"{_cell(flip['id'])}: {_cell(flip['question'])}", flip["pool"], *sides]


def _side_cells(entry: dict[str, Any]) -> list[str]:
    found = entry["evidence"]
    evidence = f"`{found['doc_id']}` ({found['unit_id']})" if found else "-"
    return [f"{entry['label']} ({entry['stage']})", evidence]


def markdown(result: dict[str, Any]) -> str:
    """The comparison as Markdown: the builds, the matrix, the flips by stage, every flip."""
    a, b = result["a"], result["b"]
    differing = [key for key in SHOWN if a["parameters"].get(key) != b["parameters"].get(key)]
    lines = [
        "# Label flips between two builds",
        "",
        f"A: `{a['run']}`; B: `{b['run']}`; pools {', '.join(result['pools'])}, "
        f"{result['questions']:,} questions, {len(result['flips']):,} with another label.",
        "",
    ]
    if differing:
        rows = [[key, a["parameters"].get(key), b["parameters"].get(key)] for key in differing]
        lines += [markdown_table(["Setting", "A", "B"], rows, _cell), ""]
    matrix = [[label, *(row[other] for other in LABELS)] for label, row in result["matrix"].items()]
    flips = [_flip_row(flip) for flip in result["flips"]]
    lines += [
        "## Labels (rows: A, columns: B)",
        "",
        markdown_table(["A \\ B", *LABELS], matrix, _count),
        "",
        "## Flips by deciding stage (A -> B)",
        "",
        markdown_table(["Stages", "Questions"], list(result["flips_by_stage"].items()), _count),
        "",
        "## Every flip",
        "",
        markdown_table(["Question", "Pool", "A", "A's evidence", "B", "B's evidence"], flips),
    ]
    return "\n".join(lines) + "\n"


def write_comparison(result: dict[str, Any], out: Path) -> None:
    """Write `flips.json` and `flips.md` into `out`."""
    write_json(out / "flips.json", result)
    with atomic_open(out / "flips.md") as handle:
        handle.write(markdown(result).encode())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.audit.compare"),
        description="Label flips between two builds of the same questions (JSON and Markdown).",
    )
    parser.add_argument("run_a", type=Path, help="the first build's run folder (outputs/NAME)")
    parser.add_argument("run_b", type=Path, help="the second build's run folder")
    parser.add_argument(
        "--out",
        type=Path,
        help="the folder of flips.json and flips.md (default RUN_A/flips/<RUN_B's name>)",
    )
    return parser


def run(argv: Sequence[str]) -> int:
    """Compare two builds; print where the files are and how many labels flipped."""
    args = _parser().parse_args(argv)
    result = compare_runs(args.run_a, args.run_b)
    out = args.out or RunLayout(args.run_a).flips(args.run_b.resolve().name)
    write_comparison(result, out)
    print(
        f"{out / 'flips.md'}: {len(result['flips']):,} of {result['questions']:,} questions "
        f"flipped; by stage: {result['flips_by_stage'] or 'none'}"
    )
    return 0


if __name__ == "__main__":
    from tipqa.core.cli import main

    main(run)
