"""Reading a configuration: strict keys and types, lists people can write, pools as sections."""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

import pytest

from tipqa.config import read_config
from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.llm.judges.openai import OpenAIJudgeSettings
from tipqa.llm.judges.vllm import VLLMJudgeSettings
from tipqa.sources.questions.base import QuestionFilesSettings


def error(sections: dict[str, dict[str, str]]) -> str:
    with pytest.raises(ConfigError) as info:
        read_config(sections)
    return str(info.value)


def test_defaults_are_the_offline_demo() -> None:
    config = read_config({})
    assert config.judge.backend == "rules" and config.keywords.backend == "rules"
    assert config.token_index.backend == "tantivy" and config.vector_index.backend == "candidates"
    assert config.corpus.backend == "demo" and config.pool_names == ["dev"]
    assert (config.build.k1, config.build.k2) == (100, 10)


def test_a_misspelled_key_names_section_key_and_the_closest_one() -> None:
    message = error({"judge": {"bakend": "openai"}})
    assert "[judge] unknown key 'bakend'; did you mean 'backend'?" in message
    assert "[build] unknown key 'kk1'; did you mean 'k1'?" in error({"build": {"kk1": "5"}})


def test_candidates_from_elasticsearch_need_its_bm25_field() -> None:
    token_index = {"backend": "elasticsearch", "index": "tokens"}
    assert "set [token_index] bm25 = true" in error({"token_index": token_index})
    config = read_config({"token_index": {**token_index, "bm25": "true"}})
    assert config.vector_index.backend == "candidates"
    full = read_config({"token_index": token_index, "vector_index": {"backend": "faiss"}})
    assert full.vector_index.backend == "faiss"


def test_the_llm_cache_is_one_switch_of_the_run_and_its_old_key_says_where_it_went() -> None:
    assert read_config({}).build.llm_cache is True
    assert read_config({"build": {"llm_cache": "false"}}).build.llm_cache is False
    message = error({"judge": {"backend": "openai", "cache": "false"}})
    assert message.startswith("[judge] 'cache' is no longer a key here")
    assert "[build] llm_cache" in message


def test_a_key_of_another_backend_says_whose_it_is() -> None:
    message = error({"judge": {"model": "m"}})
    assert "[judge] 'model' is a setting of relevance judge openai, vllm" in message
    assert "not of the selected 'rules'" in message


def test_a_wrong_type_names_section_key_and_value() -> None:
    assert error({"build": {"k1": "many"}}) == "[build] k1 = 'many': expected an integer"
    assert "[judge] mode = 'beam': expected one of logprobs, choice, plain" in error(
        {"judge": {"backend": "openai", "mode": "beam"}}
    )
    assert "[hub] private = 'maybe': expected true or false" in error({"hub": {"private": "maybe"}})


def test_an_unknown_backend_lists_the_known_ones() -> None:
    assert "unknown relevance judge 'gpt'; known: openai, rules, vllm" in error(
        {"judge": {"backend": "gpt"}}
    )
    assert "unknown corpus reader 'pile'" in error({"corpus": {"source": "pile"}})


def test_a_near_miss_section_is_refused_and_luigi_sections_are_left_alone() -> None:
    assert (
        error({"judges": {"backend": "openai"}})
        == "unknown section [judges]; did you mean [judge]?"
    )
    read_config({"core": {"log_level": "INFO"}, "retcode": {"task_failed": "30"}, "worker": {}})


def test_every_knob_of_a_backend_is_settable() -> None:
    vllm = read_config(
        {
            "judge": {
                "backend": "vllm",
                "gpu_memory_utilization": "0.8",
                "enforce_eager": "true",
                "seed": "7",
                "max_model_len": "",
            }
        }
    ).judge.settings
    assert isinstance(vllm, VLLMJudgeSettings)
    assert (vllm.gpu_memory_utilization, vllm.enforce_eager, vllm.seed) == (0.8, True, 7)
    assert vllm.max_model_len is None
    openai = read_config({"judge": {"backend": "openai", "max_tokens": "4"}}).judge.settings
    assert isinstance(openai, OpenAIJudgeSettings) and openai.max_tokens == 4
    es = read_config(
        {
            "token_index": {
                "backend": "elasticsearch",
                "bulk_max_bytes": "1000",
                "max_retries": "2",
                "bm25": "true",
            },
            "elasticsearch": {"url": "http://127.0.0.1:9200", "request_timeout": "30"},
        }
    )
    assert es.token_index.settings.bulk_max_bytes == 1000  # type: ignore[attr-defined]
    assert es.elasticsearch.request_timeout == 30.0


