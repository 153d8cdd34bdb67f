"""`tipqa audit RUN`: bad input ends in one line and exit status 2, before anything is judged."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tests_support import luigi_config

from tipqa.__main__ import main
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step


def error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `tipqa audit ARGV` fails with (status 2)."""
    with pytest.raises(SystemExit) as exited:
        main(["audit", *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    return err


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A demo build's config file, its run folder made (nothing built)."""
    (tmp_path / "outputs" / "t").mkdir(parents=True)
    return luigi_config(tmp_path)


def test_a_run_that_does_not_exist(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture
) -> None:
    assert "no build here" in error([str(tmp_path / "gone"), "--config", str(config)], capsys)


@pytest.mark.parametrize("share", ["0", "1.5", "-0.1"])
def test_a_sample_outside_0_1(config: Path, share: str, capsys: pytest.CaptureFixture) -> None:
    run = str(config.parent / "outputs" / "t")
    said = error([run, "--config", str(config), "--sample", share], capsys)
    assert f"sample = {float(share)}: a share in (0, 1]" in said


def test_a_config_of_another_run(config: Path, capsys: pytest.CaptureFixture) -> None:
    other = config.parent / "outputs" / "other"
    other.mkdir()
    assert "the config's run is" in error([str(other), "--config", str(config)], capsys)


def test_another_build_s_questions(config: Path, capsys: pytest.CaptureFixture) -> None:
    run = RunLayout(config.parent / "outputs" / "t")
    StepStats(Step.PARTITION, provenance={"fingerprint": "another build"}).write(
        run.pool("dev").partition_stats
    )
    said = error([str(run.root), "--config", str(config), "--pool", "dev"], capsys)
    assert "pool 'dev' of this run was not partitioned by this configuration" in said
    assert "unknown question pool 'test'" in error(
        [str(run.root), "--config", str(config), "--pool", "test"], capsys
    )
