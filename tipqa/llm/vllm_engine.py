"""The process's one vLLM offline engine, shared by the judge and the answerer that ask for it.

An engine holds the memory it reserved (a share of the GPU, or the CPU KV cache) for as long as
it lives, so a process runs one: asking for another configuration while one runs is an error,
and `shutdown_engine` lets the running one go. Where engines of several processes could meet on
one GPU (`--workers N`), `place_engines` names the host's GPU slots: an engine then starts only
on a slot it holds (`tipqa.llm.gpu_slots`), and lets it go when it stops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.llm.gpu_slots import Claim, GpuSlots, claim_slot


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
_CLAIM: list[Claim] = []
_PLACEMENT: list[GpuSlots] = []


def place_engines(slots: GpuSlots | None) -> None:
    """Start this process's engines on the GPU slots of `slots` (None: vLLM's default devices)."""
    _PLACEMENT[:] = [slots] if slots is not None else []


def running(config: EngineConfig) -> bool:
    """Whether the process's engine for `config` is already started."""
    return config in _ENGINE


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
    claim = claim_slot(_PLACEMENT[0], config.tensor_parallel_size) if _PLACEMENT else None
    try:
        _ENGINE[config] = config.create()
    except BaseException:
        if claim is not None:
            claim.release()
        raise
    _CLAIM[:] = [claim] if claim is not None else []
    return _ENGINE[config]


def shutdown_engine() -> bool:
    """Stop the process's engine (its worker processes too) and let its GPU slot go; False when
    none was running."""
    if not _ENGINE:
        return False
    (config,) = _ENGINE
    engine = _ENGINE.pop(config)
    core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
    if core is not None:
        core.shutdown()
    for claim in _CLAIM:
        claim.release()
    _CLAIM.clear()
    return True


@contextmanager
def engine_scope(slots: GpuSlots, per_engine: int) -> Iterator[None]:
    """Run a step whose engine (if it starts one) goes on a GPU slot of `slots`.

    In a process of its own (`slots.parallel`: a task of `--workers N`), the engine is stopped
    when the step ends, so that its GPU and slot are free before the process exits; a build
    of one process keeps it for the next step. Refuses at once what cannot be placed (no
    `[resources] gpu` with parallel workers).
    """
    if slots.parallel or slots.gpus is not None:
        slots.devices(per_engine)
    place_engines(slots)
    try:
        yield
    finally:
        if slots.parallel:
            shutdown_engine()
        place_engines(None)
