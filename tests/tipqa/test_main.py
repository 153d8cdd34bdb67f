"""The `tipqa` command: its help, each command's help, the build's Luigi command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipqa.__main__ import BUILD, COMMANDS, lock_folder, luigi_argv, main


def exit_code(argv: list[str]) -> int | str | None:
    """The status `tipqa ARGV` exits with."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return exited.value.code


def test_the_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(f"  {name} " in shown for name in [BUILD, *COMMANDS])


def explorer_present() -> bool:
    """True when the tipqa.report package (with its explorer) is installed."""
    try:
        __import__("tipqa.report.__main__")
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("name", [BUILD, *COMMANDS])
def test_every_command_has_its_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    if name == "explore" and not explorer_present():
        code = exit_code([name, "--help"])
        assert isinstance(code, str) and "python -m tipqa.report explore" in code
        return
    assert exit_code([name, "--help"]) == 0
    shown = capsys.readouterr().out
    assert f"usage: tipqa {name} " in shown
    described = shown.split("\n\n")[1]
    assert not described.startswith(("positional arguments", "options")), "no description"


def test_an_unknown_command_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["evaluat"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_bad_input_of_a_command_exits_2_with_one_line(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code(["export", str(tmp_path), "--format", "kuq"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["config-reference", "--write", "{tmp}/page.md"],
        ["config-reference", "--write-schemas", "{tmp}/absent.md"],
        ["rerun-table", "--write", "{tmp}/absent.md"],
    ],
    ids=["no-markers", "no-page", "no-table-page"],
)
def test_a_write_to_a_page_it_cannot_write_is_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "page.md").write_text("# a page without the reference's markers\n")
    assert exit_code([arg.format(tmp=tmp_path) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path}/") and err.count("\n") == 1, err


REPEATED = {
    "section": "[build]\nname = t\n\n[judge]\nbackend = rules\n\n[judge]\nbackend = rules\n",
    "key": "[build]\nname = t\nk1 = 20\nk1 = 30\n",
}


@pytest.mark.parametrize("repeated", sorted(REPEATED))
def test_a_section_or_key_written_twice_is_one_line(repeated: str, tmp_path: Path) -> None:
    """Luigi reads `luigi.cfg` as it is imported; tipqa's commands read it first."""
    (tmp_path / "luigi.cfg").write_text(REPEATED[repeated])
    tipqa = [sys.executable, "-m", "tipqa"]
    env = {k: v for k, v in os.environ.items() if k != "LUIGI_CONFIG_PATH"}
    for argv, status in (["build"], 35), (["explore", "outputs/t", "--config", "luigi.cfg"], 2):
        out = subprocess.run(
            [*tipqa, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == status, out.stderr
        assert out.stderr.startswith("error: luigi.cfg, line ") and out.stderr.count("\n") == 1
        assert f"written twice in {'this file' if repeated == 'section' else '[build]'}" in (
            out.stderr
        )


def test_the_help_imports_no_command() -> None:
    code = (
        "import sys\nfrom tipqa.__main__ import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('tipqa.', 'luigi'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    version = "'tipqa.core', 'tipqa.core.version'"
    assert out.stdout.strip().splitlines()[-1] == f"['tipqa.__main__', {version}]"


def test_build_is_the_one_machine_luigi_command_line() -> None:
    lock = ["--lock-pid-dir", lock_folder()]
    assert luigi_argv([]) == ["--module", "pipelines", "CreateDataset", "--local-scheduler", *lock]
    assert luigi_argv(["--task", "PreviewCost", "--pool", "dev", "--workers", "2"]) == [
        "--module", "pipelines", "PreviewCost", "--local-scheduler", *lock, "--pool", "dev",
        "--workers", "2",
    ]  # fmt: skip
    central = luigi_argv(["--scheduler-host", "127.0.0.1"])
    assert "--local-scheduler" not in central
    assert luigi_argv(["--local-scheduler"]).count("--local-scheduler") == 1


def test_an_unknown_task_exits_2_naming_the_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LUIGI_CONFIG_PATH", raising=False)
    assert exit_code([BUILD, "--task", "NoSuchTask", "--no-lock"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: No task NoSuchTask: --task names a task of pipelines")
        and err.count("\n") == 1
    )
    assert "CreateDataset, " in err and "Evaluate" in err


def test_builds_in_two_folders_take_two_locks_and_two_in_one_folder_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Luigi's lock is keyed on the command line alone: `luigi ... CreateDataset` in a second
    folder would exit 10 while the first runs. `tipqa build` keys it on the folder and config."""
    monkeypatch.delenv("LUIGI_CONFIG_PATH", raising=False)
    locks = []
    for name in ("a", "b", "a"):
        (tmp_path / name).mkdir(exist_ok=True)
        monkeypatch.chdir(tmp_path / name)
        argv = luigi_argv([])
        locks.append(argv[argv.index("--lock-pid-dir") + 1])
    assert locks[0] != locks[1] and locks[0] == locks[2]
    monkeypatch.setenv("LUIGI_CONFIG_PATH", "other.cfg")
    assert lock_folder() != locks[0]
    assert "--lock-pid-dir" not in luigi_argv(["--no-lock"])
    assert luigi_argv(["--lock-pid-dir", "/tmp/mine"]).count("--lock-pid-dir") == 1
