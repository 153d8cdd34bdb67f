"""What the audit costs the judge, beside what the build cost it, and what it finds.

    python -m benchmarks.audit [--questions 600] [--samples 0.05 0.1 0.25 1] [--workdir DIR]
        [--part search|judge|all] [--judge-samples 0.1 1] [--refuse 0.15] [--accept 0.05]

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
question.

The judge audit (`--part judge`): each world is built again with a fallible judge of known error
rates (the rules, answering no to `--refuse` of the prompts they answer yes and yes to `--accept` of
those they answer no, drawn per prompt and seeded: tests/support/fallible_judge.py) and the rules as
the second judge (`[audit.judge]`), then the judge audit runs once per `--judge-samples` share.
Reported per label: the labels the planted errors made false (read from the build's records), the
share the second judge disputes with its exact interval, the judges' kappa, and the second judge's
prompts as a share of the build's. Writes results/audit.md and results/audit.json (a part not run
keeps its former table).
"""

from __future__ import annotations

import argparse
import configparser
import dataclasses
import importlib
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
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
from tipqa.builder.audit import audit_finished_run
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
    audit_finished_run(config, [pool])
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


def rules_truth(question: str, passage: str, answer: str) -> bool:
    """The right answer of the benchmark's worlds: the offline rules' (as `CountingServer`)."""
    from tipqa.core.records import JudgeRequest
    from tipqa.llm.judges.rules import is_relevant
    from tipqa.llm.keywords.rules import extract_keywords

    keywords = extract_keywords(question)
    return is_relevant(
        JudgeRequest("q", question, answer, [answer], keywords, "token", "d", "u", passage)
    )


def fallible_server(refuse: float, accept: float, seed: int) -> Any:
    """The local server of two judges (tests/support/fallible_judge.py): `right` answers as the
    rules, `fallible` flips `refuse` of the true yes answers and `accept` of the true no answers."""
    sys.path.insert(0, str(ROOT / "tests"))
    fallible_judge = importlib.import_module("support.fallible_judge")
    openai_server = importlib.import_module("support.openai_server")

    planted = fallible_judge.Planted(refuse_rate=refuse, accept_rate=accept, seed=seed)
    rule = fallible_judge.two_judges(rules_truth, planted)
    return openai_server.FakeOpenAIServer(rule), planted


def planted_labels(folder: Path, pool: str, planted: Any) -> dict[str, Any]:
    """The false labels the fallible judge planted in a pool, from the build's own records:
    answerable questions whose evidence the rules reject, and unanswerable or discarded ones
    with a unit the rules accept among the first `budget` the build judged."""
    from tipqa.audit.judge_audit import build_units
    from tipqa.builder.assemble import token_index
    from tipqa.builder.inputs import shard_count
    from tipqa.builder.plan import Plan
    from tipqa.core.jsonl import iter_records
    from tipqa.core.records import LabeledQuestion

    config = load_config(folder / "luigi.cfg")
    inputs, layout = Plan(config).audit(pool), config.layout()
    place = layout.pool(pool)
    shards = [place.shard(i) for i in range(shard_count(place))]
    rows = {
        label: list(iter_records(place.partition_files.labelled(label), LabeledQuestion))
        for label in ("answerable", "unanswerable", "discarded")
    }
    false = {"answerable": 0, "unanswerable": 0, "discarded": 0}
    for row in rows["answerable"]:
        evidence = row.evidence
        false["answerable"] += evidence is not None and not rules_truth(
            row.question, evidence.text, row.answer
        )
    others = rows["unanswerable"] + rows["discarded"]
    fetch = token_index(inputs.tokens, layout).get
    units = build_units(others, shards, fetch, inputs.audit_run().windows)
    budget = config.audit.budget
    for row in others:
        texts = [unit.request.text for unit in units[row.id][:budget]]
        false[row.label] += any(rules_truth(row.question, text, row.answer) for text in texts)
    return {label: {"labelled": len(rows[label]), "false": false[label]} for label in false}


def judge_audited(folder: Path, pool: str, share: float) -> dict[str, Any]:
    """The judge audit of pool `pool` at `judge_sample = share` (the search audit at 0.05)."""
    config = load_config(folder / "luigi.cfg")
    settings = dataclasses.replace(config.audit, sample=0.05, judge_sample=share)
    began = time.perf_counter()
    audit_finished_run(
        dataclasses.replace(config, audit=settings), [pool], accept_undetermined=True
    )
    seconds = time.perf_counter() - began
    audit: Any = read_json(config.layout().pool(pool).audit)
    return {"audit": audit, "seconds": round(seconds, 1)}


