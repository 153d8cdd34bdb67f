"""The Elasticsearch analyzer's patterns reproduce tipqa.core.text.tokenize.

The analyzer (char filters, pattern tokenizer, lowercase filter) is run here on its own
patterns: with Python's `regex` module, and with java.util.regex (the engine inside
Elasticsearch) when `java` is on the PATH.
"""

from __future__ import annotations

import base64
import random
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from tipqa.core.text import tokenize
from tipqa.indexes.es import mappings

regex = pytest.importorskip("regex")

TRICKY = [
    "Hello, World! It's 3.14 o'clock_now; e-mail: a@b.cd",
    "snake_case and CamelCase and x2y and 2024-11-30",
    "Caf\u00e9 vs Cafe\u0301 (combining accent splits the token)",
    "na\u00efve \u00dcber Stra\u00dfe \u0130stanbul \u0130\u0130 i\u0307",
    "\u039f\u0394\u039f\u03a3 \u0391\u03a3.\u0392 \u03a3\u0391 \u02b0\u03a3",
    "\u0391\u03a3\u03a3 \u03a3 \u0391\u03a3' \u0391\u03a3'\u0392 a\u03a3",
    "\u0391\u03a3\u0301 \u0391\u0301\u03a3 \u0391\u00ad\u03a3\u00adb",
    "\u0391" + "\u0301" * 5 + "\u03a3 \u0391\u03a3" + "\u0301" * 3 + "\u0392",
    "\u4e2d\u6587\u5b57 \u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8 \ud55c\uad6d\uc5b4",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0661\u0662\u0663",
    "\u0939\u093f\u0928\u094d\u0926\u0940",
    "roman \u2160\u2161 \u00bd \u00b2 superscripts \u2460 circled \u24b6\u24d0",
    "a" * 40 + " " + "b" * 41 + " c " + "d" * 100 + " e",
    "x " + "\U0001d400" * 41 + " ok " + "\U0001d400" * 40 + " " + "a\U0001d400" * 21,
    "emoji \U0001f600 between\U0001f600words tab\tnew\nline\r\n",
    "\u00c5ngstr\u00f6m \u212b \ufb01ne ligature \u1e9e capital sharp s",
    "",
    "   ...   ",
]

ALPHABET = (
    "aZ9_ .,'-:\u00b7\u2019\u00ad\u0301\u02b0\u0130\u0131\u03a3\u03c3\u03c2\u0391\u03b1"
    "\u00df\u1e9e\u2160\u00bd\u4e2d\U0001d400\U0001f600\u0627\u0661\t\n"
)


def fuzz_strings(count: int, seed: int = 7) -> list[str]:
    """Random strings over an alphabet of troublesome characters (seeded)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(0, 30)
        text = "".join(rng.choice(ALPHABET) for _ in range(n))
        if rng.random() < 0.1:
            text += rng.choice("ab\U0001d400") * rng.randint(38, 43)
        out.append(text)
    return out


def analyze_with_regex_module(text: str) -> list[str]:
    """The analyzer chain of the index settings, run with Python's `regex` module."""
    analysis = mappings.analysis_settings()
    chain = analysis["analyzer"][mappings.ANALYZER]
    for name in chain["char_filter"]:
        spec = analysis["char_filter"][name]
        if spec["type"] == "mapping":
            for rule in spec["mappings"]:
                source, target = (part.strip() for part in rule.split("=>"))
                text = text.replace(source, target)
        else:
            pattern = regex.compile(spec["pattern"], regex.V1)
            text = pattern.sub(spec["replacement"], text)
    tokenizer = analysis["tokenizer"][chain["tokenizer"]]
    assert tokenizer["group"] == 0
    tokens = [m.group(0) for m in regex.finditer(tokenizer["pattern"], text, flags=regex.V1)]
    assert chain["filter"] == ["lowercase"]
    return ["".join("i" if c == "\u0130" else c.lower() for c in t) for t in tokens]


@pytest.mark.parametrize("text", TRICKY)
def test_regex_module_analysis_equals_tokenize(text: str) -> None:
    assert analyze_with_regex_module(text) == tokenize(text)


