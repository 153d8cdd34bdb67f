"""Made-up names for the demo world: pronounceable, unique, and never an English word we use."""

from __future__ import annotations

import random

_ONSETS = ["b", "br", "d", "dr", "f", "g", "gr", "k", "kr", "l", "m", "n", "p", "r", "s", "st"]
_ONSETS += ["t", "th", "tr", "v", "z", "h", "j", "c", "sh", "qu"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ei", "ou", "ia", "y"]
_CODAS = ["", "", "n", "r", "l", "s", "th", "k", "m", "x", "nd", "rn", "sk", "ld"]


class NameMaker:
    """Draws unique capitalised made-up words from a seeded generator."""

    def __init__(self, rng: random.Random, reserved: set[str]) -> None:
        self.rng = rng
        self.used = {w.lower() for w in reserved}

    def word(self, syllables: tuple[int, int] = (2, 3)) -> str:
        """A new made-up word, capitalised, of 2-3 syllables by default."""
        while True:
            n = self.rng.randint(*syllables)
            parts = [
                self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
                for _ in range(n)
            ]
            word = "".join(parts)
            if 5 <= len(word) <= 10 and word not in self.used:
                self.used.add(word)
                return word.capitalize()

    def person(self) -> str:
        """A two-word personal name."""
        return f"{self.word()} {self.word()}"
