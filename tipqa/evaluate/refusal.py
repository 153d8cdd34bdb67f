"""Refusal detection as in section 6.3 of the paper, plus the boxed-answer parse of UA-Bench.

A response is read in this order; the first rule that applies decides:

1. the system's own signal: `refused` true is a refusal, false is an answer (no inference);
2. the content of the last `\\boxed{...}` (its braces matched; a last box that never closes is
   no box), when the response has one, stands for the response: a box containing `I don't
   know` or `<MODEL_UNCERTAIN>` is a model-uncertainty refusal, one containing
   `<DATA_UNCERTAIN>` a data-uncertainty refusal (`box_label`, UA-Bench's reading), anything
   else is read on by the rules below;
3. an empty response is a refusal (the paper lists the empty string among explicit signals);
4. a response whose normal form equals that of a refusal phrase is a refusal;
5. a response whose embedding has cosine similarity above the threshold `t` with one of the
   refusal phrases' embeddings is a refusal.

The phrase list is a file (`refusal-phrases.txt` ships with tipqa). The embedder is any object of
the `Embedder` protocol; texts and phrases are both encoded as queries (symmetric similarity).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, setting
from tipqa.evaluate.matching import normalize_answer, unwrap_text
from tipqa.indexes.embedders.base import Embedder

SHIPPED_PHRASES = "refusal-phrases.txt"
# Measured by benchmarks/refusal_threshold.py with all-MiniLM-L6-v2: at 0.425, 38 of 40 authored
# refusal paraphrases were caught and none of 60 authored answers (hedged ones included) misread.
DEFAULT_THRESHOLD = 0.425
BOX = "\\boxed{"
MODEL_UNCERTAIN, DATA_UNCERTAIN = "MODEL_UNCERTAIN", "DATA_UNCERTAIN"
"""UA-Bench's labels of a refusal: the question is beyond the model, or ill-posed."""
MODEL_UNCERTAIN_TOKENS = ("i don't know", "<model_uncertain>")
"""What a box holds (lower-cased) when it says MODEL_UNCERTAIN."""
DATA_UNCERTAIN_TOKENS = ("<data_uncertain>",)
"""What a box holds (lower-cased) when it says DATA_UNCERTAIN."""
KINDS = (
    "explicit",
    "missing",
    "boxed_model_uncertain",
    "boxed_data_uncertain",
    "empty",
    "phrase",
    "embedding",
)


@dataclass(frozen=True)
class RefusalSettings(Settings):
    """How refusals are recognised (the threshold's default is measured: docs/scoring.md)."""

    threshold: float = setting(DEFAULT_THRESHOLD, doc="refusal when the cosine is above t")
    phrases: str = setting("", doc="refusal phrase file (empty: the shipped list)")
    embedding: bool = setting(True, doc="the embedding rule, with the build's [embedder]")
    boxed: bool = setting(True, doc="read the last \\boxed{} answer (UA-Bench)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(
                f"refusal threshold must be a cosine in [-1, 1], got {self.threshold}"
            )

    def identity(self) -> dict[str, Any]:
        """The settings that decide the readings, with the phrase list's content hash."""
        phrases = "\n".join(load_phrases(self.phrases)).encode()
        return {**super().identity(), "phrases_sha256": hashlib.sha256(phrases).hexdigest()}


@dataclass(frozen=True)
class Reading:
    """How one response was read: the answer text to match, and whether (and why) it refused."""

    answer: str
    refused: bool
    kind: str | None = None
    similarity: float | None = None


