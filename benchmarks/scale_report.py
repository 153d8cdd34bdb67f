"""The report of `benchmarks.scale`: target ratios, log-log slopes and the Markdown tables."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from benchmarks.common import ratio, table


def slopes(sizes: dict[str, dict]) -> list[dict]:
    """Log-log slope of each figure against the number of documents (1 = linear)."""
    if len(sizes) < 2:
        return []
    points: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for size, data in sizes.items():
        for row in data["build"]:
            for figure in ("wall_s", "cpu_s", "peak_mib", "index_mb"):
                if row.get(figure):
                    key = (row["method"], str(row["threads"]), figure)
                    points.setdefault(key, []).append((int(size), float(row[figure])))
        for row in data["search"]:
            for figure in ("p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms"):
                points.setdefault((row["set"], row["engine"], figure), []).append(
                    (int(size), float(row[figure]))
                )
    out = []
    for key, values in points.items():
        if len(values) >= 2 and all(v > 0 for _, v in values):
            n, y = np.log([v[0] for v in values]), np.log([v[1] for v in values])
            out.append(
                {"figure": " / ".join(key), "slope": round(float(np.polyfit(n, y, 1)[0]), 2)}
            )
    return out


def targets(data: dict[str, Any]) -> dict[str, float | None]:
    """The ratios the issues set targets for, at one size."""
    build = {(r["method"], r["threads"]): r for r in data["build"]}
    search = {(r["set"], r["engine"]): r for r in data["search"]}
    one = build.get(("tantivy", 1), {})
    out = {
        "tantivy_vs_read_per_core": ratio(
            one.get("mb_per_core_s", 0), build[("read+parse", 1)]["mb_per_core_s"]
        ),
    }
    if ("lucene", 1) in build:
        out["tantivy_vs_lucene_build_per_core"] = ratio(
            one["mb_per_core_s"], build[("lucene", 1)]["mb_per_core_s"]
        )
    for name in ("entity", "broad"):
        ours = search.get((name, "tantivy"))
        for other, slug in (
            ("lucene", "lucene"),
            ("tantivy bm25-pool", "pool"),
            ("recount (pool 10^7)", "recount"),
        ):
            theirs = search.get((name, other))
            if ours and theirs:
                for q in ("p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms"):
                    out[f"{name}_{q[:-3]}_{slug}_over_exact"] = ratio(theirs[q], ours[q])
    return out


def markdown(payload: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    host = payload["machine"]
    build_rows = [r | {"size": s} for s, d in payload["sizes"].items() for r in d["build"]]
    search_rows = [r | {"size": s} for s, d in payload["sizes"].items() for r in d["search"]]
    build_columns = [
        "size",
        "method",
        "threads",
        "wall_s",
        "cpu_s",
        "cores_used",
        "docs_per_s",
        "mb_per_s",
        "docs_per_core_s",
        "mb_per_core_s",
        "peak_mib",
        "index_mb",
    ]
    search_columns = [
        "size",
        "set",
        "engine",
        "queries_timed",
        "median_matches",
        "p50_ms",
        "p95_ms",
        "p99_ms",
    ]
    parts = [
        f"# Token index at scale ({payload['measured_at']})",
        f"Machine: {host['nproc']} cores ({host['cpu']}), {host['memory_gib']} GiB, "
        f"load average {host['load_average']}; {payload['minutes']} minutes.",
        table(build_rows, build_columns),
        table(search_rows, search_columns),
        "Ratios (targets): "
        + json.dumps({s: d["targets"] for s, d in payload["sizes"].items()}, indent=1),
        table(payload["slopes"], ["figure", "slope"]),
    ]
    return "\n\n".join(parts) + "\n"
