"""Where a run keeps its files: one place that names every output path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunLayout:
    """The output tree of one run under `root/run`."""

    root: Path

    @classmethod
    def of(cls, output_root: str | Path, run: str) -> RunLayout:
        """The layout of run `run` under `output_root`."""
        return cls(Path(output_root) / run)

    @property
    def world(self) -> Path:
        """The demo world (corpus files, questions, expected labels)."""
        return self.root / "world"

    @property
    def token_index(self) -> Path:
        """The embedded token index."""
        return self.root / "index" / "token"

    @property
    def vector_index(self) -> Path:
        """The embedded vector index."""
        return self.root / "index" / "vector"

    @property
    def llm_cache(self) -> Path:
        """The persistent cache of LLM calls (shared by all shards)."""
        return self.root / "llm-cache.sqlite"

    def pool(self, name: str) -> PoolLayout:
        """The files of question pool `name` (for example TriviaQA's dev or train set)."""
        return PoolLayout(self.root / "pools" / name)

    @property
    def splits(self) -> Path:
        """The benchmark's train / validation / test splits."""
        return self.root / "splits"


@dataclass(frozen=True)
class PoolLayout:
    """One question pool: its questions, its shards, and its partition."""

    root: Path

    @property
    def questions(self) -> Path:
        """The pool's questions, normalised to `Question` records."""
        return self.root / "questions.jsonl"

    def shard(self, index: int) -> ShardLayout:
        """The files of question shard `index`."""
        return ShardLayout(self.root / "shards" / f"shard-{index:05d}")

    @property
    def partition(self) -> Path:
        """The pool's partition: one file per label, instances, stats, a DatasetDict."""
        return self.root / "partition"


@dataclass(frozen=True)
class ShardLayout:
    """The files one question shard goes through, stage by stage."""

    root: Path

    def data(self, step: str) -> Path:
        """The main JSONL output of `step`."""
        return self.root / f"{step}.jsonl"

    def stats(self, step: str) -> Path:
        """The stats file of `step`."""
        return self.root / f"{step}.stats.json"
