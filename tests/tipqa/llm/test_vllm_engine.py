import importlib.util

import pytest

from tipqa.core.errors import MissingExtraError
from tipqa.llm import vllm_engine
from tipqa.llm.vllm_engine import EngineConfig, get_engine, shutdown_engine

HAVE_VLLM = importlib.util.find_spec("vllm") is not None


def test_engine_config_is_hashable_and_compares_by_value() -> None:
    assert EngineConfig("m", max_model_len=512) == EngineConfig("m", max_model_len=512)
    assert len({EngineConfig("m"), EngineConfig("m"), EngineConfig("m", seed=1)}) == 2


def test_no_engine_to_shut_down() -> None:
    assert not vllm_engine._ENGINE
    assert shutdown_engine() is False


@pytest.mark.skipif(HAVE_VLLM, reason="vllm is installed here")
def test_missing_vllm_names_the_extra_and_keeps_no_engine() -> None:
    with pytest.raises(MissingExtraError, match=r"tipqa\[vllm\]"):
        get_engine(EngineConfig("some/model"))
    assert not vllm_engine._ENGINE