def load_phrases(path: str = "") -> list[str]:
    """The refusal phrases of a file (one a line, `#` notes), by default the shipped list."""
    if path:
        if not Path(path).is_file():
            raise ConfigError(f"refusal phrase file {path!r} does not exist")
        text = Path(path).read_text(encoding="utf-8")
    else:
        text = resources.files("tipqa.evaluate").joinpath(SHIPPED_PHRASES).read_text("utf-8")
    phrases = [line.strip() for line in text.splitlines()]
    phrases = [line for line in phrases if line and not line.startswith("#")]
    if not phrases:
        raise ConfigError(f"refusal phrase file {path or SHIPPED_PHRASES!r} has no phrases")
    return phrases


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}`, its braces matched from that box's opening
    brace (UA-Bench's extraction); None without a box, or when the last box never closes (a
    truncated output has no valid box: an earlier box is not read in its place)."""
    start = text.rfind(BOX)
    if start == -1:
        return None
    depth = 1
    for position in range(start + len(BOX), len(text)):
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        if depth == 0:
            return text[start + len(BOX) : position]
    return None


def box_label(content: str) -> str | None:
    """UA-Bench's label of a box's content: MODEL_UNCERTAIN, DATA_UNCERTAIN, or None (an answer).

    Case-insensitive containment of the protocol's tokens as its text gives them: "I don't know"
    (its apostrophe straight or typographic) or `<MODEL_UNCERTAIN>` is model uncertainty, then
    `<DATA_UNCERTAIN>` data uncertainty (a box naming both is model uncertainty, the protocol's
    first rule).
    """
    key = content.lower().replace("’", "'")
    if any(token in key for token in MODEL_UNCERTAIN_TOKENS):
        return MODEL_UNCERTAIN
    if any(token in key for token in DATA_UNCERTAIN_TOKENS):
        return DATA_UNCERTAIN
    return None


def boxed_reading(text: str) -> Reading | None:
    """The reading a boxed answer decides, or None when there is no box (or it is an answer)."""
    content = last_boxed(text)
    if content is None:
        return None
    inner = unwrap_text(content)
    label = box_label(inner)
    if label == "MODEL_UNCERTAIN":
        return Reading(inner, True, "boxed_model_uncertain")
    if label == "DATA_UNCERTAIN":
        return Reading(inner, True, "boxed_data_uncertain")
    return Reading(inner, False)


class RefusalDetector:
    """Reads responses as answers or refusals (see the module docstring for the rules)."""

    def __init__(self, settings: RefusalSettings, embedder: Embedder | None = None) -> None:
        if settings.embedding and embedder is None:
            raise ConfigError(
                "refusal detection by embedding needs an embedder (or set embedding = false)"
            )
        self.settings = settings
        self.embedder = embedder if settings.embedding else None
        self.phrases = load_phrases(settings.phrases)
        self.normal_phrases = frozenset(normalize_answer(p) for p in self.phrases)
        self._phrase_vectors: np.ndarray | None = None

    def read(self, texts: Sequence[str], refused: Sequence[bool | None]) -> list[Reading]:
        """One reading per response, in order; `refused` is each system's own signal or None."""
        readings = [
            self._read_by_rules(text, signal) for text, signal in zip(texts, refused, strict=True)
        ]
        pending = [i for i, reading in enumerate(readings) if reading.kind == "undecided"]
        if pending:
            similarities = self.similarities([readings[i].answer for i in pending])
            for i, similarity in zip(pending, similarities, strict=True):
                refusal = similarity > self.settings.threshold
                kind = "embedding" if refusal else None
                readings[i] = Reading(readings[i].answer, refusal, kind, similarity)
        return readings

    def _read_by_rules(self, text: str, signal: bool | None) -> Reading:
        """Rules 1-4; kind "undecided" when only the embedding can tell."""
        boxed = boxed_reading(text) if self.settings.boxed else None
        answer = boxed.answer if boxed is not None else text.strip()
        if signal is not None:
            return Reading(answer, signal, "explicit" if signal else None)
        if boxed is not None and boxed.refused:
            return boxed
        normal = normalize_answer(answer)
        if not normal:
            return Reading(answer, True, "empty")
        if normal in self.normal_phrases:
            return Reading(answer, True, "phrase")
        return Reading(answer, False, None if self.embedder is None else "undecided")

    def similarities(self, texts: Sequence[str]) -> list[float]:
        """Each text's highest cosine similarity to a refusal phrase (embedder required)."""
        if self.embedder is None:
            raise ConfigError("refusal similarities need an embedder")
        if self._phrase_vectors is None:
            self._phrase_vectors = _unit(self.embedder.encode_queries(list(self.phrases)))
        unique = list(dict.fromkeys(texts))
        vectors = _unit(self.embedder.encode_queries(unique))
        best = (vectors @ self._phrase_vectors.T).max(axis=1)
        by_text = {text: float(value) for text, value in zip(unique, best, strict=True)}
        return [by_text[text] for text in texts]


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
