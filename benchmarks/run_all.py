"""Run every benchmark once and write results/latest.json and results/latest.md.

    python -m benchmarks.run_all [--sizes 10000 100000] [--large] [--e2e-sizes 2000 10000]

Each benchmark runs as its own process (`python -m benchmarks.<name>`) so that one's memory and
threads do not colour the next; their JSON results are gathered into one file, and their
printed tables into one Markdown page, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import DEFAULT_WORKDIR, LARGE, RESULTS, ROOT, SIZES, machine


def run(name: str, arguments: list[str], results: Path) -> tuple[dict, str]:
    """Run one benchmark; return its saved JSON and its printed tables."""
    before = set(results.glob(f"{name}-*.json"))
    command = [sys.executable, "-m", f"benchmarks.{name}", *arguments, "--results", str(results)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    new = sorted(set(results.glob(f"{name}-*.json")) - before)
    if not new:
        raise SystemExit(f"benchmarks.{name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    printed = "\n".join(line for line in done.stdout.splitlines() if not line.startswith("saved"))
    return {**json.loads(new[-1].read_text()), "exit_code": done.returncode}, printed


def _sections(page: str) -> dict[str, str]:
    """The "## name" sections of a latest.md page."""
    parts = page.split("\n## ")[1:]
    return {part.split(" ", 1)[0]: "## " + part for part in parts}


def main() -> None:
    """Every benchmark, then latest.json and latest.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--e2e-sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--skip", nargs="*", default=[], help="benchmark names to leave out")
    parser.add_argument(
        "--update", action="store_true", help="replace only the benchmarks run in latest.*"
    )
    args = parser.parse_args()
    sizes = [str(s) for s in [*args.sizes, *([LARGE] if args.large else [])]]
    e2e = [str(s) for s in [*args.e2e_sizes, *([LARGE] if args.large else [])]]
    common = ["--workdir", str(args.workdir)]
    plan = {
        "token_index": ["--sizes", *sizes, *common],
        "judge": ["--sizes", *sizes, *common],
        "llm_cache": common,
        "vector_index": ["--sizes", *sizes, *common],
        "end_to_end": ["--sizes", *e2e, *common],
        "fault_injection": ["--workdir", str(args.workdir / "faults"), "--documents", "1000"],
        "rules_judge": [],
        "analysis": [],
    }
    gathered: dict[str, dict] = {}
    sections: dict[str, str] = {}
    if args.update and (args.results / "latest.json").is_file():
        gathered = json.loads((args.results / "latest.json").read_text())["benchmarks"]
        sections = _sections((args.results / "latest.md").read_text())
    for name, arguments in plan.items():
        if name in args.skip:
            continue
        started = time.perf_counter()
        data, printed = run(name, arguments, args.results)
        gathered[name] = data
        minutes = (time.perf_counter() - started) / 60
        sections[name] = f"## {name} ({minutes:.1f} min)\n\n```\n{printed.strip()}\n```\n"
        print(f"{name}: done in {minutes:.1f} min", flush=True)
    latest = {"machine": machine(), "benchmarks": gathered}
    head = (
        "# tipqa benchmarks\n\nEach section's JSON (in latest.json) holds the machine it ran on.\n"
    )
    pages = [head, *(sections[name] for name in plan if name in sections)]
    (args.results / "latest.json").write_text(json.dumps(latest, indent=2, sort_keys=True) + "\n")
    (args.results / "latest.md").write_text("\n".join(pages))
    print("wrote", args.results / "latest.json", "and", args.results / "latest.md")


if __name__ == "__main__":
    main()
