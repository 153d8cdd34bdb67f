"""The table of which setting change reruns which step, read from the build plan itself.

`rerun_rows()` builds a `Plan` for configurations that run every step (the demo world and a
pool of files, LLM keywords and judge, a training order, an annotation, an evaluation), then
reads each step's record: the settings it holds name the steps a key decides, and the step
fingerprints among its inputs are the edges to the steps downstream. A key reruns the steps it
decides and everything downstream of them. A settings group or raw input that the plan gains
and this module has no words for is an error, so the table cannot fall behind the plan.

`python -m tipqa.builder.reruns` prints the table; `--write FILE` writes it into FILE between the
markers (docs/configuration/reruns.md; a test checks that the file holds the current table).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.config.reference import between, write_page
from tipqa.core import cli
from tipqa.core.fingerprint import StepInputs, StepRecord
from tipqa.core.steps import SHARD_STEPS, Step
from tipqa.training_order.synthetic import write_megatron

SECTIONS = {
    "demo": "[demo]",
    "k1": "[build]",
    "k2": "[build]",
    "shard_size": "[build]",
    "cost_sample": "[build]",
    "cost_seed": "[build]",
    "pool": "[pool.NAME]",
    "token_index": "[token_index]",
    "embedder": "[embedder]",
    "vector_index": "[vector_index]",
    "chunking": "[vector_index]",
    "keywords": "[keywords]",
    "judge": "[judge]",
    "windows": "[judge]",
    "confirm": "[judge.confirm]",
    "judge_all_candidates": "[boundary]",
    "checkpoints": "[boundary]",
    "training_order": "[training_order]",
    "splits": "[splits]",
    "hub": "[hub]",
    "annotation": "[annotation]",
    "labelstudio": "[labelstudio]",
    "answerer": "[evaluate.BACKEND]",
    "evaluate": "[evaluate]",
    "split": "`Evaluate --split`",
    "audit": "[audit]",
}
"""The config section behind each group of settings a step record holds."""

NOT_SETTINGS = {(Step.PARTITION, "pool")}
"""Groups that name what a step is of (the partition's pool), not a setting."""

RAW_INPUTS = {
    "corpus": "a corpus file (path, size or modification time), or a `[corpus]` reader key",
    "elasticsearch": "`[elasticsearch]` cluster (`url`)",
    "source": "a question file's content, or the Hub dataset a pool names",
    "training_order": "the training order's files (tokenizer, table) by content",
    "stream": "a training stream file (path, size or modification time)",
    "completed": "a completed annotation file (size or modification time)",
    "scorer": "tipqa's scorer (`SCORER_VERSION`: the same predictions score differently)",
}
"""What each raw (not step) input of a step record is, in the table's words."""

_HASHED = "_sha256"
START, END = "<!-- reruns:start -->", "<!-- reruns:end -->"


@dataclass(frozen=True)
class Row:
    """One line of the table: keys of a section, the steps they decide, all they rerun.

    `section` is a config section (`[judge]`), a parameter, or the words for a raw input (then
    `keys` is empty). `reruns` leaves the demo world out; `demo` is true when the keys decide
    the world too (a change then reruns the world and everything after it, where a source is
    `demo`).
    """

    section: str
    keys: tuple[str, ...]
    decides: tuple[str, ...]
    reruns: tuple[str, ...]
    demo: bool

    @property
    def changed(self) -> str:
        """The row's first cell: the section and its keys."""
        named = ", ".join(_key(key) for key in self.keys)
        shown = f"`{self.section}`" if self.section.startswith("[") else self.section
        return f"{shown} {named}".strip()


def _sections(root: Path) -> list[dict[str, dict[str, str]]]:
    """Configurations that run every step, written with their small input files under `root`."""
    questions = root / "questions.jsonl"
    questions.write_text(
        '{"id": "q1", "text": "Where was Kellan Dusk born?", "answer": "Varnholt"}\n'
    )
    write_megatron(np.arange(64, dtype=np.int64).reshape(2, 32) % 7, root / "document")
    tokenizer = root / "tokenizer.json"
    tokenizer.write_text("{}")
    completed = root / "annotator-01.csv"
    completed.write_text("id,label\n")
    llm = {"backend": "openai", "model": "a-model", "base_url": "http://127.0.0.1:9/v1"}
    common = {
        "pool.dev": {"source": "demo"},
        "pool.train": {"source": "tipqa-jsonl", "paths": str(questions)},
        "keywords": llm,
        "judge": llm,
        "judge.confirm": {"model": "a-larger-model"},
        "boundary": {"checkpoints": "1, 2", "judge_all_candidates": "true"},
        "training_order": {
            "backend": "megatron",
            "path": str(root / "document"),
            "tokenizer": str(tokenizer),
            "seq_length": "32",
            "batch_size": "1",
        },
        "evaluate.openai": {"model": "a-model", "base_url": "http://127.0.0.1:9/v1"},
        "annotation": {"completed_dir": str(root)},
    }
    faiss = {**common, "vector_index": {"backend": "faiss"}}
    elasticsearch = {
        **common,
        "token_index": {"backend": "elasticsearch", "index": "tokens", "bm25": "true"},
        "vector_index": {"backend": "elasticsearch", "index": "vectors"},
        "elasticsearch": {"url": "http://127.0.0.1:9"},
    }
    vllm = {**common, "keywords": {"backend": "vllm"}, "judge": {"backend": "vllm"}}
    return [common, faiss, elasticsearch, vllm]


def records(plan: Plan, completed: list[str]) -> list[StepRecord]:
    """Every step's record of `plan` (the per-pool steps of every pool)."""
    found: list[StepInputs] = [
        plan.world,
        plan.token_index,
        plan.vector_index,
        plan.splits,
        plan.hub_folder,
        plan.report,
        plan.annotation_export,
        plan.annotation_push,
        plan.annotation_pull,
        plan.annotation_agreement(completed),
    ]
    for answerer in plan.config.answerers:
        found += [
            plan.predictions(answerer.backend, "test"),
            plan.evaluate(answerer.backend, "test"),
        ]
    for pool in plan.config.pool_names:
        found += [plan.questions(pool), plan.cost_preview(pool), plan.partition(pool)]
        found += [plan.verbatim(pool), plan.audit(pool)]
        found += [plan.pool_step(pool, step) for step in SHARD_STEPS]
        found.append(plan.boundary(pool))
    if plan.training_index is not None:
        found.append(plan.training_index)
    return [inputs.record for inputs in found]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _settings(record: StepRecord) -> Iterator[tuple[str, str]]:
    """(section, key) of every setting in a step record."""
    for group, value in record.settings.items():
        if (record.step, group) in NOT_SETTINGS:
            continue
        if group not in SECTIONS:
            raise KeyError(f"step {record.step!r} holds settings {group!r}: add it to SECTIONS")
        section = SECTIONS[group]
        if isinstance(value, Mapping):
            for key in value:
                yield section, key
        elif group != "split":
            yield section, group
        else:
            yield section, ""


def _raw_inputs(record: StepRecord, fingerprints: set[str]) -> Iterator[str]:
    """The raw inputs of a step record, in the table's words."""
    for name, value in record.inputs.items():
        if isinstance(value, str) and value in fingerprints:
            continue
        if name not in RAW_INPUTS:
            raise KeyError(f"step {record.step!r} reads {name!r}: add it to RAW_INPUTS")
        yield RAW_INPUTS[name]


def _graph(found: list[StepRecord]) -> dict[str, set[str]]:
    """Each step's direct successors: the steps whose inputs hold its fingerprint."""
    by_fingerprint = {record.fingerprint: record.step for record in found}
    after: dict[str, set[str]] = {record.step: set() for record in found}
    for record in found:
        for text in _strings(record.inputs):
            if text in by_fingerprint and by_fingerprint[text] != record.step:
                after[by_fingerprint[text]].add(record.step)
    return after


def _downstream(starts: Iterable[str], after: Mapping[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        step = todo.pop()
        if step not in seen:
            seen.add(step)
            todo.extend(after.get(step, ()))
    return seen


def _ordered(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(step for step in Step if step in set(names))


def rerun_rows() -> list[Row]:
    """The rows of the table, from the plans of configurations that run every step."""
    decides: dict[tuple[str, str], set[str]] = {}
    after: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="tipqa-reruns-") as folder:
        root = Path(folder)
        completed = [str(root / "annotator-01.csv")]
        for sections in _sections(root):
            found = records(Plan(read_config(sections)), completed)
            fingerprints = {record.fingerprint for record in found}
            for step, successors in _graph(found).items():
                after.setdefault(step, set()).update(successors)
            for record in found:
                for setting in _settings(record):
                    decides.setdefault(setting, set()).add(record.step)
                for raw in _raw_inputs(record, fingerprints):
                    decides.setdefault((raw, ""), set()).add(record.step)
    grouped: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for (section, key), direct in decides.items():
        reruns = _ordered(_downstream(direct - {Step.WORLD}, after))
        grouped.setdefault((section, _ordered(direct), reruns), []).append(key)
    rows = [
        Row(section, tuple(sorted(k for k in keys if k)), direct, reruns, Step.WORLD in direct)
        for (section, direct, reruns), keys in grouped.items()
    ]
    return sorted(rows, key=_place)


def _place(row: Row) -> tuple[int, str]:
    """Where a row goes: at the first step it decides after the demo world."""
    first = next((step for step in row.decides if step != Step.WORLD), Step.WORLD)
    return list(Step).index(Step(first)), row.changed


def _key(key: str) -> str:
    """A key as the table shows it (a hash of a file's content as that file's content)."""
    if key.endswith(_HASHED):
        return f"`{key.removesuffix(_HASHED)}` (its content)"
    return f"`{key}`"


def table() -> str:
    """The table as Markdown, a row per group of keys that rerun the same steps."""
    lines = [
        "| changed | decides | reruns (with everything downstream) |",
        "|---|---|---|",
    ]
    for row in rerun_rows():
        decides = ", ".join(f"`{step}`" for step in row.decides)
        reruns = ", ".join(f"`{step}`" for step in row.reruns)
        if row.demo:
            demo = "with `source = demo`: `world` and everything after it"
            reruns = f"{reruns}; {demo}" if reruns else demo
        lines.append(f"| {row.changed} | {decides} | {reruns} |")
    lines.append("| any key of kind *knob* (see the reference) | nothing | nothing |")
    return "\n".join(lines) + "\n"


def in_page(text: str, block: str) -> str:
    """`text` (a page) with `block` between its rerun-table markers."""
    return between(text, START, END, block)


def parser() -> argparse.ArgumentParser:
    """The command line's argument parser."""
    parse = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.builder.reruns"),
        description="Print which setting change reruns which step, or write it into a page.",
    )
    parse.add_argument("--write", type=Path, metavar="PAGE", help="write the table into PAGE")
    return parse


def run(argv: Sequence[str]) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    if args.write is not None:
        write_page(args.write, lambda text: in_page(text, table()))
    else:
        sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    cli.main(run)
