"""Lucene 8 as the peer of the token index: build and query `lucene/TipqaLucene.java`.

The program is compiled here with the Lucene jars of Debian's `liblucene8-java` (or the
folder named by TIPQA_LUCENE_JARS), and run as a child process. Queries are sent as the
request bodies of `tipqa.indexes.es.queries` (what ElasticsearchTokenIndex sends), written as
s-expressions that the program turns into the same Lucene queries Elasticsearch builds.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tipqa.core.records import TokenHit
from tipqa.indexes.es import mappings, queries
from tipqa.indexes.token_index.base import TokenResult

SOURCE = Path(__file__).with_name("lucene") / "TipqaLucene.java"
JAR_NAMES = ("lucene-core", "lucene-analyzers-common")
HEAP = "-Xmx4g"


def jars() -> list[Path]:
    """The Lucene core and analyzers-common jars (empty when not found)."""
    folder = Path(os.environ.get("TIPQA_LUCENE_JARS", "/usr/share/java"))
    found = []
    for name in JAR_NAMES:
        candidates = sorted(folder.glob(f"{name}-[0-9]*.jar")) or sorted(folder.glob(f"{name}.jar"))
        if not candidates:
            return []
        found.append(candidates[-1])
    return found


def available() -> bool:
    """True when java, javac and the jars are here."""
    return bool(jars()) and all(shutil.which(tool) for tool in ("java", "javac"))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def to_sexpr(query: dict[str, Any]) -> str:
    """An Elasticsearch bool/match_phrase query as the s-expression the program reads."""
    ((kind, spec),) = query.items()
    if kind == "match_phrase":
        ((field, options),) = spec.items()
        if field != queries.TEXT_FIELD or set(options) != {"query"}:
            raise ValueError(f"unexpected match_phrase {spec!r}")
        return f"( phrase {_b64(options['query'])} )"
    if kind != "bool" or not set(spec) <= {"must", "should", "minimum_should_match"}:
        raise ValueError(f"unexpected query {query!r}")
    default = 0 if "must" in spec else 1
    parts = [f"( bool {spec.get('minimum_should_match', default)}"]
    for occur in ("must", "should"):
        if spec.get(occur):
            parts.append(f"( {occur} " + " ".join(to_sexpr(q) for q in spec[occur]) + " )")
    return " ".join([*parts, ")"])


def query_line(keywords: list[str], aliases: list[str], k: int) -> str:
    """The s-expression of the Elasticsearch body of one token query (aliases needed)."""
    body = queries.token_search_body(queries.phrases(keywords), queries.phrases(aliases), k)
    return to_sexpr(body["query"])


class Lucene:
    """The compiled program, with its analysis file, in a work folder."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
        self.classes = workdir / f"lucene-classes-{digest}"
        self.classpath = os.pathsep.join([str(self.classes), *map(str, jars())])
        if not (self.classes / "TipqaLucene.class").is_file():
            building = workdir / f".lucene-classes-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            command = ["javac", "-cp", self.classpath, "-d", str(building), str(SOURCE)]
            subprocess.run(command, check=True, capture_output=True, text=True)
            os.replace(building, self.classes)
        self.analysis = workdir / "lucene-analysis.txt"
        analysis = mappings.analysis_settings()
        sigma = analysis["char_filter"]["tipqa_final_sigma"]
        mapped_from, mapped_to = (p.strip() for p in mappings.DOTTED_CAPITAL_I_RULE.split("=>"))
        values = (mappings.TOKEN_PATTERN, sigma["pattern"], "\u03c2", mapped_from, mapped_to)
        self.analysis.write_text("\n".join(map(_b64, values)) + "\n")

    def command(self, *args: str) -> list[str]:
        """The java command line of one run of the program."""
        return ["java", HEAP, "-cp", self.classpath, "TipqaLucene", *args]

    def index_command(self, folder: Path, files: list[Path], threads: int) -> list[str]:
        """Index `files` (corpus JSONL) into `folder` with `threads` indexing threads."""
        return self.command(
            "index", str(folder), str(threads), str(self.analysis), *map(str, files)
        )

    def search(
        self, folder: Path, asked: list[tuple[list[str], list[str]]], k: int, repeats: int
    ) -> tuple[list[TokenResult], list[tuple[float, float]]]:
        """Results (first k, exact totals), and the (wall, CPU) milliseconds of every timed pass
        of every query."""
        lines = self.workdir / "lucene-queries.txt"
        lines.write_text("".join(query_line(kw, al, k) + "\n" for kw, al in asked))
        run = subprocess.run(
            self.command(
                "search", str(folder), str(self.analysis), str(lines), str(k), str(repeats)
            ),
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise RuntimeError(f"Lucene search failed: {run.stderr[-2000:]}")
        output = run.stdout.strip().split("\n")
        results, timings = [], []
        for line in output[: len(asked)]:
            total, relation, *hits = line.split(" ")
            if relation != "EQUAL_TO":
                raise RuntimeError(f"Lucene total is not exact: {line[:200]}")
            parsed = [TokenHit(h.rsplit("=", 1)[0], float(h.rsplit("=", 1)[1])) for h in hits]
            results.append(TokenResult(int(total), parsed))
        for line in output[len(asked) :]:
            for pair in line.split()[1:]:
                wall, cpu = pair.split(",")
                timings.append((int(wall) / 1000, int(cpu) / 1000))
        return results, timings
