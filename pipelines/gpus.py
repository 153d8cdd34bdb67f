"""Steps whose backend may run on vLLM's offline engine: the Luigi resource `gpu`, the GPU slots.

Such a step declares `resources = {"gpu": tensor_parallel_size}`, so that the scheduler (the
local one, or luigid: it reads `[resources] gpu` from its own configuration) runs at most that
many GPUs' worth at once, and runs inside `engine_scope`, which binds its engine to a free GPU
slot of this host (`tipqa.llm.gpu_slots`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import luigi.configuration

from tipqa.config import Choice
from tipqa.core.errors import ConfigError, TipqaError
from tipqa.core.layout import RunLayout
from tipqa.llm.gpu_slots import GpuSlots, slot_folder
from tipqa.llm.vllm_chat import VLLMEngineSettings
from tipqa.llm.vllm_engine import engine_scope

GPU = "gpu"
_MAIN_PID = os.getpid()


def engine_gpus(choice: Choice) -> int:
    """GPUs one engine of this backend takes; 0 when it starts no offline engine."""
    settings = choice.settings
    return settings.tensor_parallel_size if isinstance(settings, VLLMEngineSettings) else 0


def gpu_resources(choice: Choice) -> dict[str, int]:
    """The Luigi resources of a step asking `choice`'s backend: `tensor_parallel_size` of the
    `gpu` resource where `[resources] gpu` is set (else none: one process needs no sharing,
    and parallel workers are refused an engine)."""
    gpus = engine_gpus(choice)
    return {GPU: gpus} if gpus and configured_gpus() is not None else {}


def step_gpus(asks: Callable[[], Choice]) -> dict[str, int]:
    """A task's `resources`: `gpu_resources` of the backend `asks()` names, or none when the
    plan cannot be made. Luigi reads `resources` while scheduling, outside the `complete()`
    check that reports the same configuration or input error in one line (exit 35)."""
    try:
        choice = asks()
    except TipqaError:
        return {}
    return gpu_resources(choice)


def configured_gpus() -> int | None:
    """`[resources] gpu` of the Luigi configuration, None when unset."""
    parser = luigi.configuration.get_config()
    if not parser.has_option("resources", GPU):
        return None
    value = parser.get("resources", GPU)
    try:
        count = int(value)
    except ValueError:
        raise ConfigError(f"[resources] gpu must be a whole number, got {value!r}") from None
    if count < 1:
        raise ConfigError(f"[resources] gpu must be >= 1, got {count}")
    return count


def gpu_slots(layout: RunLayout) -> GpuSlots:
    """This host's GPU slots for the build (a forked task process: parallel workers), kept
    under the output root of the run `layout`."""
    folder = slot_folder(layout.root.parent)
    return GpuSlots(folder, configured_gpus(), parallel=os.getpid() != _MAIN_PID)


@contextmanager
def on_gpu(choice: Choice, layout: RunLayout) -> Iterator[None]:
    """Run a step of `choice`'s backend: on a GPU slot when it is the offline engine."""
    gpus = engine_gpus(choice)
    if not gpus:
        yield
        return
    with engine_scope(gpu_slots(layout), gpus):
        yield
