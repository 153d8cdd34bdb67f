"""What each step of a build reads, declared once (the plan builds these records).

A record holds the settings that decide the step's output and the fingerprints of the steps it
reads; its `record` is the step's `StepRecord`. A pool's record has no shard; `at(shard)` gives
one shard's (its inputs also name the shard).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, cast

from tipqa.build.components import window_settings
from tipqa.config import Choice, VectorChunkingSettings
from tipqa.config.pools import Pool
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepInputs
from tipqa.core.steps import Step
from tipqa.core.text import word_count
from tipqa.indexes.embedders.base import KnowsSequenceLength
from tipqa.llm.judges.base import JUDGES, Prompted
from tipqa.llm.prompts import load_template
from tipqa.sources.demo.world import DemoSettings
from tipqa.stages.windows import WindowSettings, WindowStepSettings


@dataclass(frozen=True)
class WorldInputs(StepInputs):
    """The demo world: its settings, and k1 (it sizes the discarded cases)."""

    step: ClassVar[str] = Step.WORLD
    demo: DemoSettings
    k1: int

    def settings(self) -> dict[str, Any]:
        return {"demo": self.demo.identity(), "k1": self.k1}


@dataclass(frozen=True)
class QuestionsInputs(StepInputs):
    """A pool's questions: the pool's settings and raw input (`source`), and the shard size."""

    step: ClassVar[str] = Step.QUESTIONS
    pool: Pool
    shard_size: int
    source: Any

    def settings(self) -> dict[str, Any]:
        return {"pool": self.pool.identity(), "shard_size": self.shard_size}

    def upstream(self) -> dict[str, Any]:
        return {"source": self.source}


@dataclass(frozen=True)
class IndexInputs(StepInputs):
    """An index build's corpus (and, for Elasticsearch, the cluster's identity)."""

    corpus: dict[str, Any]
    elasticsearch: dict[str, Any] | None

    def upstream(self) -> dict[str, Any]:
        cluster = {} if self.elasticsearch is None else {"elasticsearch": self.elasticsearch}
        return {"corpus": self.corpus, **cluster}


@dataclass(frozen=True)
class TokenIndexInputs(IndexInputs):
    """The token index: the index backend's build settings, over the corpus."""

    step: ClassVar[str] = Step.TOKEN_INDEX
    token_index: Choice

    def settings(self) -> dict[str, Any]:
        return {"token_index": self.token_index.build_identity()}


@dataclass(frozen=True)
class VectorIndexInputs(IndexInputs):
    """The vector index: the embedder (passages), the index and the chunking, over the corpus."""

    step: ClassVar[str] = Step.VECTOR_INDEX
    embedder: Choice
    vector_index: Choice
    vector_chunking: VectorChunkingSettings

    def settings(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder.build_identity(),
            "vector_index": self.vector_index.build_identity(),
            "chunking": self.vector_chunking.identity(),
        }


@dataclass(frozen=True)
class ShardInputs(StepInputs):
    """A shard step's inputs: a pool's (`shard` None), or one shard's."""

    shard: int | None = field(default=None, kw_only=True)

    def at(self, shard: int) -> Self:
        """The same inputs for one shard of the pool."""
        return dataclasses.replace(self, shard=shard)

    def upstream(self) -> dict[str, Any]:
        """The steps read, and the shard's number when it is one shard's."""
        shard = {} if self.shard is None else {"shard": self.shard}
        return {**self.reads(), **shard}

    def reads(self) -> dict[str, Any]:
        """The fingerprints of the steps this one reads."""
        raise NotImplementedError


@dataclass(frozen=True)
class KeywordsInputs(ShardInputs):
    """Keyword extraction: the extractor, over the pool's questions."""

    step: ClassVar[str] = Step.KEYWORDS
    keywords: Choice
    questions: str

    def settings(self) -> dict[str, Any]:
        return {"keywords": self.keywords.identity()}

    def reads(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions}


@dataclass(frozen=True)
class TokenSearchInputs(ShardInputs):
    """Token search: k1 and the token index's search settings, over the keywords."""

    step: ClassVar[str] = Step.TOKEN_SEARCH
    k1: int
    token_index: Choice
    keywords: str
    index_build: str

    def settings(self) -> dict[str, Any]:
        return {"k1": self.k1, "token_index": self.token_index.identity()}

    def reads(self) -> dict[str, Any]:
        return {Step.KEYWORDS: self.keywords, Step.TOKEN_INDEX: self.index_build}