def judge_rows(
    world: str, pool: str, found: dict[str, Any], planted: dict[str, Any], share: float
) -> list[dict[str, Any]]:
    """The judge audit's rows: per label, the planted false share against the measured one."""
    audit, judged = found["audit"], found["audit"]["judge_audit"]
    build = audit["build"]["judge_calls"]
    agreement = judged["agreement"]
    rows = []
    for label in ("answerable", "unanswerable", "discarded"):
        block, truth = judged[label], planted[label]
        low, high = block["ci95"] or (None, None)
        rows.append(
            {
                "world": world,
                "pool": pool,
                "judge_sample": share,
                "label": label,
                "labelled": block["labelled"],
                "planted_false": truth["false"],
                "planted_share": truth["false"] / truth["labelled"] if truth["labelled"] else None,
                "audited": block["audited"],
                "disputed": len(block["disputed"]),
                "measured_share": block["rate"],
                "ci95_low": low,
                "ci95_high": high,
                "within_ci": None
                if low is None or not truth["labelled"]
                else low <= truth["false"] / truth["labelled"] <= high,
                "kappa": agreement["kappa"],
                "units": agreement["units"],
                "second_judge_prompts": judged["judge_calls"],
                "build_judge_calls": build,
                "prompts_share": judged["judge_calls"] / build if build else None,
                "seconds": found["seconds"],
            }
        )
    return rows


def confirmed(folder: Path, pool: str, planted: Any) -> dict[str, Any]:
    """A build whose every yes was asked again of the right judge (`[judge.confirm]`): the
    false answerable labels left, the confirming prompts against the yes answers of the
    build's judge, and both against the build's prompts."""
    from tipqa.builder.inputs import shard_count
    from tipqa.core.jsonl import iter_records
    from tipqa.core.records import Judgment
    from tipqa.core.steps import Step

    truth = planted_labels(folder, pool, planted)
    place = load_config(folder / "luigi.cfg").layout().pool(pool)
    prompts = confirming = yes = 0
    for index in range(shard_count(place)):
        shard = place.shard(index)
        for step in (Step.TOKEN_JUDGE, Step.VECTOR_JUDGE):
            counts = read_json(shard.stats(step))["counts"]  # type: ignore[index]
            prompts += int(counts.get("prompts", 0))
            confirming += int(counts.get("confirmation_prompts", 0))
        for path in (shard.token_judgments, shard.vector_judgments):
            yes += sum(j.label == "yes" for j in iter_records(path, Judgment))
    answerable = truth["answerable"]
    return {
        "pool": pool,
        "answerable": answerable["labelled"],
        "false_answerable_left": answerable["false"],
        "build_yes": yes,
        "confirmation_prompts": confirming,
        "build_judge_calls": prompts,
        "confirmation_share": confirming / prompts if prompts else None,
    }


CONFIRM_COLUMNS = [
    "world", "pool", "answerable", "false_answerable_left", "build_yes", "confirmation_prompts",
    "build_judge_calls", "confirmation_share",
]  # fmt: skip
JUDGE_COLUMNS = [
    "world", "pool", "judge_sample", "label", "labelled", "planted_false", "planted_share",
    "audited", "disputed", "measured_share", "ci95_low", "ci95_high", "within_ci", "kappa",
    "units", "second_judge_prompts", "build_judge_calls", "prompts_share", "seconds",
]  # fmt: skip
JUDGE_TITLE = "## The judge audit: a fallible judge of known error rates, a right second judge"


