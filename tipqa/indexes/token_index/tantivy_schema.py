"""The tantivy index's fields, analyzers and the per-document term-frequency terms.

Fields: `doc_id` (raw term, stored), `row` (the document's position in the build stream: an
indexed integer fast field, used to delete one copy of a duplicated id and to look hits' ids
up in `tantivy_ids`), `size` (the text's
UTF-8 bytes, a fast field), `text` (the tokens of
`tipqa.core.text.tokenize`, with positions, see `tantivy_analysis`), `repeats` (below), and the
stored `body` and `meta`.

`repeats` records each token's frequency n in the document when n >= 2, as terms whose
values add up to n - 1: "<token>:<r>" for r = (n - 1) mod 64 (when not 0), and "<token>^<b>"
for every bit b set in (n - 1) // 64, worth 64 * 2^b. Most repeated tokens occur fewer than 65
times and get one term. A query rebuilds the exact frequency of a token inside tantivy as a sum
of constant scores: 1 for the `text` term plus the value of each `repeats` term the document
has (see `tantivy_rank`). A token seen once adds nothing, so the field is small.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tipqa.core.text import MAX_TOKEN_CHARS, TOKEN_RE

ANALYZER = "tipqa"
REPEATS_ANALYZER = "tipqa-repeats"
DOC_ID, ROW, SIZE, TEXT = "doc_id", "row", "size", "text"
REPEATS, BODY, META = "repeats", "body", "meta"
LOW, HIGH = ":", "^"  # separators of the low-value and the high-bit `repeats` terms
LOW_RANGE = 64

# Bytes that are not ASCII token characters (`[^\W_]`) become spaces: bytes.split() then
# yields the tokens of lower-cased ASCII text, several times faster than the regex.
_ASCII_SEPARATORS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))
_LOW_SUFFIX = [f"{LOW}{value}" for value in range(LOW_RANGE)]
_LOW_SUFFIX_BYTES = [suffix.encode() for suffix in _LOW_SUFFIX]


def import_tantivy() -> Any:
    """Import tantivy (a core dependency, imported lazily because it is a native extension)."""
    import tantivy

    return tantivy


def new_schema() -> Any:
    """The schema of a tipqa tantivy index."""
    tantivy = import_tantivy()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(DOC_ID, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field(ROW, indexed=True, fast=True)
    builder.add_integer_field(SIZE, fast=True)
    builder.add_text_field(TEXT, stored=False, tokenizer_name=ANALYZER, index_option="position")
    builder.add_text_field(
        REPEATS, stored=False, tokenizer_name=REPEATS_ANALYZER, index_option="basic"
    )
    builder.add_bytes_field(BODY, stored=True, indexed=False)
    builder.add_bytes_field(META, stored=True, indexed=False)
    return builder.build()


def register_analyzers(index: Any, text_analyzer: Any) -> None:
    """Register the analyzers a writer of `index` needs (text, and whitespace for repeats)."""
    tantivy = import_tantivy()
    index.register_tokenizer(ANALYZER, text_analyzer)
    index.register_tokenizer(
        REPEATS_ANALYZER, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
    )


def ascii_spaced(lowered: bytes) -> bytes:
    """Lower-cased ASCII text with every byte that is not a token character made a space."""
    return lowered.translate(_ASCII_SEPARATORS)


def ascii_tokens(lowered: bytes) -> list[bytes]:
    """The tokens of lower-cased ASCII text (`tipqa.core.text` tokens, before the length limit)."""
    return ascii_spaced(lowered).split()


def value_terms(token: str, extra: int) -> list[str]:
    """The `repeats` terms of a token that occurs `extra` + 1 times (extra >= 1)."""
    high, low = divmod(extra, LOW_RANGE)
    terms = [token + _LOW_SUFFIX[low]] if low else []
    bit = 0
    while high:
        if high & 1:
            terms.append(f"{token}{HIGH}{bit}")
        high >>= 1
        bit += 1
    return terms


def term_value(term: str, prefix_length: int) -> int:
    """What a `repeats` term adds to its token's frequency (the term after "<token>")."""
    kind, number = term[prefix_length - 1], int(term[prefix_length:])
    return number if kind == LOW else LOW_RANGE << number


def repeat_terms(tokens: list[str]) -> str:
    """The `repeats` field value of a document with these (str) tokens."""
    counts = Counter(tokens)
    if len(counts) == len(tokens):
        return ""
    terms: list[str] = []
    for token, count in counts.items():
        if count > 1:
            terms.extend(value_terms(token, count - 1))
    return " ".join(terms)


def prepared_repeats(prepared: str) -> str:
    """The `repeats` field value of prepared text (`tantivy_analysis.prepare`)."""
    return repeat_terms(TOKEN_RE.findall(prepared))


def repeat_terms_ascii(tokens: list[bytes]) -> str:
    """`repeat_terms` for the bytes tokens of ASCII text (the common case, made fast)."""
    counts = Counter(tokens)
    if len(counts) == len(tokens):
        return ""
    if max(counts.values()) <= LOW_RANGE:
        suffix = _LOW_SUFFIX_BYTES
        return b" ".join([t + suffix[c - 1] for t, c in counts.items() if c > 1]).decode()
    return repeat_terms([t.decode() for t in tokens])


def analyse_ascii(lowered: bytes) -> tuple[str | None, str]:
    """The tokens of lower-cased ASCII text joined by spaces, when some run was dropped as too
    long (else None: the text itself tokenizes the same), and the `repeats` field value."""
    tokens = ascii_tokens(lowered)
    prepared = None
    if tokens and max(map(len, tokens)) > MAX_TOKEN_CHARS:
        tokens = [token for token in tokens if len(token) <= MAX_TOKEN_CHARS]
        prepared = b" ".join(tokens).decode()
    return prepared, repeat_terms_ascii(tokens)


@contextmanager
def committing(writer: Any) -> Iterator[Any]:
    """Commit `writer` when the block ends, roll back if it raises; wait for merges either way."""
    try:
        yield writer
        writer.commit()
    except BaseException:
        writer.rollback()
        raise
    finally:
        writer.wait_merging_threads()
