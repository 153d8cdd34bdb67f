"""Index settings and mappings for the Elasticsearch token and vector indexes (pure functions).

The token index analyzes `text` exactly as `tipqa.core.text.tokenize` does, which lower-cases the
whole text and then takes maximal runs of Unicode letters and digits of at most 40 characters:

- char filter `tipqa_dotted_capital_i` maps U+0130 to "i" + U+0307, the one character whose
  lower case (in Python's `str.lower`) is two characters long; U+0307 is a combining mark, so
  the token splits there as it does in Python;
- char filter `tipqa_final_sigma` writes a capital sigma as final sigma (U+03C2) where Python's
  `str.lower` does (the Final_Sigma rule: a cased letter before it and none after it, skipping
  case-ignorable characters), because Lucene lower-cases every sigma to U+03C3;
- tokenizer `tipqa_tokens` takes each maximal run of at most 40 letters/digits (`\\p{L}`,
  `\\p{N}`, counted in code points) as a token. A longer run yields no token and, unlike a
  `length` filter, leaves no position gap, so a phrase matches across it as in Python;
- filter `lowercase` (Java's `Character.toLowerCase`, per code point).

Known differences, all rare: the JVM's Unicode version differs from Python's (a handful of
code points change category between versions); more than 16 case-ignorable characters
between a letter and a capital sigma. Tests run the chain with Python's `regex` module, with
`java.util.regex` when `java` is on the PATH, and in Lucene itself when its jars are found.

The `text` field is scored by a scripted similarity that returns `query.boost * doc.freq`:
for a phrase clause `doc.freq` is the number of (possibly overlapping) occurrences of the
phrase in the document, for a one-token clause the term frequency, and a `bool` query sums
the scores of its matching clauses. The token query has one clause per distinct phrase, so
its score is the frequency that `tipqa.indexes.token_index.base` defines. Its boosts are 1;
`query.boost` is in the script so that Lucene's merging of identical clauses (which adds their
boosts) would still count each of them.
"""

from __future__ import annotations

from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.text import MAX_TOKEN_CHARS

MAPPING_VERSION = 1
ANALYZER = "tipqa_text"
SIMILARITY = "tipqa_frequency"
FREQUENCY_SCRIPT = "return query.boost * doc.freq;"

_WORD = r"\p{L}\p{N}"
# U+10000 is a letter already in \p{L}; a supplementary character written literally in a
# pattern makes java.util.regex run lookbehinds by code point, not by UTF-16 unit (without
# it, a run of 41 astral letters would yield its last 40 as a token).
_SUPPLEMENTARY_LETTER = "\U00010000"
TOKEN_PATTERN = (
    rf"(?<![{_WORD}{_SUPPLEMENTARY_LETTER}])[{_WORD}]{{1,{MAX_TOKEN_CHARS}}}+(?![{_WORD}])"
)

# Case_Ignorable (Unicode): Mn, Me, Cf, Lm, Sk and the Word_Break MidLetter, MidNumLet and
# Single_Quote characters. Cased: Lowercase, Uppercase and Lt. Java regex syntax, also
# understood by Python's `regex` module in its V1 mode.
CASE_IGNORABLE = (
    r"\p{Mn}\p{Me}\p{Cf}\p{Lm}\p{Sk}'.:\u00B7\u0387\u055F\u05F4\u2018\u2019\u2024\u2027"
    r"\uFE13\uFE52\uFE55\uFF07\uFF0E\uFF1A"
)
CASED = r"\p{IsLowercase}\p{IsUppercase}\p{Lt}"
_CASED_ONLY = rf"[[{CASED}]&&[^{CASE_IGNORABLE}]]"
SIGMA_LOOKBEHIND = 16
# The pattern starts with the literal capital sigma, so the regex engine leaves every other
# position at the first character (a leading lookbehind would be tried at every position).
FINAL_SIGMA_PATTERN = (
    rf"\u03A3(?<={_CASED_ONLY}[{CASE_IGNORABLE}]{{0,{SIGMA_LOOKBEHIND}}}\u03A3)"
    rf"(?![{CASE_IGNORABLE}]*+{_CASED_ONLY})"
)
DOTTED_CAPITAL_I_RULE = "\u0130 => i\u0307"

SIMILARITIES = ("cosine", "dot_product", "l2_norm", "max_inner_product")
QUANTIZATIONS = {None: "hnsw", "int8": "int8_hnsw", "int4": "int4_hnsw", "bbq": "bbq_hnsw"}
BBQ_MIN_DIMS = 64
MAX_DIMS = 4096


def analysis_settings() -> dict[str, Any]:
    """The `index.analysis` settings that define the `tipqa_text` analyzer."""
    return {
        "char_filter": {
            "tipqa_dotted_capital_i": {"type": "mapping", "mappings": [DOTTED_CAPITAL_I_RULE]},
            "tipqa_final_sigma": {
                "type": "pattern_replace",
                "pattern": FINAL_SIGMA_PATTERN,
                "replacement": "\u03c2",
            },
        },
        "tokenizer": {"tipqa_tokens": {"type": "pattern", "pattern": TOKEN_PATTERN, "group": 0}},
        "analyzer": {
            ANALYZER: {
                "type": "custom",
                "char_filter": ["tipqa_dotted_capital_i", "tipqa_final_sigma"],
                "tokenizer": "tipqa_tokens",
                "filter": ["lowercase"],
            }
        },
    }


