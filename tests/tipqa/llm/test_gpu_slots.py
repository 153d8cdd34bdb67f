"""GPU slots: one engine per slot across processes, CUDA_VISIBLE_DEVICES bound, clear refusals."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError
from tipqa.llm import gpu_slots, vllm_engine
from tipqa.llm.gpu_slots import VISIBLE, GpuSlots, claim_slot, read_claims
from tipqa.llm.vllm_engine import EngineConfig, engine_scope, get_engine


def _hold(folder: str, seconds: float, queue: multiprocessing.Queue) -> None:
    """Claim the one slot in a process of its own, hold it, report the devices."""
    claim = claim_slot(GpuSlots(Path(folder), 1, parallel=True), 1)
    assert claim is not None
    queue.put((time.time(), claim.devices, os.environ[VISIBLE]))
    time.sleep(seconds)
    claim.release()


def test_two_processes_take_one_slot_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu_slots, "_INHERITED", None)
    monkeypatch.delenv(VISIBLE, raising=False)
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue = context.Queue()
    workers = [context.Process(target=_hold, args=(str(tmp_path), 0.6, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    (first, devices, visible), (second, _, _) = sorted(queue.get() for _ in workers)
    assert devices == ["0"] and visible == "0"
    assert second - first >= 0.5
    claims = read_claims(tmp_path)
    events = [entry["event"] for entry in claims]
    assert events == ["claimed", "released", "claimed", "released"]


def test_slots_follow_visible_devices_and_tensor_parallelism(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VISIBLE, "")
    monkeypatch.setattr(gpu_slots, "_INHERITED", "4,5,6,7")
    slots = GpuSlots(tmp_path, 4, parallel=True)
    assert slots.devices(2) == [["4", "5"], ["6", "7"]]
    first, second = claim_slot(slots, 2), claim_slot(slots, 2)
    assert first is not None and second is not None
    assert (first.devices, second.devices) == (["4", "5"], ["6", "7"])
    assert os.environ[VISIBLE] == "6,7"
    first.release()
    second.release()


def test_refusals_say_what_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_slots, "_INHERITED", None)
    with pytest.raises(ConfigError, match=r"\[resources\] gpu"):
        claim_slot(GpuSlots(tmp_path, None, parallel=True), 1)
    with pytest.raises(ConfigError, match="tensor_parallel_size"):
        GpuSlots(tmp_path, 1, parallel=True).devices(2)
    monkeypatch.setattr(gpu_slots, "_INHERITED", "0")
    with pytest.raises(ConfigError, match="agree"):
        GpuSlots(tmp_path, 2, parallel=True).devices(1)
    assert claim_slot(GpuSlots(tmp_path, None, parallel=False), 1) is None
    refused = pytest.raises(ConfigError, match=r"\[resources\] gpu")
    with refused, engine_scope(GpuSlots(tmp_path, None, parallel=True), 1):
        pass


def test_a_failed_engine_start_lets_its_slot_go(tmp_path: Path) -> None:
    scope = engine_scope(GpuSlots(tmp_path, 1, parallel=False), 1)
    with scope, pytest.raises(Exception):  # noqa: B017 (no vllm here, or no such model there)
        get_engine(EngineConfig(str(tmp_path / "no-model")))
    assert not vllm_engine._ENGINE
    assert [entry["event"] for entry in read_claims(tmp_path)] == ["claimed", "released"]
