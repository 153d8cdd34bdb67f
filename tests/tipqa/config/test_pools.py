"""Question pools: `[pool.NAME]` sections or JSON, their sources, limits and names."""

from __future__ import annotations

import pytest

from tipqa.config import read_config
from tipqa.config.pools import DEFAULT_POOLS, Pool, read_pool, read_pools, selected
from tipqa.core.errors import ConfigError
from tipqa.sources.questions.base import QuestionFilesSettings


def error(sections: dict[str, dict[str, str]]) -> str:
    with pytest.raises(ConfigError) as info:
        read_pools(sections)
    return str(info.value)


def test_pools_as_sections_or_as_json() -> None:
    sections = read_config(
        {
            "pool.dev": {"source": "triviaqa-json", "paths": "qa/wikipedia-dev.json"},
            "pool.train": {"source": "hf-rows", "paths": "train.jsonl", "limit": "100"},
        }
    )
    assert sections.pool_names == ["dev", "train"]
    assert sections.pool("train").limit == 100
    as_json = read_config(
        {
            "questions": {
                "pools": '{"dev": {"source": "triviaqa-json", "paths": ["qa/wikipedia-dev.json"]}}'
            }
        }
    )
    assert as_json.pool("dev") == sections.pool("dev")
    message = error(
        {"pool.dev": {"source": "demo"}, "questions": {"pools": '{"dev": {"source": "demo"}}'}}
    )
    assert "pool 'dev' is set twice" in message
    assert "[pool.dev] unknown key 'pth'; did you mean 'paths'?" in error(
        {"pool.dev": {"source": "hf-rows", "pth": "x"}}
    )
    assert "[pool.dev] needs `source`" in error({"pool.dev": {"paths": "x"}})
    assert "[pool.dev] source = demo takes no other keys" in error(
        {"pool.dev": {"source": "demo", "paths": "x"}}
    )


def test_without_pools_the_demo_pool() -> None:
    assert read_pools({}) == tuple(read_pool(n, v) for n, v in DEFAULT_POOLS.items())
    assert read_pools({}) == (Pool("dev", "demo", None, None),)


def test_a_pool_is_read_with_its_source_settings_and_limit() -> None:
    pool = read_pool("train", {"source": "hf-rows", "paths": "a.jsonl", "limit": "5"})
    assert (pool.name, pool.source, pool.limit) == ("train", "hf-rows", 5)
    assert isinstance(pool.settings, QuestionFilesSettings)
    assert pool.identity()["limit"] == 5 and pool.identity()["source"] == "hf-rows"
    assert read_pool("dev", {"source": "demo"}).identity() == {"source": "demo", "limit": None}


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        ("", {"source": "demo"}, "a pool name must be a non-empty folder name"),
        ("a/b", {"source": "demo"}, "a pool name must be a non-empty folder name"),
        ("dev", {"source": "demo", "limit": "0"}, "limit must be at least 1"),
        ("dev", {"source": " "}, "source must name a backend"),
        ("dev", {"source": "nosuch"}, "nosuch"),
    ],
)
def test_bad_pools_are_named(name: str, values: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read_pool(name, values)


def test_pools_json_must_be_a_mapping_of_mappings() -> None:
    assert "not valid JSON" in error({"questions": {"pools": "{dev"}})
    assert "must map pool names to settings" in error({"questions": {"pools": '["dev"]'}})
    assert "unknown key 'pool'" in error({"questions": {"pool": "{}"}})


def test_selected_strips_and_defaults() -> None:
    assert selected({"backend": " tantivy "}, "backend", "x", "token_index") == "tantivy"
    assert selected({}, "backend", "rules", "judge") == "rules"
