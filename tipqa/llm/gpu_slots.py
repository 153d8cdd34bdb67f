"""GPU slots for vLLM offline engines: never two engines on one GPU, whatever `--workers` says.

With `--workers N` Luigi runs each task in a forked process, and every judge (or keyword) task
on the offline engine starts an engine of its own. Two guards keep them apart: the tasks declare
the Luigi resource `gpu` (`[resources] gpu = <GPUs>`: the scheduler runs at most that many GPUs'
worth of them at once), and each engine, before vLLM starts, takes an exclusive lock on a free
slot file and sets `CUDA_VISIBLE_DEVICES` to that slot's GPUs. A slot is `tensor_parallel_size`
GPUs. The lock files live in `<output_root>/gpu-slots/<host>/`, one folder per host, so that
hosts sharing an output root never wait for each other's GPUs; `claims.jsonl` there records
which process held which slot, and when.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from tipqa.core.errors import ConfigError, TipqaError

VISIBLE = "CUDA_VISIBLE_DEVICES"
POLL_SECONDS = 0.5
WAIT_SECONDS = 900.0
CLAIMS = "claims.jsonl"
_INHERITED = os.environ.get(VISIBLE)  # before a claim of this process narrows it


def slot_folder(output_root: str | os.PathLike[str]) -> Path:
    """This host's folder of GPU slot locks under an output root."""
    return Path(output_root) / "gpu-slots" / socket.gethostname()


@dataclass(frozen=True)
class GpuSlots:
    """Where engines of this process may go: the host's GPUs and the folder of their locks.

    `gpus`: the GPUs the build may use on this host (`[resources] gpu`), None when unset;
    `parallel`: tasks run in processes of their own (`--workers` > 1).
    """

    folder: Path
    gpus: int | None
    parallel: bool
    wait_seconds: float = WAIT_SECONDS

    def devices(self, per_engine: int) -> list[list[str]]:
        """The GPUs of each slot (CUDA_VISIBLE_DEVICES' numbering, else 0..gpus-1)."""
        if self.gpus is None:
            raise ConfigError(
                "vLLM offline engine under --workers > 1 without a GPU count: set "
                "`[resources] gpu = <GPUs of this node>` in the Luigi configuration (each engine "
                "then takes its own GPUs), or run with --workers 1, or serve the model with "
                "vLLM's OpenAI-compatible server and set [judge] backend = openai (docs/scale.md)"
            )
        if per_engine < 1 or self.gpus < per_engine:
            raise ConfigError(
                f"[resources] gpu = {self.gpus} leaves no room for an engine on {per_engine} "
                "GPUs (tensor_parallel_size): raise it to the node's GPU count"
            )
        listed = (_INHERITED or "").strip()
        visible = [d.strip() for d in listed.split(",") if d.strip()] if listed else []
        if not visible:
            visible = [str(i) for i in range(self.gpus)]
        if len(visible) < self.gpus:
            raise ConfigError(
                f"[resources] gpu = {self.gpus} but {VISIBLE}={listed} lists {len(visible)} "
                "GPUs: make them agree"
            )
        count = self.gpus // per_engine
        return [visible[i * per_engine : (i + 1) * per_engine] for i in range(count)]


@dataclass
class Claim:
    """A GPU slot held by this process (its lock stays taken until `release`)."""

    slot: int
    devices: list[str]
    folder: Path
    descriptor: int = field(repr=False)
    claimed_at: float = field(default_factory=time.time)
    released: bool = False

    def release(self) -> None:
        """Let the slot go (the engine on it has stopped)."""
        if self.released:
            return
        _log(self.folder, {"event": "released", "slot": self.slot, "pid": os.getpid()})
        fcntl.flock(self.descriptor, fcntl.LOCK_UN)
        os.close(self.descriptor)
        self.released = True


def _log(folder: Path, entry: dict[str, object]) -> None:
    """Append one line to the slot folder's record of claims."""
    line = orjson.dumps({**entry, "at": time.time()}) + b"\n"
    with open(folder / CLAIMS, "ab") as record:
        record.write(line)


def _try_lock(path: Path) -> int | None:
    """The descriptor of the slot file, locked for this process; None when another holds it."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


def claim_slot(slots: GpuSlots, per_engine: int) -> Claim | None:
    """Take a free slot and point CUDA_VISIBLE_DEVICES at its GPUs (before vLLM starts).

    One process without `[resources] gpu` claims nothing: its engine takes vLLM's default
    devices, and no other engine of the build runs beside it. Waits while every slot is held
    (an engine still stopping), then fails saying so.
    """
    if slots.gpus is None and not slots.parallel:
        return None
    groups = slots.devices(per_engine)
    slots.folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + slots.wait_seconds
    while True:
        for index, devices in enumerate(groups):
            descriptor = _try_lock(slots.folder / f"slot-{index}.lock")
            if descriptor is not None:
                os.environ[VISIBLE] = ",".join(devices)
                entry = {"event": "claimed", "slot": index, "devices": devices}
                _log(slots.folder, {**entry, "pid": os.getpid()})
                return Claim(index, devices, slots.folder, descriptor)
        if time.monotonic() > deadline:
            raise TipqaError(
                f"no free GPU slot in {slots.folder} after {slots.wait_seconds:.0f} s: "
                f"{len(groups)} slots, all held; is [resources] gpu larger in luigid's "
                "configuration than on this host?"
            )
        time.sleep(POLL_SECONDS)


def read_claims(folder: Path) -> list[dict[str, object]]:
    """Every claim and release recorded in a slot folder, in order."""
    path = folder / CLAIMS
    if not path.is_file():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
