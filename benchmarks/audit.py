"""What the audit costs the judge, beside what the build cost it, and what it finds.

    python -m benchmarks.audit [--questions 600] [--samples 0.05 0.1 0.25 1] [--workdir DIR]

Two worlds, each built in the work folder (`CreateDataset`, which resumes a former run's;
the candidate vector stage, k1 = 100, k2 = 10, the offline rule keywords, and a judge behind
a local OpenAI-compatible server that answers like the offline rules and reports the prompt's
whitespace words as its prompt tokens: `benchmarks.counting_server`):

- `demo`: the demo world of the repository's luigi.cfg (2,000 documents, 29 questions);
- `real`: the real documents of ../shared/data (Wikipedia passages, Common Crawl documents,
  TriviaQA's evidence files; read at run time, never copied here), with two pools: `dev`, the
  first `--questions` TriviaQA questions of the llm-foundry sample, and `official`, the 9
  questions of TriviaQA's official sample, whose evidence files are in the corpus.

Then the audit runs on the finished build once per `--samples` share (as `tipqa audit --sample`
does, default budget 20 prompts per question), and each is reported: questions audited and
found per label, the share found with its exact 95% interval, the audit's judge prompts and
prompt tokens and their share of the build's, its seconds, and the prompts per audited
question. Writes results/audit.md and results/audit.json.
"""

from __future__ import annotations

import argparse
import configparser
import dataclasses
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    ROOT,
    keep,
    save,
    start_luigi,
    table,
    write_luigi_config,
)
from benchmarks.counting_server import CountingServer
from benchmarks.real_text import SHARED_DATA
from tipqa.builder.assemble import load_config
from tipqa.builder.audit import audit_run
from tipqa.core.jsonl import read_json

SAMPLES = (0.05, 0.1, 0.25, 1.0)
VECTOR = {"backend": "candidates"}


def demo_sections() -> dict[str, dict[str, str]]:
    """The repository's demo world (luigi.cfg's [demo] and pool)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "luigi.cfg")
    return {"demo": dict(parser["demo"]), "pool.dev": {"source": "demo"}}


def real_sections(questions: int, data: Path = SHARED_DATA) -> dict[str, dict[str, str]]:
    """TriviaQA questions of the llm-foundry sample against the sample's real documents."""
    return {
        "corpus": {"source": "files"},
        "corpus.passages": {
            "paths": str(data / "corpus" / "wikipedia-passages-1000.jsonl"),
            "text_field": "contents",
        },
        "corpus.web": {"paths": str(data / "corpus" / "web-cc")},
        "corpus.evidence": {
            "paths": str(data / "triviaqa" / "official-sample" / "evidence"),
            "format": "text",
        },
        "pool.dev": {
            "source": "llm-foundry-jsonl",
            "paths": str(data / "triviaqa" / "llm-foundry-triviaqa-3000.jsonl"),
            "limit": str(questions),
        },
        "pool.official": {
            "source": "triviaqa-json",
            "paths": str(data / "triviaqa" / "official-sample" / "qa"),
        },
    }


def build(folder: Path, sections: dict[str, dict[str, str]]) -> None:
    """Run `CreateDataset` in `folder` (it resumes: the steps a former run finished stay)."""
    config = write_luigi_config(folder, sections)
    if start_luigi(config, folder / "luigi.log").wait() != 0:
        raise RuntimeError(f"the build in {folder} failed; see {folder / 'luigi.log'}")


def audited(folder: Path, pool: str, share: float) -> dict[str, Any]:
    """Audit pool `pool` of the build in `folder` at `share`; what it found and cost."""
    config = load_config(folder / "luigi.cfg")
    config = dataclasses.replace(config, audit=dataclasses.replace(config.audit, sample=share))
    began = time.perf_counter()
    audit_run(config, [pool])
    seconds = time.perf_counter() - began
    audit: Any = read_json(config.layout().pool(pool).audit)
    build = audit["build"]
    unanswerable, discarded = audit["by_label"]["unanswerable"], audit["by_label"]["discarded"]
    low, high = unanswerable["ci95"] or (None, None)
    return {
        "pool": pool,
        "sample": share,
        "unanswerable": unanswerable["labelled"],
        "audited_unanswerable": unanswerable["audited"],
        "found_unanswerable": unanswerable["found"],
        "rate": unanswerable["rate"],
        "ci95_low": low,
        "ci95_high": high,
        "discarded": discarded["labelled"],
        "audited_discarded": discarded["audited"],
        "found_discarded": discarded["found"],
        "causes": ", ".join(
            f"{cause} {count}"
            for cause in unanswerable["by_cause"]
            if (count := unanswerable["by_cause"][cause] + discarded["by_cause"][cause])
        ),
        "found": [
            (item["id"], item["cause"], item["evidence"]["doc_id"]) for item in audit["found"]
        ],
        "judge_calls": audit["judge_calls"],
        "build_judge_calls": build["judge_calls"],
        "calls_share": audit["judge_calls"] / build["judge_calls"],
        "prompt_tokens": audit["prompt_tokens"],
        "build_prompt_tokens": build["prompt_tokens"],
        "tokens_share": audit["prompt_tokens"] / build["prompt_tokens"]
        if build["prompt_tokens"]
        else None,
        "calls_per_audited": audit["judge_calls"] / max(1, audit["audited"]),
        "seconds": round(seconds, 1),
    }


COLUMNS = [
    "world", "pool", "sample", "audited_unanswerable", "found_unanswerable", "rate", "ci95_low",
    "ci95_high", "audited_discarded", "found_discarded", "causes", "judge_calls",
    "build_judge_calls", "calls_share", "tokens_share", "calls_per_audited", "seconds",
]  # fmt: skip


def main() -> None:
    """Build both worlds, audit each at every share, print and keep the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=600, help="real-text questions")
    parser.add_argument("--samples", type=float, nargs="+", default=list(SAMPLES))
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "audit")
    args = parser.parse_args()
    worlds = {"demo": demo_sections()}
    if SHARED_DATA.is_dir():
        worlds["real"] = real_sections(args.questions)
    rows = []
    with CountingServer() as server:
        judge = {**server.settings(), "max_words": "2000"}
        for name, sections in worlds.items():
            folder = args.workdir / name
            full = {**sections, "judge": judge, "vector_index": VECTOR, "audit": {"sample": "0"}}
            build(folder, full)
            for pool in (key.removeprefix("pool.") for key in sections if key.startswith("pool.")):
                for share in args.samples:
                    rows.append({"world": name, **audited(folder, pool, share)})
                    print(table(rows[-1:], COLUMNS), flush=True)
    markdown = "\n".join(["# The audit's cost and findings", "", table(rows, COLUMNS), ""])
    print(markdown)
    settings = {**vars(args), "workdir": str(args.workdir)}
    keep(save("audit", {"rows": rows, "settings": settings}), markdown)


if __name__ == "__main__":
    main()