def build_settings() -> dict[str, Any]:
    """Dynamic settings while bulk loading: no replicas and no periodic refresh."""
    return {
        "index": {"auto_expand_replicas": False, "number_of_replicas": 0, "refresh_interval": "-1"}
    }


def serving_settings(replicas: int | None) -> dict[str, Any]:
    """Dynamic settings once built: the given replicas (None: one if the cluster has two nodes)
    and the default refresh interval."""
    if replicas is None:
        return {"index": {"auto_expand_replicas": "0-1", "refresh_interval": None}}
    if replicas < 0:
        raise ConfigError(f"replicas must be >= 0, got {replicas}")
    return {
        "index": {
            "auto_expand_replicas": False,
            "number_of_replicas": replicas,
            "refresh_interval": None,
        }
    }


def _static_settings(shards: int) -> dict[str, Any]:
    """Settings fixed at index creation, merged with the build settings."""
    if shards < 1:
        raise ConfigError(f"shards must be >= 1, got {shards}")
    settings = build_settings()
    settings["index"]["number_of_shards"] = shards
    return settings


def token_index_settings(shards: int) -> dict[str, Any]:
    """Creation settings of the token index: shards, build mode, analyzer and similarity."""
    settings = _static_settings(shards)
    settings["index"].update(
        {
            "codec": "best_compression",
            "similarity": {
                SIMILARITY: {"type": "scripted", "script": {"source": FREQUENCY_SCRIPT}}
            },
            "analysis": analysis_settings(),
        }
    )
    return settings


def token_index_meta() -> dict[str, Any]:
    """What the `_meta` of a token index must hold for this code to use it."""
    return {"kind": "token", "version": MAPPING_VERSION, "analyzer": ANALYZER}


def token_index_mappings() -> dict[str, Any]:
    """Mappings of the token index: `doc_id` (keyword, sortable), `text`, `meta` (stored only)."""
    return {
        "dynamic": "strict",
        "_meta": {"tipqa": token_index_meta()},
        "properties": {
            "doc_id": {"type": "keyword"},
            "text": {
                "type": "text",
                "analyzer": ANALYZER,
                "index_options": "positions",
                "norms": False,
                "similarity": SIMILARITY,
            },
            "meta": {"type": "object", "enabled": False},
        },
    }


def vector_index_options(
    dimension: int, *, hnsw_m: int, ef_construction: int, quantize: str | None
) -> dict[str, Any]:
    """The `index_options` of the `dense_vector` field (HNSW, optionally quantized)."""
    if quantize not in QUANTIZATIONS:
        known = ", ".join(str(q) for q in QUANTIZATIONS)
        raise ConfigError(f"unknown quantize {quantize!r}; known: {known}")
    if hnsw_m < 2 or ef_construction < 1:
        raise ConfigError("hnsw_m must be >= 2 and ef_construction >= 1")
    if quantize == "int4" and dimension % 2:
        raise ConfigError(f"int4 quantization needs an even dimension, got {dimension}")
    if quantize == "bbq" and dimension < BBQ_MIN_DIMS:
        raise ConfigError(f"bbq quantization needs a dimension >= {BBQ_MIN_DIMS}, got {dimension}")
    return {"type": QUANTIZATIONS[quantize], "m": hnsw_m, "ef_construction": ef_construction}


def vector_index_meta(dimension: int, similarity: str) -> dict[str, Any]:
    """What the `_meta` of a vector index must hold for this code to use it."""
    return {
        "kind": "vector",
        "version": MAPPING_VERSION,
        "dims": dimension,
        "similarity": similarity,
    }


def vector_index_mappings(
    dimension: int,
    similarity: str,
    *,
    hnsw_m: int = 16,
    ef_construction: int = 100,
    quantize: str | None = None,
) -> dict[str, Any]:
    """Mappings of the vector index: one document per chunk with its parent `doc_id`.

    `index_options` is always explicit: Elasticsearch 9.1 otherwise picks `bbq_hnsw` for 384
    dimensions and more.
    """
    if similarity not in SIMILARITIES:
        raise ConfigError(f"unknown similarity {similarity!r}; known: {', '.join(SIMILARITIES)}")
    if not 1 <= dimension <= MAX_DIMS:
        raise ConfigError(f"dimension must be between 1 and {MAX_DIMS}, got {dimension}")
    options = vector_index_options(
        dimension, hnsw_m=hnsw_m, ef_construction=ef_construction, quantize=quantize
    )
    return {
        "dynamic": "strict",
        "_meta": {"tipqa": vector_index_meta(dimension, similarity)},
        "properties": {
            "doc_id": {"type": "keyword"},
            "chunk_index": {"type": "integer", "index": False},
            "text": {"type": "text", "index": False, "norms": False},
            "vector": {
                "type": "dense_vector",
                "element_type": "float",
                "dims": dimension,
                "index": True,
                "similarity": similarity,
                "index_options": options,
            },
        },
    }


def vector_index_settings(shards: int) -> dict[str, Any]:
    """Creation settings of the vector index: shards and build mode."""
    return _static_settings(shards)


def ledger_mappings() -> dict[str, Any]:
    """Mappings of the small `<index>-tipqa-meta` index (shard records, completion marker)."""
    return {"dynamic": False, "properties": {"kind": {"type": "keyword"}}}
