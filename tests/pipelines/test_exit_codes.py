"""How a `luigi` run ends: Ctrl-C on a build on one machine says it was interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests_support import luigi_config

from tipqa.core.cli import INTERRUPTED
from tipqa.core.layout import RunLayout


def test_ctrl_c_says_interrupted_and_the_summary_says_not_finished(tmp_path: Path) -> None:
    config = luigi_config(tmp_path, core={"log_level": "WARNING", "no_lock": "true"})
    run = tmp_path / "outputs" / "t"
    run.mkdir(parents=True)
    (run / "summary.md").write_text("# Build t\n\n- pool **dev**: an earlier build\n")
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", "CreateDataset"]
    build = subprocess.Popen(
        [*command, "--local-scheduler"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not RunLayout(run).world.stats.exists() and build.poll() is None:
        assert time.monotonic() < deadline, "the build made no demo world in 120 s"
        time.sleep(0.2)
    build.send_signal(signal.SIGINT)
    _, stderr = build.communicate(timeout=120)
    assert build.returncode == INTERRUPTED, stderr[-3000:]
    assert "tipqa: CreateDataset interrupted (Ctrl-C)" in stderr
    assert "Traceback" not in stderr and "another client" not in stderr
    assert "not finished" in (run / "summary.md").read_text()