@pytest.mark.parametrize(
    "written",
    [
        "/data/pile/*.jsonl.zst",
        "/data/pile/*.jsonl.zst, /data/more.jsonl",
        "/data/pile/*.jsonl.zst\n/data/more.jsonl",
        '["/data/pile/*.jsonl.zst", "/data/more.jsonl"]',
    ],
)
def test_lists_are_written_as_people_write_them(written: str) -> None:
    pool = read_config({"pool.dev": {"source": "hf-rows", "paths": written}}).pool("dev")
    assert isinstance(pool.settings, QuestionFilesSettings)
    assert pool.settings.paths[0] == "/data/pile/*.jsonl.zst"
    assert len(pool.settings.paths) == (1 if "more" not in written else 2)


def test_prefixes_with_a_trailing_space_are_json_strings() -> None:
    settings = read_config(
        {"embedder": {"model": "intfloat/multilingual-e5-large", "query_prefix": '"query: "'}}
    ).embedder.settings
    assert settings.query_prefix == "query: "  # type: ignore[attr-defined]
    assert settings.passage_prefix is None  # type: ignore[attr-defined]


def test_the_test_pool_must_be_a_pool() -> None:
    assert "[splits] test_pool 'dev' is not a configured question pool; pools: mine" in error(
        {"pool.mine": {"source": "demo"}}
    )


def test_the_boundary_sections() -> None:
    config = read_config(
        {
            "boundary": {"judge_all_candidates": "yes", "checkpoints": "1000, 2000, ..., 5000"},
            "training_order": {"backend": "table", "paths": "order.csv"},
        }
    )
    assert config.boundary.judge_all_candidates and config.boundary.steps()[-1] == 5000
    assert config.training_order is not None and config.training_order.backend == "table"
    assert read_config({}).training_order is None
    assert read_config({"boundary": {"judge_all_candidates": "true"}}).training_order is None
    assert "checkpoints is empty" in error({"training_order": {"backend": "table"}})
    assert "need a [training_order]" in error({"boundary": {"checkpoints": "pythia"}})
    assert "did you mean [training_order]?" in error({"training_ordr": {}})
    misplaced = error(
        {
            "training_order": {"backend": "table", "tokenizer": "t.json"},
            "boundary": {"checkpoints": "5"},
        }
    )
    assert "'tokenizer' is a setting of training order megatron" in misplaced
    assert "[boundary] checkpoints: 'soon'" in error({"boundary": {"checkpoints": "5, soon"}})
    assert "[training_order] layout = 'arrow'" in error(
        {"training_order": {"layout": "arrow"}, "boundary": {"checkpoints": "5"}}
    )


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parents[3] / "configs").glob("*.cfg")), ids=lambda p: p.name
)
def test_the_shipped_configs_parse(path: Path) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    config = read_config({section: dict(parser.items(section)) for section in parser.sections()})
    if path.name == "tip-triviaqa.cfg":  # the paper's setup
        assert config.token_index.backend == "elasticsearch"
        assert config.corpus.settings.check_duplicates is False


def test_the_extras_of_the_selected_backends_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    for package in ("openai", "vllm", "elasticsearch", "openvino", "tokenizers"):
        monkeypatch.setitem(sys.modules, package, None)
    read_config({}).check_extras()
    embedder = {"runtime": "openvino"}
    with pytest.raises(MissingExtraError, match=r"\[embedder\] backend 'sentence-transformers' "):
        read_config({"embedder": embedder}).check_extras()
    for section, backend, extra in [
        ("judge", "vllm", "vllm"),
        ("keywords", "openai", "openai"),
        ("token_index", "elasticsearch", "elasticsearch"),
        ("vector_index", "elasticsearch", "elasticsearch"),
    ]:
        values = {"backend": backend, **({"bm25": "true"} if section == "token_index" else {})}
        with pytest.raises(MissingExtraError, match=rf"pip install 'tipqa\[{extra}\]'"):
            read_config({section: values}).check_extras()


def test_an_inline_comment_in_one_of_our_sections_is_refused() -> None:
    message = error({"pool.dev": {"source": "demo", "max_questions": "5   # a few"}})
    assert "[pool.dev] max_questions" in message and "inline comment" in message
    read_config({"core": {"log_level": "WARNING   # Luigi's own: not ours to read"}})
