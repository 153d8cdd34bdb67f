"""Shared helpers of the benchmark scripts: worlds, the machine, timing, tables and results.

Every benchmark runs on corpora from the demo-world generator (`tipqa.sources.demo.world`). A world
of
N documents gets the default question mix scaled by N / 10,000, so questions per document stay
constant and growth is visible. Worlds are written once under the work folder and reused.
"""

from __future__ import annotations

import argparse
import configparser
import datetime as dt
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"


def support_module(name: str) -> Any:
    """A module of tests/support/ (the tests' servers and tiny model), imported by path once."""
    key = f"tipqa_bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            key, ROOT / "tests" / "support" / f"{name}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


DEFAULT_WORKDIR = Path(os.environ.get("TIPQA_BENCH_DIR", "/tmp/tipqa-bench"))
SIZES = (10_000, 100_000)
LARGE = 1_000_000
BASE_DOCUMENTS = 10_000
K1 = 100


def world_spec(documents: int, seed: int = 13) -> Any:
    """The demo-world spec of `documents` documents, its question mix scaled to the size."""
    from tipqa.sources.demo.world import DEFAULT_COUNTS, WorldSpec

    factor = max(1, documents // BASE_DOCUMENTS)
    counts = {case: count * factor for case, count in DEFAULT_COUNTS.items()}
    files = max(1, min(16, documents // 100_000 * 2 or 2))
    return WorldSpec(documents=documents, seed=seed, k1=K1, counts=counts, files=files)


def ensure_world(documents: int, workdir: Path) -> Path:
    """Write the world of `documents` documents under `workdir` once; return its folder."""
    from tipqa.core.layout import WorldLayout
    from tipqa.sources.demo.world import write_world

    folder = workdir / f"world-{documents}"
    if not WorldLayout(folder).spec.is_file():
        write_world(world_spec(documents), folder)
    return folder


def corpus_files(world: Path) -> list[Path]:
    """The corpus files of a written world."""
    from tipqa.core.layout import WorldLayout

    return sorted(WorldLayout(world).corpus.glob("*.jsonl"))


def world_questions(world: Path) -> list[Any]:
    """The questions of a written world."""
    from tipqa.core.jsonl import read_records
    from tipqa.core.layout import WorldLayout
    from tipqa.core.records import Question

    return read_records(WorldLayout(world).questions, Question)


def machine() -> dict[str, Any]:
    """What the numbers were measured on: cores, CPU model, memory, load, versions."""
    model = ""
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_kb = 0
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemTotal"):
                memory_kb = int(line.split()[1])
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory_gib": round(memory_kb / 2**20, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": _versions(),
    }


def _versions() -> dict[str, str]:
    """Versions of the packages whose speed is measured."""
    import importlib.metadata as metadata
    import sqlite3

    versions = {"sqlite": sqlite3.sqlite_version}
    for name in ("tantivy", "faiss-cpu", "torch", "sentence-transformers", "luigi", "tipqa"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


@contextmanager
def stopwatch() -> Iterator[dict[str, float]]:
    """Measure the wall seconds of a block into the yielded dict's "seconds"."""
    box: dict[str, float] = {}
    started = time.perf_counter()
    try:
        yield box
    finally:
        box["seconds"] = time.perf_counter() - started


def latencies(run: Callable[[Any], Any], items: Sequence[Any], repeats: int) -> dict[str, float]:
    """p50 / p95 / mean milliseconds of `run(item)` over `repeats` passes of `items`."""
    times: list[float] = []
    for _ in range(repeats):
        for item in items:
            started = time.perf_counter()
            run(item)
            times.append((time.perf_counter() - started) * 1000)
    values = np.asarray(times)
    return {
        "queries": len(items),
        "repeats": repeats,
        "p50_ms": round(float(np.percentile(values, 50)), 3),
        "p95_ms": round(float(np.percentile(values, 95)), 3),
        "mean_ms": round(float(values.mean()), 3),
    }


def ratio(a: float, b: float) -> float | None:
    """a / b rounded, or None when b is zero."""
    return round(a / b, 2) if b else None


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of `rows` restricted to `columns` (missing values left blank)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [_cell(row.get(column)) for column in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    """A table cell: numbers rounded to three significant places past the point."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def save(name: str, data: dict[str, Any], results: Path = RESULTS) -> Path:
    """Write `data` (with the machine and a timestamp) as results/<name>-<time>.json."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = {"benchmark": name, "measured_at": stamp, "machine": machine(), **data}
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}-{stamp}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path


def keep(path: Path, markdown: str) -> None:
    """Copy a result saved by `save` to results/<name>.json, beside <name>.md (kept in git)."""
    saved = path.read_text()
    name = json.loads(saved)["benchmark"]
    path.with_name(f"{name}.json").write_text(saved)
    path.with_name(f"{name}.md").write_text(markdown)
    print("saved", path)


def arguments(description: str, extra: Callable[[argparse.ArgumentParser], object] | None = None):
    """The common command line: --sizes, --large, --workdir, --results."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(SIZES), help="corpus sizes in documents"
    )
    parser.add_argument("--large", action="store_true", help=f"add a {LARGE:,}-document corpus")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    if args.large and LARGE not in args.sizes:
        args.sizes.append(LARGE)
    args.workdir.mkdir(parents=True, exist_ok=True)
    return args


def read_stats(path: Path) -> dict[str, Any]:
    """A JSON object file (a step's stats file); an error if the file holds something else."""
    from tipqa.core.jsonl import read_json

    data = read_json(path)
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: not a JSON object")
    return data


def write_luigi_config(folder: Path, sections: dict[str, dict[str, str]]) -> Path:
    """A luigi.cfg in `folder` (outputs under folder/outputs, no process lock), with sections."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict(
        {
            "core": {"log_level": "WARNING", "no_lock": "true"},
            "retcode": {
                "already_running": "10",
                "missing_data": "20",
                "not_run": "25",
                "task_failed": "30",
                "scheduling_error": "35",
                "unhandled_exception": "40",
            },
            "build": {"name": "bench", "output_root": str(folder / "outputs")},
        }
    )
    parser.read_dict(sections)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "luigi.cfg"
    with open(path, "w") as handle:
        parser.write(handle)
    return path


def luigi_command(task: str = "CreateDataset") -> list[str]:
    """The pipeline's command line."""
    return [sys.executable, "-m", "luigi", "--module", "pipelines", task, "--local-scheduler"]


def luigi_env(config: Path) -> dict[str, str]:
    """The environment of a pipeline run with `config` (offline, the repo importable)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "LUIGI_CONFIG_PATH": str(config),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": path,
        "TQDM_DISABLE": "1",
    }


def start_luigi(config: Path, log: Path, task: str = "CreateDataset") -> subprocess.Popen:
    """Start the pipeline in its own process group, stdout and stderr to `log`."""
    handle = open(log, "ab")  # noqa: SIM115 - closed when the process is reaped
    try:
        return subprocess.Popen(
            luigi_command(task),
            cwd=config.parent,
            env=luigi_env(config),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        handle.close()


def wait_with_usage(process: subprocess.Popen) -> tuple[int, float]:
    """Reap `process`; return its exit code and its peak resident memory in MiB."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the whole process group of `process` and reap it."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_probe(
    tree: Path, script: str, args: Sequence[str], env: dict[str, str] | None = None
) -> str:
    """Run `script` with the tipqa of `tree` (an older checkout, say) in a process of its own;
    what it printed. `env` adds to the environment."""
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, **(env or {}), "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise RuntimeError(f"the probe in {tree} failed:\n{result.stderr[-3000:]}")
    return result.stdout
