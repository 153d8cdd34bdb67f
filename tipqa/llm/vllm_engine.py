"""The process's one vLLM offline engine, shared by the judge and the answerer that ask for it.

An engine holds the memory it reserved (a share of the GPU, or the CPU KV cache) for as long as
it lives, so a process runs one: asking for another configuration while one runs is an error,
and `shutdown_engine` lets the running one go.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tipqa.errors import ConfigError, MissingExtraError


@dataclass(frozen=True)
class EngineConfig:
    """The arguments one `vllm.LLM` engine is created with."""

    model: str
    tensor_parallel_size: int = 1
    max_model_len: int | None = None
    dtype: str = "auto"
    gpu_memory_utilization: float = 0.9
    enforce_eager: bool = False
    seed: int = 0

    def create(self) -> Any:
        """Start the engine (imports vllm)."""
        try:
            from vllm import LLM
        except ImportError as exc:
            raise MissingExtraError("vllm", "vllm") from exc
        return LLM(**dataclasses.asdict(self))


_ENGINE: dict[EngineConfig, Any] = {}


def get_engine(config: EngineConfig) -> Any:
    """The process's one engine: created on first use, then reused by every judge or answerer
    that asks."""
    if config in _ENGINE:
        return _ENGINE[config]
    if _ENGINE:
        (running,) = _ENGINE
        raise ConfigError(
            f"one vLLM engine per process: {running} is running, cannot also start {config}"
        )
    _ENGINE[config] = config.create()
    return _ENGINE[config]


def shutdown_engine() -> bool:
    """Stop the process's engine (its worker processes too); False when none was running."""
    if not _ENGINE:
        return False
    (config,) = _ENGINE
    engine = _ENGINE.pop(config)
    core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
    if core is not None:
        core.shutdown()
    return True
