"""The task folder of a built benchmark: lm-eval YAML files and the `utils.py` they name.

`write_task_folder(parent, steps)` writes `<parent>/lm_eval_tasks/`: `tip_triviaqa.yaml` (the
`questions` configuration's test split), one `tip_triviaqa_step<N>.yaml` per boundary checkpoint
(the `questions_step<N>` configuration; each includes the first and changes its data), the group
`tip_triviaqa_checkpoints.yaml`, and `utils.py`, which finds the data relative to its own folder
(`parent`: the Hub-ready folder, or the splits folder) and hands everything else to
`tipqa.lmeval_task.hooks`. The decoding is the answerer's (`AnswerTask`): greedy, up to
`max_tokens` tokens, until a new line.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tipqa.llm.answerers.llm import AnswerTask

FOLDER = "lm_eval_tasks"
TASK = "tip_triviaqa"
GROUP = f"{TASK}_checkpoints"
VERSION = 1.0
SPLIT = "test"
QUESTIONS = "questions"
CHECKPOINT = re.compile(r"questions_step(\d+)")
METRICS: tuple[tuple[str, bool], ...] = (
    ("em_f1", True),
    ("pm_f1", True),
    ("precision", True),
    ("recall", True),
    ("accuracy_answerable", True),
    ("refusal_rate_answerable", False),
    ("refusal_rate_unanswerable", True),
)
"""The metrics of every task (`tipqa.evaluate.metrics.summary` keys) and their direction."""

UTILS = '''"""lm-eval hooks of this benchmark\'s tasks, written by tipqa (its extra: lm-eval).

The data is read from the folder above this one (the Hub-ready folder or the splits folder);
the prompt, the per-answer results and the metrics are tipqa\'s (`tipqa.lmeval_task.hooks`).
"""

from pathlib import Path

from tipqa.lmeval_task import hooks

HERE = Path(__file__).resolve().parent


def load(**options):
    """The task\'s documents: its configuration\'s test split, read by tipqa."""
    return hooks.load_docs(HERE.parent, **options)


doc_to_text = hooks.doc_to_text
process_results = hooks.process_results
'''


def utils_source() -> str:
    """The text of `utils.py`: the loader, then every hook and metric under its YAML name."""
    metrics = "".join(f"{name} = hooks.{name}\n" for name, _ in METRICS)
    return UTILS + metrics


class Function(str):
    """A `!function` reference of an lm-eval YAML file."""


class _Dumper(yaml.SafeDumper):
    """YAML that writes `Function` values with lm-eval's `!function` tag."""


_Dumper.add_representer(
    Function, lambda dumper, value: dumper.represent_scalar("!function", str(value))
)
_Dumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style='"' if "\n" in value else None
    ),
)


def checkpoint_task(step: int) -> str:
    """The task name of checkpoint `step`."""
    return f"{TASK}_step{step}"


def checkpoint_steps(rows: Mapping[str, Mapping[str, int]]) -> list[int]:
    """The checkpoints whose `questions_step<N>` configuration has a test split, in order."""
    steps = []
    for config, splits in rows.items():
        found = CHECKPOINT.fullmatch(config)
        if found and splits.get(SPLIT):
            steps.append(int(found.group(1)))
    return sorted(steps)


def task_config() -> dict[str, Any]:
    """The task of the `questions` configuration's test split."""
    answerer = AnswerTask()
    return {
        "task": TASK,
        "custom_dataset": Function("utils.load"),
        "dataset_kwargs": {"config": QUESTIONS, "split": SPLIT},
        "output_type": "generate_until",
        "test_split": SPLIT,
        "doc_to_text": Function("utils.doc_to_text"),
        "doc_to_target": "{{answer}}",
        "generation_kwargs": {
            "until": list(answerer.stop),
            "max_gen_toks": answerer.max_tokens,
            "do_sample": False,
            "temperature": 0.0,
        },
        "process_results": Function("utils.process_results"),
        "metric_list": [
            {
                "metric": name,
                "aggregation": Function(f"utils.{name}"),
                "higher_is_better": higher,
            }
            for name, higher in METRICS
        ],
        "metadata": {"version": VERSION},
    }


def checkpoint_config(step: int) -> dict[str, Any]:
    """The task of checkpoint `step`: the main task on `questions_step<step>`."""
    return {
        "include": f"{TASK}.yaml",
        "task": checkpoint_task(step),
        "dataset_kwargs": {"config": f"questions_step{step}", "split": SPLIT},
    }


def group_config(steps: Iterable[int]) -> dict[str, Any]:
    """The group of every checkpoint's task (each reported on its own)."""
    return {
        "group": GROUP,
        "task": [checkpoint_task(step) for step in steps],
        "metadata": {"version": VERSION},
    }


def _dump(path: Path, config: dict[str, Any]) -> None:
    text = yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(text, encoding="utf-8")


def write_task_folder(parent: Path, steps: Sequence[int] = ()) -> Path:
    """Write (afresh) `<parent>/lm_eval_tasks/` with the task, the checkpoints' and `utils.py`."""
    folder = Path(parent) / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "utils.py").write_text(utils_source(), encoding="utf-8")
    _dump(folder / f"{TASK}.yaml", task_config())
    if steps:
        for step in steps:
            _dump(folder / f"{checkpoint_task(step)}.yaml", checkpoint_config(step))
        _dump(folder / f"{GROUP}.yaml", group_config(steps))
    return folder


def card_section(steps: Sequence[int], repo_id: str = "") -> str:
    """What the dataset card says of the tasks: the command from the published folder."""
    repo = repo_id or "<user>/<name>"
    tasks = TASK + (f",{GROUP}" if steps else "")
    lines = [
        "## Evaluating a model with lm-evaluation-harness",
        f"`{FOLDER}/` holds an [lm-evaluation-harness](https://github.com/EleutherAI/"
        f"lm-evaluation-harness) task, `{TASK}`: the test split, the paper's answer prompt, "
        "greedy decoding until a new line, and the benchmark's metrics computed by tipqa's "
        "scorer (EM-F1, PM-F1, precision, recall, accuracy and refusal rates on answerable "
        "and unanswerable questions)."
        + (
            f" `{GROUP}` groups one task per checkpoint, `{TASK}_step<N>` ({len(steps)} of them)."
            if steps
            else ""
        ),
        "tipqa is on no package index and the task's `utils.py` imports it: install it from "
        "its source repository, with its `lm-eval` extra.",
        "```bash\n"
        "git clone <the tipqa repository> tipqa-src\n"
        'pip install -e "tipqa-src[lm-eval]"\n'
        f"hf download {repo} --repo-type dataset --local-dir tip\n"
        "lm_eval --model hf --model_args pretrained=EleutherAI/pythia-1b \\\n"
        f"  --tasks {tasks} --include_path tip/{FOLDER} \\\n"
        "  --log_samples --output_path results\n"
        "python -m tipqa.lmeval_task predictions "
        '"$(ls -t results/*/samples_tip_triviaqa_2*.jsonl | head -n 1)" predictions.jsonl\n'
        "python -m tipqa.evaluate tip predictions.jsonl --out report\n"
        "```",
        "The last two lines give tipqa's full report (intervals, breakdowns) on the same "
        "answers. Refusal detection takes `--metadata '{\"tipqa_threshold\": 0.5}'` "
        "(also `tipqa_phrases`, `tipqa_embedding`, `tipqa_boxed`, `tipqa_prompt`).",
    ]
    return "\n\n".join(lines)