def test_regex_module_analysis_equals_tokenize_on_random_strings() -> None:
    for text in fuzz_strings(3000):
        assert analyze_with_regex_module(text) == tokenize(text), ascii(text)


def test_tricky_strings_exercise_the_special_cases() -> None:
    joined = [t for text in TRICKY for t in tokenize(text)]
    assert "\u03bf\u03b4\u03bf\u03c2" in joined  # final sigma
    assert "stanbul" in joined  # dotted capital I splits
    assert "a" * 40 in joined and "b" * 41 not in joined
    assert "\U0001d400" * 40 in joined and "\U0001d400" * 41 not in joined


def _same_category(char: str) -> bool:
    """True when Python's and the `regex` module's Unicode versions agree on the category."""
    category = unicodedata.category(char)
    return bool(regex.match(rf"\p{{gc={category}}}", char))


def test_character_classes_equal_pythons_casing_rules() -> None:
    """CASE_IGNORABLE and cased-not-ignorable match what str.lower() uses for final sigma."""
    ignorable = regex.compile(f"[{mappings.CASE_IGNORABLE}]", regex.V1)
    cased_only = regex.compile(f"[[{mappings.CASED}]&&[^{mappings.CASE_IGNORABLE}]]", regex.V1)
    mismatches = []
    for cp in range(0x20000):
        char = chr(cp)
        if cp == 0x3A3 or unicodedata.category(char) in ("Cn", "Cs") or not _same_category(char):
            continue
        python_cased_only = (char + "\u03a3").lower()[-1] == "\u03c2"
        python_ignorable = (
            not python_cased_only and ("\u0391" + char + "\u03a3").lower()[-1] == "\u03c2"
        )
        if python_cased_only != bool(cased_only.match(char)):
            mismatches.append(("cased", hex(cp)))
        if not python_cased_only and python_ignorable != bool(ignorable.match(char)):
            mismatches.append(("ignorable", hex(cp)))
    assert mismatches == []


JAVA_ANALYZER = r"""
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;

public class Analyze {
    static String dec(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }
    static String enc(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]));
        Pattern token = Pattern.compile(dec(lines.get(0)));
        Pattern sigma = Pattern.compile(dec(lines.get(1)));
        String replacement = dec(lines.get(2));
        String from = dec(lines.get(3));
        String to = dec(lines.get(4));
        StringBuilder out = new StringBuilder();
        for (String line : lines.subList(5, lines.size())) {
            String text = sigma.matcher(dec(line).replace(from, to)).replaceAll(replacement);
            Matcher m = token.matcher(text);
            List<String> tokens = new ArrayList<>();
            while (m.find()) {
                StringBuilder low = new StringBuilder();
                m.group().codePoints()
                    .forEach(cp -> low.appendCodePoint(Character.toLowerCase(cp)));
                tokens.add(enc(low.toString()));
            }
            out.append(String.join(" ", tokens)).append('\n');
        }
        System.out.print(out);
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on the PATH")
def test_java_regex_analysis_equals_tokenize(tmp_path: Path) -> None:
    """The same chain with java.util.regex and Character.toLowerCase, as Lucene runs it."""
    analysis = mappings.analysis_settings()
    sigma = analysis["char_filter"]["tipqa_final_sigma"]
    source, target = (p.strip() for p in mappings.DOTTED_CAPITAL_I_RULE.split("=>"))
    texts = TRICKY + fuzz_strings(1500, seed=11)

    def enc(text: str) -> str:
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    header = [mappings.TOKEN_PATTERN, sigma["pattern"], sigma["replacement"], source, target]
    (tmp_path / "input.txt").write_text("\n".join(enc(t) for t in header + texts) + "\n")
    (tmp_path / "Analyze.java").write_text(JAVA_ANALYZER)
    run = subprocess.run(
        ["java", str(tmp_path / "Analyze.java"), str(tmp_path / "input.txt")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    for text, line in zip(texts, lines, strict=False):
        tokens = [base64.b64decode(t).decode("utf-8") for t in line.split()]
        assert tokens == tokenize(text), ascii(text)
