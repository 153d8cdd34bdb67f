"""The paper's configuration rehearsed small on one machine, with the real parts.

    .venv-vllm/bin/python -m benchmarks.rehearsal [--documents 200] [--shard-size 3]

`luigid` on loopback (state and logs in the work folder), two `CreateDataset --workers 2
--no-lock --worker-keep-alive` clients (as docs/scale.md runs them), a real vLLM
OpenAI-compatible server (the CPU build, a tiny random-weight model made here) as judge and
keyword extractor through the `openai` backends, tantivy and the candidate vector stage, over
the demo world. When the `--kill-after`-th judge request arrives the server is killed (SIGKILL)
with it in flight, then started again; the clients' retries, sized from the server's first
start, carry them over the gap (a `RetryFailed` and a rerun follow if a client did not exit
0). A counting proxy in front of the server counts every answer per prompt. The labels are
compared with those of an uninterrupted one-process build on vLLM's offline engine with the
same model (temperature 0, constrained yes/no; keywords constrained to "born, die, founded,
wrote", of which the parser keeps the word each demo question has: a random model's own
keywords would never be words of the question).

It prints wall times, requests, engine starts and prompts answered twice, and writes
benchmarks/results/rehearsal.json and .md. It needs `vllm` (its CPU build: `.ci/run` makes
.venv-vllm).
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, ROOT, keep, save, support_module, table
from benchmarks.vllm_server import CountingProxy, VLLMServer, free_port, vllm_environment
from tipqa.core.records import LABELS
from tipqa.llm.openai_client import OpenAIServerSettings

MODEL_NAME = "tiny"
CONTEXT = 2048
MAX_WORDS = 200
KEYWORD_CONSTRAINT = {"regex": "born, die, founded, wrote"}
KEYWORD_TOKENS = "32"  # the constrained answer whole: a random model spells it in up to 26 tokens
CLIENT_TIMEOUT = 1800
BACKOFF_BASE, BACKOFF_MAX = 0.5, 10.0
RESTART_MARGIN = 4  # the clients wait out a restart this many times slower than the first start


def tiny_model(folder: Path) -> Path:
    """The tests' tiny random chat model (tests/support/vllm_model.py), made once in `folder`."""
    if (folder / "config.json").is_file():
        return folder
    return Path(support_module("vllm_model").build_tiny_model(folder))


def sections(root: Path, documents: int, shard_size: int) -> dict[str, dict[str, str]]:
    """The configuration both builds share: the demo world, tantivy, the candidate stage."""
    return {
        "core": {"log_level": "WARNING"},
        "build": {
            "name": "rehearsal",
            "output_root": str(root / "outputs"),
            "shard_size": str(shard_size),
            "k1": "10",
            "k2": "3",
        },
        "demo": {"documents": str(documents), "seed": "5", "files": "2"},
        "pool.dev": {"source": "demo"},
        "token_index": {"backend": "tantivy"},
        "vector_index": {"backend": "candidates"},
    }


def retries_covering(seconds: float) -> int:
    """The fewest retries whose shortest total backoff (jitter at its least) lasts `seconds`."""
    client = OpenAIServerSettings(
        model=MODEL_NAME, backoff_base=BACKOFF_BASE, backoff_max=BACKOFF_MAX
    )
    retries, waited = 0, 0.0
    while waited < seconds:
        retries += 1
        waited += client.backoff_ceiling(retries) / 2
    return retries


def served(base_url: str, retries: int) -> dict[str, dict[str, str]]:
    """[keywords] and [judge] on the server (as configs/tip-triviaqa.cfg does, made small),
    retrying `retries` times: enough to outlast a restart (`retries_covering`)."""
    client = {
        "backend": "openai",
        "model": MODEL_NAME,
        "base_url": base_url,
        "max_concurrency": "4",
        "max_retries": str(retries),
        "backoff_base": str(BACKOFF_BASE),
        "backoff_max": str(BACKOFF_MAX),
        "timeout": "60",
    }
    constraint = json.dumps({"structured_outputs": KEYWORD_CONSTRAINT})
    return {
        "keywords": {**client, "max_tokens": KEYWORD_TOKENS, "extra_body": constraint},
        "judge": {
            **client,
            "mode": "choice",
            "max_tokens": "4",
            "top_logprobs": "10",
            "max_words": str(MAX_WORDS),
        },
    }


def offline(model: Path) -> dict[str, dict[str, str]]:
    """[keywords] and [judge] on vLLM's offline engine: the same model, decoding and windows."""
    engine = {
        "backend": "vllm",
        "model": str(model),
        "max_model_len": str(CONTEXT),
        "enforce_eager": "true",
        "dtype": "float32",
        "batch_size": "64",
    }
    return {
        "keywords": {
            **engine,
            "max_tokens": KEYWORD_TOKENS,
            "structured_outputs": json.dumps(KEYWORD_CONSTRAINT),
        },
        "judge": {**engine, "mode": "choice", "max_words": str(MAX_WORDS)},
    }


