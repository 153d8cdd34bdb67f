"""Write the documentation's figures from a fresh demo build: `python docs/make_figures.py`.

Builds the offline demo (`luigi.cfg`) in a temporary folder, copies the build report's
`funnel.png` and `matches.png`, scores an illustrative predictions file with
`python -m tipqa.evaluate` and copies its `reliability.png`, all into `docs/assets/`.

The predictions are not a model's: a seeded illustrative system answers each answerable test
question with a confidence drawn uniformly, right with that probability, and refuses the
unanswerable ones half the time. They show the reliability diagram's layout, nothing more.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "docs" / "assets"
SEED = 0


def build_demo(folder: Path) -> Path:
    """Run the demo build in `folder` (its own copy of luigi.cfg); the run's folder."""
    shutil.copyfile(ROOT / "luigi.cfg", folder / "luigi.cfg")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", "CreateDataset"]
    subprocess.run([*command, "--local-scheduler"], cwd=folder, env=env, check=True)
    return folder / "outputs" / "demo"


def illustrative_predictions(split: Path, out: Path) -> Path:
    """The seeded illustrative system's predictions on the test split (see the docstring)."""
    rng = random.Random(SEED)
    with open(split / "questions.jsonl", encoding="utf-8") as rows, open(out, "w") as handle:
        for line in rows:
            row = json.loads(line)
            confidence = rng.random()
            if row["label"] == "answerable":
                text = row["answer"] if rng.random() < confidence else "somewhere else"
            else:
                text = "I don't know" if rng.random() < 0.5 else "somewhere else"
            record = {"id": row["id"], "prediction": text, "confidence": confidence}
            handle.write(json.dumps(record) + "\n")
    return out


def main() -> None:
    """Build, score and copy the three figures."""
    ASSETS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tipqa-figures-") as folder:
        run = build_demo(Path(folder))
        for name in ("funnel.png", "matches.png"):
            shutil.copyfile(run / "report" / name, ASSETS / name)
        split = run / "splits" / "test"
        predictions = illustrative_predictions(split, Path(folder) / "predictions.jsonl")
        scores = Path(folder) / "scores"
        evaluate = [sys.executable, "-m", "tipqa.evaluate", str(split), str(predictions)]
        subprocess.run([*evaluate, "--out", str(scores)], check=True, stdout=subprocess.DEVNULL)
        shutil.copyfile(scores / "reliability.png", ASSETS / "reliability.png")
    print(f"wrote funnel.png, matches.png and reliability.png to {ASSETS}")


if __name__ == "__main__":
    main()