def judge_part(
    worlds: dict[str, dict[str, dict[str, str]]], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], str]:
    """Build each world with a fallible judge, run the judge audit at every share; its rows and
    its Markdown section."""
    rows: list[dict[str, Any]] = []
    confirm_rows: list[dict[str, Any]] = []
    server, planted = fallible_server(args.refuse, args.accept, seed=7)
    with server:
        judge = {"backend": "openai", "base_url": server.base_url, "max_words": "2000"}
        for name, sections in worlds.items():
            folder = args.workdir / f"{name}-judged"
            full = {
                **sections,
                "judge": {**judge, "model": "fallible"},
                "audit.judge": {"model": "right"},
                "vector_index": VECTOR,
                "audit": {"sample": "0"},
            }
            build(folder, full)
            for pool in (key.removeprefix("pool.") for key in sections if key.startswith("pool.")):
                truth = planted_labels(folder, pool, planted)
                for share in args.judge_samples:
                    found = judge_audited(folder, pool, share)
                    rows += judge_rows(name, pool, found, truth, share)
                    print(table(rows[-3:], JUDGE_COLUMNS), flush=True)
            folder = args.workdir / f"{name}-confirmed"
            build(folder, {**full, "judge.confirm": {"model": "right"}})
            for pool in (key.removeprefix("pool.") for key in sections if key.startswith("pool.")):
                confirm_rows.append({"world": name, **confirmed(folder, pool, planted)})
                print(table(confirm_rows[-1:], CONFIRM_COLUMNS), flush=True)
    words = (
        f"The build's judge is the offline rules behind a local server, with planted errors: it "
        f"answers no to {args.refuse:.0%} of the prompts the rules answer yes, and yes to "
        f"{args.accept:.0%} of those they answer no (drawn per prompt, seeded); the second "
        "judge answers as the rules. `planted_false` counts the labels those errors made "
        "false, read from the build's own records (an answerable question whose evidence the "
        "rules reject; an unanswerable or discarded one with a unit the rules accept among the "
        "first `budget` the build judged); `measured_share` is the judge audit's rate with its "
        "exact interval; `prompts_share` the second judge's prompts over the build's."
    )
    confirm_words = (
        "The same fallible judge confirmed by the right one (`[judge.confirm]`): every yes of "
        "the build's judge asked again, the unit evidence only when both say yes. "
        "`false_answerable_left` counts the answerable labels whose evidence the rules reject; "
        "`confirmation_prompts` the confirming judge's prompts, against `build_yes`, the yes "
        "answers of the build's judge."
    )
    parts = [JUDGE_TITLE, "", words, "", table(rows, JUDGE_COLUMNS), "", confirm_words, ""]
    rows += [{"part": "confirmation", **row} for row in confirm_rows]
    return rows, "\n".join([*parts, table(confirm_rows, CONFIRM_COLUMNS), ""])


def search_part(
    worlds: dict[str, dict[str, dict[str, str]]], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], str]:
    """Build each world with the rules as judge, audit it at every share; its rows and table."""
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
    return rows, "\n".join(["# The audit's cost and findings", "", table(rows, COLUMNS), ""])


def former_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of the former result, by part (an older result's rows are the search part's)."""
    former: Any = read_json(path) if path.is_file() else {}
    rows = former.get("rows", {}) if isinstance(former, dict) else {}
    return {"search": rows} if isinstance(rows, list) else dict(rows)


def main() -> None:
    """Build both worlds, audit each at every share (the search audit, the judge audit), print
    and keep the tables (a part not run keeps its former table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=600, help="real-text questions")
    parser.add_argument("--samples", type=float, nargs="+", default=list(SAMPLES))
    parser.add_argument("--judge-samples", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--refuse", type=float, default=0.15, help="planted false no share")
    parser.add_argument("--accept", type=float, default=0.05, help="planted false yes share")
    parser.add_argument("--part", choices=("search", "judge", "all"), default="all")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "audit")
    args = parser.parse_args()
    worlds = {"demo": demo_sections()}
    if SHARED_DATA.is_dir():
        worlds["real"] = real_sections(args.questions)
    former = (RESULTS / "audit.md").read_text() if (RESULTS / "audit.md").is_file() else ""
    search_former, _, judge_former = former.partition(JUDGE_TITLE)
    rows = former_rows(RESULTS / "audit.json")
    sections = [search_former.rstrip() + "\n", JUDGE_TITLE + judge_former if judge_former else ""]
    if args.part in ("search", "all"):
        rows["search"], sections[0] = search_part(worlds, args)
    if args.part in ("judge", "all"):
        rows["judge"], sections[1] = judge_part(worlds, args)
    markdown = "\n".join(part for part in sections if part)
    print(markdown)
    settings = {**vars(args), "workdir": str(args.workdir)}
    keep(save("audit", {"rows": rows, "settings": settings}), markdown)


if __name__ == "__main__":
    main()