def write_config(folder: Path, parts: dict[str, dict[str, str]]) -> Path:
    """A Luigi config file in `folder`."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict(parts)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "luigi.cfg"
    with open(path, "w") as handle:
        parser.write(handle)
    return path


def environment(config: Path, vllm_env: dict[str, str]) -> dict[str, str]:
    """A client's environment: the config, the repo importable, offline, no key needed."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        **vllm_env,
        "LUIGI_CONFIG_PATH": str(config),
        "PYTHONPATH": path,
        "TQDM_DISABLE": "1",
        "OPENAI_API_KEY": "EMPTY",
    }


def luigi(task: str, *flags: str) -> list[str]:
    """A `luigi --module pipelines` command line."""
    return [sys.executable, "-m", "luigi", "--module", "pipelines", task, *flags]


def run(command: list[str], config: Path, env: dict[str, str], log: Path) -> int:
    """Run a command from the config's folder, output appended to `log`; its exit code."""
    with open(log, "ab") as handle:
        done = subprocess.run(
            command,
            cwd=config.parent,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=CLIENT_TIMEOUT,
            check=False,
        )
    return done.returncode


def labels(root: Path) -> dict[str, tuple[str, str]]:
    """Every question's (label, stage) of a build's dev partition."""
    folder = root / "outputs" / "rehearsal" / "pools" / "dev" / "partition"
    out: dict[str, tuple[str, str]] = {}
    for label in LABELS:
        path = folder / f"{label}.jsonl"
        for line in path.read_text().splitlines() if path.is_file() else []:
            row = json.loads(line)
            out[row["id"]] = (row["label"], row["stage"])
    return out


def engine_starts(root: Path) -> int:
    """The offline engines a build's steps started (its partition's record)."""
    stats = root / "outputs" / "rehearsal" / "pools" / "dev" / "partition" / "stats.json"
    return int(json.loads(stats.read_text())["info"].get("llm_engine_starts", 0))


def step_requests(root: Path) -> int:
    """Requests the build's LLM steps recorded (cache misses sent, whatever the backend)."""
    total = 0
    for path in (root / "outputs" / "rehearsal" / "pools" / "dev" / "shards").glob(
        "*/*.stats.json"
    ):
        counts = json.loads(path.read_text())["counts"]
        total += sum(int(v) for k, v in counts.items() if k.endswith(".requests"))
    return total


def reference_build(work: Path, model: Path, documents: int, shard_size: int) -> dict[str, Any]:
    """The uninterrupted one-process build on vLLM's offline engine."""
    root = work / "offline"
    config = write_config(root, {**sections(root, documents, shard_size), **offline(model)})
    env = environment(config, vllm_environment(work / "vllm-offline"))
    began = time.monotonic()
    code = run(
        luigi("CreateDataset", "--local-scheduler", "--no-lock"), config, env, root / "build.log"
    )
    return {
        "root": root,
        "exit_code": code,
        "wall_s": round(time.monotonic() - began, 1),
        "engine_starts": engine_starts(root) if code == 0 else None,
        "requests": step_requests(root),
    }


