"""lm-eval end to end, offline: the demo build's Hub folder (on the session's world and
indexes), `lm_eval --model hf` with a tiny random model made here, and the metrics it reports
equal to `python -m tipqa.evaluate`'s on the same generations (read from its logged samples).
tipqa's own commands run in this process (`run(argv)`); lm-eval, the system under test, runs as
its own command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.lmeval_model import refusing_model
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, run_luigi

from tipqa.evaluate import __main__ as evaluate
from tipqa.lmeval_task import __main__ as lmeval_task
from tipqa.lmeval_task import hooks
from tipqa.lmeval_task.task_files import FOLDER, METRICS, TASK

pytestmark = [pytest.mark.slow, pytest.mark.needs("lm_eval")]


def offline(home: Path) -> dict[str, str]:
    """The environment of a user without network: the Hub and datasets offline."""
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(home),
        "TOKENIZERS_PARALLELISM": "false",
    }


def test_lm_eval_reports_the_metrics_of_tipqa(
    tmp_path: Path, demo_builds: DemoBuilds, capsys: pytest.CaptureFixture[str]
) -> None:
    config = luigi_config(tmp_path)
    seed_run(tmp_path, demo_builds())
    built = run_luigi(config, "CreateDataset")
    assert built.returncode == 0, built.stderr[-3000:]
    hub = tmp_path / "outputs" / "t" / "hub"
    assert (tmp_path / "outputs" / "t" / "splits" / FOLDER / "tip_triviaqa.yaml").is_file()
    env = offline(tmp_path / "hf")
    docs = hooks.load_docs(hub)["test"]
    refuse = set(range(0, len(docs), 2))
    model = refusing_model(tmp_path / "model", [d["prompt"] for d in docs], refuse)
    results = tmp_path / "results"
    command = [sys.executable, "-m", "lm_eval", "--model", "hf"]
    command += ["--model_args", f"pretrained={model}", "--device", "cpu", "--batch_size", "8"]
    command += ["--tasks", TASK, "--include_path", str(hub / FOLDER)]
    command += ["--log_samples", "--output_path", str(results)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refusal_rate_unanswerable" in done.stdout
    [scores] = results.glob("*/results_*.json")
    [samples] = results.glob(f"*/samples_{TASK}_*.jsonl")
    reported = json.loads(scores.read_text())["results"][TASK]

    predictions = tmp_path / "predictions.jsonl"
    assert lmeval_task.run(["predictions", str(samples), str(predictions)]) == 0
    answers = [json.loads(line)["prediction"] for line in predictions.open()]
    assert [i for i, text in enumerate(answers) if not text.strip()] == sorted(refuse)
    capsys.readouterr()
    assert evaluate.run([str(hub), str(predictions), "--bootstrap", "0"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert {name: reported[f"{name},none"] for name, _ in METRICS} == {
        name: metrics[name] for name, _ in METRICS
    }
    assert metrics["questions"] == len(docs) and 0 < metrics["pm_f1"] < 1
    assert 0 < metrics["refusal_rate_answerable"] < 1
    assert 0 < metrics["refusal_rate_unanswerable"] < 1
