"""The second judges, [judge.confirm] and [audit.judge]: the keys of [judge], inherited where
unset when their backend has them; an unknown key or backend names the section."""

from __future__ import annotations

import pytest

from tipqa.config import read_config
from tipqa.core.errors import ConfigError
from tipqa.llm.judges.openai import OpenAIJudgeSettings
from tipqa.llm.judges.rules import RuleJudgeSettings
from tipqa.llm.judges.vllm import VLLMJudgeSettings

SMALL = {"backend": "openai", "model": "small", "mode": "plain", "max_words": "300"}


def error(sections: dict[str, dict[str, str]]) -> str:
    with pytest.raises(ConfigError) as info:
        read_config(sections)
    return str(info.value)


def test_without_their_sections_there_is_no_second_judge() -> None:
    config = read_config({"judge": SMALL})
    assert config.confirm_judge is None and config.audit_judge is None
    assert set(config.selected()) == {
        "corpus",
        "token_index",
        "embedder",
        "vector_index",
        "keywords",
        "judge",
    }


@pytest.mark.parametrize("section", ["judge.confirm", "audit.judge"])
def test_a_second_judge_inherits_what_it_does_not_set(section: str) -> None:
    config = read_config({"judge": SMALL, section: {"model": "big", "timeout": "5"}})
    judge = config.confirm_judge if section == "judge.confirm" else config.audit_judge
    assert judge is not None and judge.backend == "openai"
    settings = judge.settings
    assert isinstance(settings, OpenAIJudgeSettings)
    assert (settings.model, settings.mode, settings.timeout) == ("big", "plain", 5.0)
    assert config.judge.settings.model == "small"
    assert config.selected()[section] is judge


def test_another_backend_inherits_only_the_keys_it_has() -> None:
    vllm = {"backend": "vllm", "model": "small", "max_model_len": "4096", "seed": "3"}
    config = read_config({"judge": vllm, "judge.confirm": {"backend": "openai"}})
    assert config.confirm_judge is not None
    settings = config.confirm_judge.settings
    assert isinstance(settings, OpenAIJudgeSettings) and settings.model == "small"
    assert not hasattr(settings, "max_model_len") and not hasattr(settings, "seed")
    assert error({"judge": SMALL, "audit.judge": {"backend": "vllm"}}) == (
        "[audit.judge] mode = 'plain': expected one of logprobs, choice (inherited from [judge]: "
        "set mode in [audit.judge])"
    )
    vllm_audit = {"backend": "vllm", "model": "big", "mode": "choice"}
    back = read_config({"judge": SMALL, "audit.judge": vllm_audit})
    assert back.audit_judge is not None
    assert isinstance(back.audit_judge.settings, VLLMJudgeSettings)
    rules = read_config({"judge": SMALL, "judge.confirm": {"backend": "rules"}}).confirm_judge
    assert rules is not None and isinstance(rules.settings, RuleJudgeSettings)


@pytest.mark.parametrize("section", ["judge.confirm", "audit.judge"])
def test_bad_keys_and_backends_name_the_section(section: str) -> None:
    assert error({"judge": SMALL, section: {"modl": "big"}}).startswith(
        f"[{section}] unknown key 'modl'; did you mean 'model'?"
    )
    assert error({section: {"backend": "gpt"}}) == (
        f"[{section}] backend = 'gpt' is no relevance judge; known: openai, rules, vllm"
    )
    assert error({"judge": SMALL, section: {"mode": "beam"}}).startswith(
        f"[{section}] mode = 'beam'"
    )
    assert error({section: {"model": "big"}}).startswith(
        f"[{section}] 'model' is a setting of relevance judge openai, vllm"
    )
    assert error({"judge": SMALL, section: {"max_words": "10"}}).startswith(
        f"[{section}] 'max_words' is a key of [judge] only"
    )