def served_build(
    work: Path, model: Path, documents: int, shard_size: int, kill_after: int
) -> dict[str, Any]:
    """luigid, the vLLM server behind the counting proxy, two clients; one kill and restart."""
    root = work / "served"
    vllm_env = vllm_environment(work / "vllm-server")
    server = VLLMServer(model, MODEL_NAME, work / "server.log", vllm_env, CONTEXT)
    state = work / "luigid"
    state.mkdir(parents=True, exist_ok=True)
    port = free_port()
    scheduler = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("luigid")),
            "--address",
            "127.0.0.1",
            "--port",
            str(port),
            "--state-path",
            str(state / "state.pickle"),
            "--logdir",
            str(state),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=state,
        env={**os.environ, "LUIGI_CONFIG_PATH": os.devnull},
    )
    killed = threading.Event()
    at_kill: dict[str, float] = {}
    try:
        server.start()
        with CountingProxy(server.url) as proxy:

            def kill_at(judge_request: int) -> None:
                if judge_request == kill_after:
                    at_kill["s"] = round(time.monotonic() - began, 1)
                    at_kill["in_flight"] = proxy.in_flight()
                    server.kill()
                    killed.set()

            proxy.on_judge_request.append(kill_at)
            retries = retries_covering(RESTART_MARGIN * server.start_seconds[0])
            config = write_config(
                root, {**sections(root, documents, shard_size), **served(proxy.base_url, retries)}
            )
            env = environment(config, vllm_env)
            central = (
                "--workers",
                "2",
                "--scheduler-host",
                "127.0.0.1",
                "--scheduler-port",
                str(port),
                "--no-lock",
                "--worker-keep-alive",
            )
            began = time.monotonic()
            clients = [
                subprocess.Popen(
                    luigi("CreateDataset", *central),
                    cwd=root,
                    env=env,
                    stdout=open(root / f"client-{i}.log", "ab"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                )
                for i in range(2)
            ]
            restarted = False
            while any(c.poll() is None for c in clients):
                if killed.is_set() and not restarted:
                    server.start()
                    restarted = True
                time.sleep(0.2)
            codes = [c.wait() for c in clients]
            recovery: list[int] = []
            if any(codes):
                local = ("--local-scheduler", "--no-lock")
                recovery.append(
                    run(luigi("RetryFailed", *local), config, env, root / "recovery.log")
                )
                recovery.append(
                    run(luigi("CreateDataset", *local), config, env, root / "recovery.log")
                )
            return {
                "root": root,
                "client_exit_codes": codes,
                "client_max_retries": retries,
                "recovery_exit_codes": recovery,
                "wall_s": round(time.monotonic() - began, 1),
                "killed_at_s": at_kill.get("s"),
                "in_flight_at_kill": at_kill.get("in_flight"),
                "server_starts": server.starts,
                "server_start_s": server.start_seconds,
                "requests_received": proxy.received,
                "requests_answered": sum(proxy.answered.values()),
                "requests_failed": proxy.failed,
                "judge_requests": proxy.judge_requests,
                "judge_answers": proxy.judge_answers,
                "prompts_answered_twice": proxy.asked_twice(),
                "step_requests": step_requests(root),
                "engine_starts": engine_starts(root),
            }
    finally:
        server.kill()
        scheduler.kill()
        scheduler.wait()


def rehearse(work: Path, documents: int, shard_size: int, kill_after: int) -> dict[str, Any]:
    """Both builds and their comparison."""
    work.mkdir(parents=True, exist_ok=True)
    model = tiny_model(work / "tiny-model")
    reference = reference_build(work, model, documents, shard_size)
    rehearsal = served_build(work, model, documents, shard_size, kill_after)
    offline_labels, served_labels = labels(reference["root"]), labels(rehearsal["root"])
    differ = sorted(q for q in offline_labels if offline_labels[q] != served_labels.get(q))
    return {
        "documents": documents,
        "shard_size": shard_size,
        "kill_at_judge_request": kill_after,
        "questions": len(offline_labels),
        "labels_by_kind": _kinds(served_labels),
        "labels_differ": len(differ),
        "differing_questions": differ,
        "offline": {k: v for k, v in reference.items() if k != "root"},
        "served": {k: v for k, v in rehearsal.items() if k != "root"},
    }


def _kinds(rows: dict[str, tuple[str, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label, stage in rows.values():
        counts[f"{label}_{stage}"] = counts.get(f"{label}_{stage}", 0) + 1
    return dict(sorted(counts.items()))


def report(result: dict[str, Any]) -> str:
    """The result as Markdown."""
    served, offline = result["served"], result["offline"]
    rows = [
        {
            "build": "offline engine, 1 process",
            "wall_s": offline["wall_s"],
            "requests": offline["requests"],
            "engine_starts": offline["engine_starts"],
            "exit": offline["exit_code"],
        },
        {
            "build": "vLLM server, luigid, 2 clients x 2 workers",
            "wall_s": served["wall_s"],
            "requests": served["requests_answered"],
            "engine_starts": served["server_starts"],
            "exit": ",".join(map(str, served["client_exit_codes"])),
        },
    ]
    return "\n".join(
        [
            "# Rehearsal of the scale path (one machine, CPU)",
            "",
            f"{result['questions']} questions of the demo world ({result['documents']} documents, "
            f"shard_size {result['shard_size']}); the server killed as judge request "
            f"{result['kill_at_judge_request']} arrived (at {served['killed_at_s']} s; requests "
            f"in flight: {served['in_flight_at_kill']}) and started again "
            f"(starts took {served['server_start_s']} s; the clients retry "
            f"{served['client_max_retries']} times).",
            "",
            table(rows, ["build", "wall_s", "requests", "engine_starts", "exit"]),
            "",
            f"- requests received by the proxy {served['requests_received']}, answered "
            f"{served['requests_answered']}, failed {served['requests_failed']} (in flight at the "
            "kill, or refused while the server was down: retried)",
            f"- prompts answered twice: {served['prompts_answered_twice']}",
            f"- labels that differ from the offline build: {result['labels_differ']} of "
            f"{result['questions']}",
            f"- labels: {result['labels_by_kind']}",
            f"- recovery (RetryFailed, CreateDataset) exit codes: {served['recovery_exit_codes']}",
            "",
        ]
    )


def main() -> None:
    """Run the rehearsal and keep its result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--shard-size", type=int, default=3)
    parser.add_argument(
        "--kill-after", type=int, default=20, help="the judge request at which the server is killed"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tipqa-rehearsal"))
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    began = time.monotonic()
    result = rehearse(args.workdir, args.documents, args.shard_size, args.kill_after)
    result["total_wall_s"] = round(time.monotonic() - began, 1)
    text = report(result)
    print(text)
    keep(save("rehearsal", result, args.results), text)


if __name__ == "__main__":
    main()
