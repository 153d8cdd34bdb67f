"""What the configuration check stops before any task runs, and the exit code it ends with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.tests_support import luigi_config

HIDE = "import sys; sys.modules[{name!r}] = None; "
RUN = "from luigi.cmdline import luigi_run; luigi_run(sys.argv[1:])"


def run_without(package: str, config: Path) -> subprocess.CompletedProcess[str]:
    """`luigi --module pipelines CreateDataset` in a Python where `package` cannot be imported."""
    code = HIDE.format(name=package) + RUN
    return subprocess.run(
        [sys.executable, "-c", code, "--module", "pipelines", "CreateDataset", "--local-scheduler"],
        cwd=config.parent,
        env={**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_missing_extra_stops_the_build_before_anything_runs(tmp_path: Path) -> None:
    config = luigi_config(tmp_path, judge={"backend": "openai", "base_url": "http://127.0.0.1:9"})
    result = run_without("openai", config)
    assert result.returncode == 35, "a scheduling error, with no [retcode] in the configuration"
    message = "[judge] backend 'openai' needs the 'openai' package: pip install 'tipqa[openai]'"
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "outputs").exists(), "nothing was computed"
