"""[evaluate] and [evaluate.<backend>] read strictly into the scorer's and answerers' settings."""

from __future__ import annotations

import pytest

from tipqa.config import read_config
from tipqa.core.errors import ConfigError
from tipqa.evaluate.confidence import ConfidenceSettings
from tipqa.evaluate.refusal import DEFAULT_THRESHOLD, RefusalSettings
from tipqa.evaluate.score import ScoringSettings
from tipqa.evaluate.settings import EvaluateSettings
from tipqa.llm.answerers.openai import OpenAIAnswererSettings
from tipqa.llm.answerers.vllm import VLLMAnswererSettings


def error(sections: dict[str, dict[str, str]]) -> str:
    with pytest.raises(ConfigError) as info:
        read_config(sections)
    return str(info.value)


def test_defaults() -> None:
    config = read_config({})
    assert config.evaluate == EvaluateSettings()
    assert config.evaluate.refusal() == RefusalSettings(threshold=DEFAULT_THRESHOLD)
    assert config.evaluate.scoring() == ScoringSettings()
    assert config.answerer("openai").settings == OpenAIAnswererSettings()
    assert config.answerer("vllm").settings == VLLMAnswererSettings()


def test_sections_are_read_into_each_part() -> None:
    config = read_config(
        {
            "evaluate": {"threshold": "0.5", "embedding": "false", "bins": "15", "seed": "3"},
            "evaluate.openai": {"model": "m", "stop": "[]", "max_concurrency": "2"},
            "evaluate.vllm": {"chat": "yes", "max_model_len": "2048", "batch_size": "16"},
        }
    )
    assert config.evaluate.refusal() == RefusalSettings(threshold=0.5, embedding=False)
    assert config.evaluate.scoring() == ScoringSettings(bins=15, seed=3)
    openai = config.answerer("openai")
    assert openai.backend == "openai"
    assert openai.settings == OpenAIAnswererSettings(model="m", stop=(), max_concurrency=2)
    vllm = config.answerer("vllm").settings
    assert isinstance(vllm, VLLMAnswererSettings)
    assert (vllm.chat, vllm.max_model_len, vllm.batch_size) == (True, 2048, 16)


def test_bad_keys_values_and_sections_are_named() -> None:
    message = error({"evaluate": {"treshold": "0.5"}})
    assert "[evaluate] unknown key 'treshold'; did you mean 'threshold'?" in message
    assert "bins" in message and "boxed" in message
    assert "[evaluate] bins = 'ten': expected an integer" in error({"evaluate": {"bins": "ten"}})
    assert "cosine in [-1, 1], got 2.0" in error({"evaluate": {"threshold": "2"}})
    message = error({"evaluate.openai": {"batch_size": "4"}})
    assert (
        "[evaluate.openai] unknown key 'batch_size'" in message and "answerer 'openai'" in message
    )
    assert "max_tokens must be >= 1" in error({"evaluate.vllm": {"max_tokens": "0"}})
    message = error({"evaluate.gpt": {"model": "m"}})
    assert "[evaluate.gpt]: 'gpt' is no answerer backend; known: openai, vllm" in message
    assert error({"evaluat": {}}) == "unknown section [evaluat]; did you mean [evaluate]?"
    with pytest.raises(ConfigError, match="unknown answerer 'gpt'"):
        read_config({}).answerer("gpt")


def test_the_phrase_list_counts_by_its_content(tmp_path) -> None:
    phrases = tmp_path / "phrases.txt"
    phrases.write_text("no idea\n")
    first = RefusalSettings(phrases=str(phrases)).identity()
    phrases.write_text("no idea\nI cannot say\n")
    second = RefusalSettings(phrases=str(phrases)).identity()
    assert first["phrases_sha256"] != second["phrases_sha256"]
    assert RefusalSettings().identity()["phrases_sha256"] != first["phrases_sha256"]


def test_the_parts_hold_every_field_of_the_section() -> None:
    names = set(EvaluateSettings.field_names())
    parts = (RefusalSettings, ScoringSettings, ConfidenceSettings)
    assert names == {name for part in parts for name in part.field_names()}
    changed = EvaluateSettings(threshold=0.1, phrases="p", embedding=False, boxed=False,
                               bins=3, min_bin_count=4, bootstrap=5, seed=6, samples=5,
                               sample_temperature=0.7, sample_max_tokens=9, p_true=True,
                               temperature_scaling=True)  # fmt: skip
    split = [changed.refusal(), changed.scoring(), changed.confidence()]
    for part in split:
        assert part.to_dict().items() <= changed.to_dict().items()
    assert {k: v for part in split for k, v in part.to_dict().items()} == changed.to_dict()