def judge_all_setting(judge_all: bool) -> dict[str, Any]:
    """`[boundary] judge_all_candidates`, only when on (so builds without it keep theirs)."""
    return {"judge_all_candidates": True} if judge_all else {}


@dataclass(frozen=True)
class TokenJudgeInputs(ShardInputs):
    """Token judging: the judge, its windows and early exit, over the token search (its k1)."""

    step: ClassVar[str] = Step.TOKEN_JUDGE
    judge: Choice
    windows: WindowStepSettings
    judge_all: bool
    search: TokenSearchInputs

    @property
    def k1(self) -> int:
        """The candidates judged per question: the token search's k1."""
        return self.search.k1

    def window_limits(self) -> WindowSettings:
        """The judge-window limits (`max_words` from the judge's context when unset)."""
        return window_settings(self.windows, self.judge)

    def settings(self) -> dict[str, Any]:
        identity = {"judge": self.judge.identity(), "windows": self.windows.identity()}
        return {**identity, **judge_all_setting(self.judge_all)}

    def reads(self) -> dict[str, Any]:
        return {Step.TOKEN_SEARCH: self.search.record.fingerprint}


@dataclass(frozen=True)
class VectorSearchInputs(ShardInputs):
    """Vector search: k2, the embedder and the vector index, over the token decisions.

    `token_index` is the token index build's fingerprint when the vector stage embeds the
    token candidates on demand (`[vector_index] backend = candidates`), else None.
    """

    step: ClassVar[str] = Step.VECTOR_SEARCH
    k2: int
    embedder: Choice
    vector_index: Choice
    judged: str
    index_build: str
    token_index: str | None

    def settings(self) -> dict[str, Any]:
        return {
            "k2": self.k2,
            "embedder": self.embedder.identity(),
            "vector_index": self.vector_index.identity(),
        }

    def reads(self) -> dict[str, Any]:
        found: dict[str, Any] = {Step.TOKEN_JUDGE: self.judged, Step.VECTOR_INDEX: self.index_build}
        return found if self.token_index is None else {**found, Step.TOKEN_INDEX: self.token_index}


@dataclass(frozen=True)
class VectorJudgeInputs(ShardInputs):
    """Vector judging: the judge, over the vector candidates."""

    step: ClassVar[str] = Step.VECTOR_JUDGE
    judge: Choice
    search: str

    def settings(self) -> dict[str, Any]:
        return {"judge": self.judge.identity()}

    def reads(self) -> dict[str, Any]:
        return {Step.VECTOR_SEARCH: self.search}


@dataclass(frozen=True)
class PreviewInputs(StepInputs):
    """PreviewCost: the judge and its windows, k1 and k2, the corpus sample (share and seed),
    the token index and embedder, over a pool's questions and keywords and the corpus."""

    step: ClassVar[str] = Step.COST_PREVIEW
    judge: Choice
    windows: WindowStepSettings
    judge_all: bool
    k1: int
    k2: int
    share: float
    seed: int
    token_index: Choice
    embedder: Choice
    reader: Choice
    questions: str
    keywords: str
    corpus: dict[str, Any]

    def settings(self) -> dict[str, Any]:
        return {
            "judge": self.judge.identity(),
            "windows": self.windows.identity(),
            "k1": self.k1,
            "k2": self.k2,
            "cost_sample": self.share,
            "cost_seed": self.seed,
            "token_index": self.token_index.identity(),
            "embedder": self.embedder.identity(),
            **judge_all_setting(self.judge_all),
        }

    def upstream(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions, Step.KEYWORDS: self.keywords, "corpus": self.corpus}

    def window_limits(self) -> WindowSettings:
        """The judge-window limits (`max_words` from the judge's context when unset)."""
        return window_settings(self.windows, self.judge)

    def prompt_words(self) -> int:
        """The words of the judge's prompt template (0 for a judge without a prompt)."""
        if not JUDGES.has(self.judge.backend, "prompted"):
            return 0
        return word_count(load_template(cast(Prompted, self.judge.settings).prompt).text)

    def chunk_tokens(self) -> int:
        """The embedder's chunk size in tokens (ConfigError when it cannot tell)."""
        settings = self.embedder.settings
        if not isinstance(settings, KnowsSequenceLength):
            raise ConfigError(f"embedder {self.embedder.backend!r} cannot tell its chunk size")
        return settings.max_seq_length()
