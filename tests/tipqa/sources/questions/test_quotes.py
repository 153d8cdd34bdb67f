"""CSV quoting undone in question text, on authored cases of each shape seen in real rows."""

from __future__ import annotations

import pytest

from tipqa.sources.questions.quotes import Unquoted, unquote_csv


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # A quoted field with doubled inner quotes.
        ('"Who painted ""Harbour at Dusk""?"', 'Who painted "Harbour at Dusk"?'),
        # Two quoted titles, one followed by a space before the question mark.
        (
            '"Which poet wrote ""Tidewater"" and ""The Lantern Keeper"" ?"',
            'Which poet wrote "Tidewater" and "The Lantern Keeper" ?',
        ),
        # The whole question is a quotation: the field's quotes and the text's quotes meet.
        (
            '"""Fair winds follow the brave"" is whose motto?"',
            '"Fair winds follow the brave" is whose motto?',
        ),
        # An alias that is a quotation.
        ('"""salt and iron"""', '"salt and iron"'),
        # A quotation followed by more words.
        ('"""Captain"" Orla Venn"', '"Captain" Orla Venn'),
        # A field cut short: no closing quote to drop.
        ('"""Fortune favours the', '"Fortune favours the'),
        # Doubled quotes without a field around them.
        ('Who sang ""Lanterns on the Quay""?', 'Who sang "Lanterns on the Quay"?'),
        # The source's own unbalanced quote is kept as written.
        ('"Which game is won by ""ringing the bell"', 'Which game is won by "ringing the bell'),
    ],
)
def test_csv_quoting_is_undone(raw: str, expected: str) -> None:
    result = unquote_csv(raw)
    assert result.text == expected
    assert result.changed and result.spaces_added == 0


@pytest.mark.parametrize(
    ("raw", "expected", "spaces"),
    [
        (
            '"Which club is called the""Grey Herons""?"',
            'Which club is called the "Grey Herons"?',
            1,
        ),
        (
            '"Finish this line by Ada Morrow.""The tide"" and ""the"" moon"',
            'Finish this line by Ada Morrow. "The tide" and "the" moon',
            1,
        ),
        (
            '"Which book opens with?""1820 - I have come home"""',
            'Which book opens with? "1820 - I have come home"',
            1,
        ),
        # Followed by a space: not glued on both sides, left alone.
        ('"Which sailor said,"" If the wind holds"""', 'Which sailor said," If the wind holds"', 0),
        # Unbalanced: a closing quote cannot be told from an opening one, so no space.
        ('"Which king was called The Old Fox""?"', 'Which king was called The Old Fox"?', 0),
    ],
)
def test_a_glued_opening_quote_gets_a_space(raw: str, expected: str, spaces: int) -> None:
    assert unquote_csv(raw) == Unquoted(expected, changed=True, spaces_added=spaces)


@pytest.mark.parametrize(
    "raw",
    [
        "Which river runs past the mill?",
        'Who wrote "The Lantern Keeper"?',
        '"To sail is to wait" was said by whom?',
        '"Harbour Lights"',
        '"The Seven Bells of Arden by',
        'He said"hello"to me',
    ],
)
def test_text_without_doubled_quotes_is_untouched(raw: str) -> None:
    assert unquote_csv(raw) == Unquoted(raw)
