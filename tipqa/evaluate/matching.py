"""Answer normalisation and matching: TriviaQA's exact match and SQuAD 2.0's token-overlap F1.

Normalisation follows TriviaQA's official evaluation: lower case, underscores and punctuation
(ASCII punctuation plus the typographic quotes ‘ ’ ´ `) replaced by spaces, the articles "a",
"an" and "the" removed, whitespace collapsed. The token F1 of PM-F1 is SQuAD 2.0's (the overlap
of the two bags of tokens), computed on the same normalised text, so that an exact match always
has F1 = 1. A prediction is scored against the gold answer and every alias; the best wins.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

PUNCTUATION = frozenset(string.punctuation + "‘’´`")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """TriviaQA's normal form of an answer (see the module docstring)."""
    lowered = text.replace("_", " ").lower()
    spaced = "".join(" " if char in PUNCTUATION else char for char in lowered)
    return " ".join(_ARTICLES.sub(" ", spaced).split())


def unwrap_text(answer: str) -> str:
    """The answer inside a LaTeX text command that wraps it whole (`\\text{Paris}`: Paris)."""
    stripped = answer.strip()
    for command in ("\\text{", "\\mathrm{", "\\textbf{"):
        if stripped.startswith(command) and stripped.endswith("}"):
            return stripped[len(command) : -1].strip()
    return stripped


def exact_match(prediction: str, golds: Iterable[str]) -> bool:
    """True when the normalised prediction equals the normal form of any gold string."""
    predicted = normalize_answer(prediction)
    return any(predicted == normalize_answer(gold) for gold in golds)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD 2.0's F1 of the two normalised token bags (1 when both are empty, 0 when one is)."""
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: str, golds: Iterable[str]) -> float:
    """The highest token F1 of the prediction against any gold string (0 without golds)."""
    return max((token_f1(prediction, gold) for gold in golds), default=0.0)
