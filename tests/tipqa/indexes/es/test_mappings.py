"""Index settings and mappings of the Elasticsearch backends, checked without a server."""

from __future__ import annotations

import orjson
import pytest

from tipqa.core.errors import ConfigError
from tipqa.indexes.es import mappings


def test_token_settings_define_analyzer_similarity_and_build_mode() -> None:
    settings = mappings.token_index_settings(shards=12)["index"]
    assert settings["number_of_shards"] == 12
    assert settings["number_of_replicas"] == 0
    assert settings["auto_expand_replicas"] is False
    assert settings["refresh_interval"] == "-1"
    assert settings["codec"] == "best_compression"
    assert settings["similarity"] == {
        "tipqa_frequency": {
            "type": "scripted",
            "script": {"source": "return query.boost * doc.freq;"},
        }
    }
    analysis = settings["analysis"]
    analyzer = analysis["analyzer"]["tipqa_text"]
    assert analyzer == {
        "type": "custom",
        "char_filter": ["tipqa_dotted_capital_i", "tipqa_final_sigma"],
        "tokenizer": "tipqa_tokens",
        "filter": ["lowercase"],
    }
    assert analysis["tokenizer"]["tipqa_tokens"] == {
        "type": "pattern",
        "pattern": mappings.TOKEN_PATTERN,
        "group": 0,
    }
    assert analysis["char_filter"]["tipqa_dotted_capital_i"] == {
        "type": "mapping",
        "mappings": ["\u0130 => i\u0307"],
    }
    sigma = analysis["char_filter"]["tipqa_final_sigma"]
    assert sigma["type"] == "pattern_replace"
    assert sigma["replacement"] == "\u03c2"


def test_token_pattern_is_java_syntax_with_the_40_character_limit() -> None:
    assert mappings.TOKEN_PATTERN == (
        r"(?<![\p{L}\p{N}" + "\U00010000" + r"])[\p{L}\p{N}]{1,40}+(?![\p{L}\p{N}])"
    )
    # The settings survive JSON encoding with the supplementary letter intact.
    encoded = orjson.loads(orjson.dumps(mappings.token_index_settings(1)))
    assert (
        encoded["index"]["analysis"]["tokenizer"]["tipqa_tokens"]["pattern"].count("\U00010000")
        == 1
    )


def test_token_mappings() -> None:
    body = mappings.token_index_mappings()
    assert body["dynamic"] == "strict"
    assert body["_meta"] == {"tipqa": {"kind": "token", "version": 1, "analyzer": "tipqa_text"}}
    assert body["properties"] == {
        "doc_id": {"type": "keyword"},
        "text": {
            "type": "text",
            "analyzer": "tipqa_text",
            "index_options": "positions",
            "norms": False,
            "similarity": "tipqa_frequency",
        },
        "meta": {"type": "object", "enabled": False},
    }


def test_build_and_serving_settings() -> None:
    assert mappings.build_settings() == {
        "index": {"auto_expand_replicas": False, "number_of_replicas": 0, "refresh_interval": "-1"}
    }
    assert mappings.serving_settings(None) == {
        "index": {"auto_expand_replicas": "0-1", "refresh_interval": None}
    }
    assert mappings.serving_settings(2) == {
        "index": {"auto_expand_replicas": False, "number_of_replicas": 2, "refresh_interval": None}
    }
    with pytest.raises(ConfigError):
        mappings.serving_settings(-1)
    with pytest.raises(ConfigError):
        mappings.token_index_settings(0)


@pytest.mark.parametrize(
    ("quantize", "kind"),
    [(None, "hnsw"), ("int8", "int8_hnsw"), ("int4", "int4_hnsw"), ("bbq", "bbq_hnsw")],
)
def test_vector_mappings(quantize: str | None, kind: str) -> None:
    body = mappings.vector_index_mappings(
        384, "cosine", hnsw_m=24, ef_construction=200, quantize=quantize
    )
    assert body["_meta"] == {
        "tipqa": {"kind": "vector", "version": 1, "dims": 384, "similarity": "cosine"}
    }
    assert body["properties"]["vector"] == {
        "type": "dense_vector",
        "element_type": "float",
        "dims": 384,
        "index": True,
        "similarity": "cosine",
        "index_options": {"type": kind, "m": 24, "ef_construction": 200},
    }
    assert body["properties"]["doc_id"] == {"type": "keyword"}
    assert body["properties"]["text"] == {"type": "text", "index": False, "norms": False}


def test_vector_settings_are_build_mode() -> None:
    settings = mappings.vector_index_settings(3)["index"]
    assert settings["number_of_shards"] == 3
    assert settings["refresh_interval"] == "-1"
    assert settings["number_of_replicas"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dimension": 384, "similarity": "euclid"}, "unknown similarity"),
        ({"dimension": 0, "similarity": "cosine"}, "dimension"),
        ({"dimension": 5000, "similarity": "cosine"}, "dimension"),
        ({"dimension": 385, "similarity": "cosine", "quantize": "int4"}, "even"),
        ({"dimension": 32, "similarity": "cosine", "quantize": "bbq"}, "bbq"),
        ({"dimension": 32, "similarity": "cosine", "quantize": "int16"}, "unknown quantize"),
        ({"dimension": 32, "similarity": "cosine", "hnsw_m": 1}, "hnsw_m"),
    ],
)
def test_vector_mappings_reject_bad_options(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        mappings.vector_index_mappings(**kwargs)
