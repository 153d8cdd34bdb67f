"""The documentation's commands and configurations, checked against the code without running them.

`check_pages` reads every fenced block of README.md and docs/**.md (and the commands in inline
code) and checks what it can in-process:

- shell blocks: `python -m MODULE ARGS` (the module exists and its argument parser accepts
  ARGS: the command runs up to its argparse call and stops there), `tipqa COMMAND ARGS` (the
  same through the dispatcher), `luigi --module pipelines TASK --param ...` (Luigi's own
  command-line parser over the registered tasks), `luigid`, `lm_eval` (its parser, and task
  names that a build writes), `hf download` (the flags its help lists), `pip install` (every
  extra named is one of pyproject.toml), and that every other program is installed or a known
  outside tool;
- config blocks (`ini`): read by Luigi's config parser over the demo's `luigi.cfg` (the docs
  say "add to your luigi.cfg"), then by tipqa's strict reader (`tipqa.config.read_config`).

A block that cannot be checked here is marked `<!-- docs-check: skip (why) -->` on the line
before it and counted; a shell block in which nothing could be checked must be marked so.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import runpy
import shlex
import shutil
import sys
import tomllib
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^([ \t]*)```([\w-]*)[^\n]*\n(.*?)^\1```[ \t]*$", re.S | re.M)
SKIP = re.compile(r"<!--\s*docs-check:\s*skip\s*\(([^)]*)\)\s*-->\s*$")
RUNNABLE = "<!-- runnable -->"
INLINE = re.compile(r"(?<!`)`((?:python3? -m |tipqa |luigi --module |pip install )[^`]+)`(?!`)")
SHELL = {"bash", "sh", "shell", "console"}
CONFIG = {"ini", "cfg"}
BUILTINS = {"cd", "export", "source", ".", "set", "unset", "echo", "test", "[", "true", "false"}
BUILTINS |= {"until", "while", "do", "done", "sleep"}  # a shell loop waiting for a server
OUTSIDE = {
    "docker": "Docker",
    "curl": "curl",
    "ollama": "Ollama",
    "llama-server": "llama.cpp",
    "vllm": "vLLM's server (its own environment)",
    "label-studio": "Label Studio (its own venv)",
    "git": "git",
    "sudo": "root",
    "nice": "coreutils",
}
"""Programs of other projects that the docs use and that need not be installed here."""
FROM_EXTRAS = {"mkdocs": "docs", "mlcroissant": "croissant"}
"""Programs that an extra of pyproject.toml installs: checked against pyproject.toml (the extra
lists the program's package), whether or not the extra is installed here."""
OURS = ("tipqa", "benchmarks", "pipelines")
PLACEHOLDER = re.compile(r"\.\.\.|\*|<[^>]*>")
"""What marks inline code as an elided or templated command (`...`, `<run>`); a value written
in capitals (`FOLDER`) is checked as any value."""
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECTS = {">", ">>", "<", "2>", "2>>", "&>"}
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
EXTRAS = re.compile(r"\[([\w,\s-]+)\]")


@dataclass
class Block:
    """A fenced block of a page: where it is, its language and text, and its marker."""

    page: str
    line: int
    language: str
    text: str
    skip: str | None = None
    runnable: bool = False

    @property
    def where(self) -> str:
        """`page:line` of the block's opening fence."""
        return f"{self.page}:{self.line}"


@dataclass
class Report:
    """What the check found: counts by kind and outcome, and every problem."""

    counts: Counter[str] = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unchecked: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def blocks(page: Path, root: Path = ROOT) -> Iterator[Block]:
    """Every fenced block of `page`, with the marker on the line before it."""
    text = page.read_text(encoding="utf-8")
    name = str(page.relative_to(root))
    for found in FENCE.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        before = text[: found.start()].rstrip().rsplit("\n", 1)[-1].strip()
        indent = found.group(1)
        code = "\n".join(
            row[len(indent) :] if row.startswith(indent) else row
            for row in found.group(3).rstrip("\n").split("\n")
        )
        skip = SKIP.search(before)
        yield Block(
            name,
            line,
            found.group(2).lower(),
            code,
            skip.group(1).strip() if skip else None,
            before == RUNNABLE,
        )


def inline_commands(page: Path) -> list[str]:
    """The commands of ours written in inline code on `page` (`python -m tipqa.evaluate ...`)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [" ".join(found.split()) for found in INLINE.findall(text)]


def commands(script: str) -> Iterator[list[str]]:
    """The simple commands of a shell script: words, without assignments and redirections."""
    lines = script.replace("\\\n", " ").split("\n")
    delimiter = None
    for line in lines:
        if delimiter is not None:
            delimiter = None if line.strip() == delimiter else delimiter
            continue
        heredoc = HEREDOC.search(line)
        if heredoc:
            delimiter = heredoc.group(1)
            line = HEREDOC.sub("", line)
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            words = line.split()
        command: list[str] = []
        skip_next = False
        for word in [*words, ";"]:
            if skip_next:
                skip_next = False
            elif word in SEPARATORS:
                if command:
                    yield command
                command = []
            elif word in REDIRECTS:
                skip_next = True
            elif re.match(r"^\d?>", word) or (not command and ASSIGNMENT.match(word)):
                continue
            else:
                command.append(word)


class _Parsed(BaseException):
    """Raised by the patched argparse once the outermost parse succeeded."""


@contextlib.contextmanager
def stop_after_parsing() -> Iterator[None]:
    """Make argparse stop the program right after its outermost parse (errors exit 2 as usual)."""
    original = argparse.ArgumentParser.parse_known_args
    original_parse_args = argparse.ArgumentParser.parse_args
    depth = [0]

    def parse_known_args(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None):  # type: ignore[no-untyped-def]
        depth[0] += 1
        try:
            parsed = original(self, args, namespace)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            raise _Parsed
        return parsed

    def parse_args(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None):  # type: ignore[no-untyped-def]
        depth[0] += 1
        try:
            parsed, extras = original(self, args, namespace)
        finally:
            depth[0] -= 1
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        if depth[0] == 0:
            raise _Parsed
        return parsed

    argparse.ArgumentParser.parse_known_args = parse_known_args  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_args = parse_args  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]
        argparse.ArgumentParser.parse_args = original_parse_args  # type: ignore[method-assign]


def parses(program: Callable[[], object], argv0: str, args: Sequence[str]) -> str | None:
    """None when `program` (run with `sys.argv = [argv0, *args]`) gets through its parser.

    Otherwise what went wrong: the parser's error, or the exception raised before parsing.
    """
    saved = sys.argv
    sys.argv = [argv0, *args]
    errors = io.StringIO()
    try:
        with (
            stop_after_parsing(),
            contextlib.redirect_stderr(errors),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            program()
    except _Parsed:
        return None
    except SystemExit as exit:
        if exit.code in (0, None):
            return None
        message = errors.getvalue().strip().splitlines()
        return message[-1] if message else f"exited {exit.code}"
    except Exception as exc:  # a module that fails to import or run is the finding
        return f"{type(exc).__name__}: {exc}"
    finally:
        sys.argv = saved
    return "it ran without parsing any arguments"


@functools.cache
def extra_requirements() -> dict[str, tuple[str, ...]]:
    """The extras pyproject.toml declares, each with its requirements."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {name: tuple(reqs) for name, reqs in project["optional-dependencies"].items()}


def extras() -> frozenset[str]:
    """The extras pyproject.toml declares."""
    return frozenset(extra_requirements())


def check_from_extra(program: str) -> str | None:
    """A program an extra installs: that extra must list the program's package."""
    extra = FROM_EXTRAS[program]
    packages = {re.split(r"[<>=!~\[; ]", req)[0] for req in extra_requirements().get(extra, ())}
    if program not in packages:
        return (
            f"{program!r} comes from the extra {extra!r}, which does not list it in pyproject.toml"
        )
    return None


def check_pip(args: list[str]) -> str | None:
    """`pip install ...`: every extra of tipqa named must be one pyproject.toml declares."""
    if args[:1] != ["install"]:
        return None
    for target in args[1:]:
        if target.startswith("-") or not ("tipqa" in target or target.startswith(".")):
            continue
        found = EXTRAS.search(target)
        named = {name.strip() for name in found.group(1).split(",")} if found else set()
        unknown = sorted(named - extras())
        if unknown:
            return f"no extra {', '.join(unknown)} in pyproject.toml (extras: {sorted(extras())})"
    return None


def check_module(module: str, args: list[str]) -> str | None:
    """`python -m MODULE ARGS`: ours must exist and parse ARGS; others need only exist."""
    import importlib.util

    top = module.split(".")[0]
    if top not in OURS and importlib.util.find_spec(top) is None:
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        return f"no module {module}: {exc}"
    if spec is None:
        return f"no module {module}"
    if top not in OURS or not args:
        return None
    main = (
        importlib.util.find_spec(f"{module}.__main__") if spec.submodule_search_locations else spec
    )
    source = Path(main.origin).read_text() if main is not None and main.origin else ""
    if not any(parser in source for parser in ("argparse", "arguments(")):
        return f"{module} parses no arguments with argparse: the check would run it"

    def run() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the package imported it
            runpy.run_module(module, run_name="__main__", alter_sys=True)

    return parses(run, module, args)


def check_tipqa(args: list[str]) -> str | None:
    """`tipqa COMMAND ARGS`: a command of the dispatcher, whose parser accepts ARGS."""
    from tipqa.__main__ import BUILD, COMMANDS, PREFIX, command_run, luigi_argv

    if not args or args[0].startswith("-") or args[0].isupper():
        return None
    name, rest = args[0], args[1:]
    if name == BUILD:
        return parses(lambda: luigi_argv(rest), "tipqa build", rest) or check_luigi(
            luigi_argv(rest)
        )
    if name not in COMMANDS:
        return f"tipqa has no command {name!r} (commands: {BUILD}, {', '.join(COMMANDS)})"
    if not rest:
        return None
    try:
        run = command_run(name)
    except SystemExit as exit:
        return f"tipqa {name}: {exit.code}"
    return parses(lambda: run([*PREFIX.get(name, []), *rest]), f"tipqa {name}", rest)


def check_luigi(args: list[str]) -> str | None:
    """`luigi --module pipelines TASK ...`: Luigi's parser knows the task and every parameter."""
    from luigi.cmdline_parser import CmdlineParser

    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            CmdlineParser(args)
    except SystemExit as exit:
        if exit.code in (0, None):
            return None
        return errors.getvalue().strip().splitlines()[-1]
    except Exception as exc:  # an unknown task is Luigi's TaskClassNotFoundException
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return None


def check_luigid(args: list[str]) -> str | None:
    """`luigid ...`: its own parser accepts the flags."""
    import luigi.cmdline

    return parses(lambda: luigi.cmdline.luigid(args), "luigid", args)


def check_lm_eval(args: list[str]) -> str | None:
    """`lm_eval ...`: every task is one a build writes; installed, its parser takes the flags."""
    import importlib.util

    from tipqa.lmeval_task.task_files import GROUP, TASK

    if "--tasks" in args:
        named = args[args.index("--tasks") + 1].split(",")
        if GROUP in named:
            return f"--tasks {GROUP}: the group exists only with a [training_order]"
        unknown = [task for task in named if task != TASK]
        if unknown:
            return f"--tasks {', '.join(unknown)}: a build writes only {TASK}"
    if importlib.util.find_spec("lm_eval") is None:
        return None
    from lm_eval._cli import HarnessCLI

    return parses(lambda: HarnessCLI().parse_args(), "lm_eval", args)


@functools.cache
def help_text(program: str, *subcommand: str) -> str:
    """The `--help` of an installed program's (sub)command, run in-process where it can be."""
    if program == "hf":
        from huggingface_hub.cli.hf import main

        out = io.StringIO()
        saved = sys.argv
        sys.argv = [program, *subcommand, "--help"]
        try:
            with (
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(io.StringIO()),
                contextlib.suppress(SystemExit),
            ):
                main()
        finally:
            sys.argv = saved
        return out.getvalue()
    return ""


def check_hf(args: list[str]) -> str | None:
    """`hf COMMAND --flag ...`: every flag is one its help lists."""
    if not args:
        return None
    text = help_text("hf", args[0])
    if not text:
        return f"hf has no command {args[0]!r}"
    flags = [arg.split("=")[0] for arg in args[1:] if arg.startswith("--")]
    missing = [flag for flag in flags if not re.search(re.escape(flag) + r"\b", text)]
    return f"hf {args[0]}: no option {', '.join(missing)}" if missing else None


def program_name(word: str) -> str:
    """A command's program as the checks know it (`.venv-vllm/bin/python` is `python`)."""
    return word if word == "." else Path(word).name


CHECKS: dict[str, Callable[[list[str]], str | None]] = {
    "pip": check_pip,
    "pip3": check_pip,
    "tipqa": check_tipqa,
    "luigi": check_luigi,
    "luigid": check_luigid,
    "lm_eval": check_lm_eval,
    "lm-eval": check_lm_eval,
    "hf": check_hf,
}


def check_command(words: list[str]) -> tuple[bool, str | None]:
    """(checked, problem) of one simple command."""
    program, args = program_name(words[0]), words[1:]
    if program in ("python", "python3"):
        if args[:1] == ["-m"] and len(args) > 1:
            return True, check_module(args[1], args[2:])
        return False, None
    if program in CHECKS:
        return True, CHECKS[program](args)
    if program in FROM_EXTRAS:
        return True, check_from_extra(program)
    if program in BUILTINS or program in OUTSIDE or "/" in words[0]:
        return False, None
    if shutil.which(program) is None:
        return True, f"no program {program!r} is installed (nor is it a known outside tool)"
    return False, None


def check_shell(block: Block, report: Report) -> None:
    """Every simple command of a shell block; a block with nothing checkable must be marked."""
    checked = 0
    for words in commands(block.text):
        done, problem = check_command(words)
        checked += done
        if problem:
            report.problems.append(f"{block.where}: `{' '.join(words)}`: {problem}")
    report.counts["commands checked"] += checked
    if not checked and not block.runnable:
        report.problems.append(
            f"{block.where}: nothing in this block can be checked here: mark it "
            "<!-- docs-check: skip (why) --> or write a command the check knows"
        )


@functools.cache
def demo_sections() -> dict[str, dict[str, str]]:
    """The demo luigi.cfg's sections, as Luigi reads them."""
    return read_ini((ROOT / "luigi.cfg").read_text())


def read_ini(text: str) -> dict[str, dict[str, str]]:
    """The sections of config text, read by Luigi's own parser."""
    from luigi.configuration import LuigiConfigParser

    parser = LuigiConfigParser()
    parser.read_string(text)
    return {name: dict(parser.items(name)) for name in parser.sections()}


def check_config(block: Block, report: Report) -> None:
    """A config block, added to the demo's luigi.cfg, is read by tipqa's strict reader."""
    from tipqa.config import read_config
    from tipqa.core.errors import TipqaError

    try:
        added = read_ini(block.text)
    except Exception as exc:  # configparser's errors have no common base worth naming
        report.problems.append(f"{block.where}: not a config file: {exc}")
        return
    sections = {name: dict(values) for name, values in demo_sections().items()}
    for name, values in added.items():
        sections.setdefault(name, {}).update(values)
    try:
        read_config(sections)
    except TipqaError as exc:
        report.problems.append(f"{block.where}: {exc}")


def check_pages(root: Path = ROOT) -> Report:
    """Check every block (and inline command) of README.md and docs/ under `root`."""
    report = Report()
    for page in pages(root):
        for block in blocks(page, root):
            kind = (
                "shell"
                if block.language in SHELL
                else "config"
                if block.language in CONFIG
                else "other"
            )
            if kind == "other":
                report.counts["other blocks (not commands or configuration)"] += 1
                continue
            if block.skip is not None:
                report.counts[f"{kind} blocks skipped"] += 1
                report.skipped.append((block.where, block.skip))
                continue
            report.counts[f"{kind} blocks checked"] += 1
            (check_shell if kind == "shell" else check_config)(block, report)
        for command in inline_commands(page):
            name = str(page.relative_to(root))
            if PLACEHOLDER.search(command):
                report.counts["inline commands with placeholders (not checked)"] += 1
                continue
            for words in commands(command):
                done, problem = check_command(words)
                report.counts["inline commands checked"] += done
                if problem:
                    report.problems.append(f"{name} (inline): `{command}`: {problem}")
    return report


RUN_PLACEHOLDERS = {"<name>": "demo", "<run>": "demo", "<pool>": "dev", "<split>": "test"}
OPTIONAL_OUTPUTS = {
    "llm-cache/": "written by an LLM backend (the demo's are rules)",
    "index/token-sample/": "written by PreviewCost",
    "export/": "written by tipqa export",
    "flips/": "written by tipqa flips",
    "publish/": "written by PublishDataset",
    "annotation/": "written by the annotation tasks",
    "evaluate/": "written by Evaluate",
    "pools/dev/cost_preview.json": "written by PreviewCost",
    "pools/dev/boundary/": "written with a [training_order]",
    "../training_index/": "written with a [training_order]",
}
"""Outputs a page names that the demo build does not write, and what writes them."""
OUTPUT_PATH = re.compile(r"`outputs/(demo|<run>|<name>)/([^`\s]*)`")
TREE_NAME = re.compile(r"[\w.<>*-]+(?:/[\w.<>*-]+)*/?")
COMMENT_COLUMN = 20


def _resolved(path: str) -> str:
    for placeholder, value in RUN_PLACEHOLDERS.items():
        path = path.replace(placeholder, value)
    return path.replace("NNNNN", "*")


def output_tree(text: str) -> list[str]:
    """The paths (relative to the run folder) of the outputs page's file tree."""
    tree = next(
        (found.group(3) for found in FENCE.finditer(text) if found.group(3).startswith("outputs/")),
        "",
    )
    paths: list[str] = []
    parents: dict[int, str] = {}
    for row in tree.split("\n")[1:]:
        indent = len(row) - len(row.lstrip())
        entry = re.split(r"\s{2,}", row.strip())[0]
        if not row.strip() or indent >= COMMENT_COLUMN or entry.split()[0] in ("and", "every"):
            continue
        parent = parents.get(indent - 2, "") if indent > 0 else "../"
        names = TREE_NAME.findall(entry)
        for name in names:
            name = name.removeprefix("outputs/") if indent == 0 else name
            paths.append(parent + name)
            if name.endswith("/"):
                parents[indent] = parent + name
    return paths


def documented_outputs(root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, path in the demo run folder) of every output the pages say a run writes."""
    found = []
    outputs_page = root / "docs" / "outputs.md"
    found += [("docs/outputs.md (tree)", path) for path in output_tree(outputs_page.read_text())]
    for page in pages(root):
        name = str(page.relative_to(root))
        found += [(name, path) for _, path in OUTPUT_PATH.findall(page.read_text()) if path]
    return found


def check_outputs(run: Path, root: Path = ROOT) -> Report:
    """Every output the pages name is in the demo build's run folder `run` (or is optional)."""
    report = Report()
    for where, path in documented_outputs(root):
        resolved = _resolved(path)
        if any(resolved.startswith(prefix) for prefix in OPTIONAL_OUTPUTS):
            report.counts["outputs of other tasks or settings (not checked)"] += 1
            continue
        if "<" in resolved or not any(run.glob(resolved.rstrip("/") or ".")):
            report.problems.append(
                f"{where}: the demo build writes no {path} (looked for {resolved})"
            )
        else:
            report.counts["outputs checked"] += 1
    return report
