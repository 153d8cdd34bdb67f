"""What LLM calls cost: the tokens of one or more chat completions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Usage:
    """Tokens spent on one or more chat completions."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        """The JSON form (stored in the cache)."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        """Read the JSON form; anything unreadable counts as zero tokens."""
        if not isinstance(data, dict):
            return cls()
        prompt, completion = data.get("prompt_tokens"), data.get("completion_tokens")
        return cls(
            prompt if isinstance(prompt, int) else 0,
            completion if isinstance(completion, int) else 0,
        )
