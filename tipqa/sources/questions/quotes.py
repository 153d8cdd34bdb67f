"""Undo CSV-style quoting left in question text (llm-foundry's TriviaQA rows).

Those rows went through a CSV writer at some point: a question that contains a quote was
wrapped in quotes and each of its own quotes doubled, so `Who painted "Harbour at Dusk"?`
reads `"Who painted ""Harbour at Dusk""?"`. Left as is, the doubled quotes glue the start of
the question to a keyword (the rules extractor then takes `"Who painted` for a name).

The rule, for a text that contains `""` (text without one is never touched):

1. A leading `"` is the field's opening quote and is dropped; the field's closing quote is the
   last character when the text ends in an odd run of quotes (one, or three when the text
   itself ends with a quote), and is dropped too. A field cut short (no closing quote) keeps
   its end.
2. Every `""` left becomes `"`.
3. When the quotes left are balanced, an opening quote (the 1st, 3rd, ... one) glued both to
   the word before it and to the word after it gets a space (`called the"Grey Herons"` ->
   `called the "Grey Herons"`). With an odd number of quotes we cannot tell opening from
   closing, so spacing is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DOUBLED = '""'
_GLUED_OPENING = re.compile(r"[\w.,;:!?)\]]")


@dataclass(frozen=True)
class Unquoted:
    """A text with CSV quoting undone, and what was changed."""

    text: str
    changed: bool = False
    spaces_added: int = 0


def unquote_csv(text: str) -> Unquoted:
    """`text` as written before CSV quoting (see the module docstring for the exact rule)."""
    if DOUBLED not in text:
        return Unquoted(text)
    body = text
    if body.startswith('"'):
        body = body[1:]
        trailing = len(body) - len(body.rstrip('"'))
        if trailing % 2 == 1:
            body = body[:-1]
    body = body.replace(DOUBLED, '"')
    body, spaces = _space_opening_quotes(body)
    return Unquoted(body, changed=True, spaces_added=spaces)


def _space_opening_quotes(text: str) -> tuple[str, int]:
    """Put a space before each opening quote glued to the preceding word (balanced quotes only)."""
    positions = [i for i, char in enumerate(text) if char == '"']
    if len(positions) % 2:
        return text, 0
    pieces: list[str] = []
    last = 0
    added = 0
    for position in positions[::2]:
        glued_after = position + 1 < len(text) and not text[position + 1].isspace()
        if position > 0 and glued_after and _GLUED_OPENING.fullmatch(text[position - 1]):
            pieces.append(text[last:position])
            pieces.append(" ")
            last = position
            added += 1
    pieces.append(text[last:])
    return "".join(pieces), added
