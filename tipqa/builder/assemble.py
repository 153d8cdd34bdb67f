"""A build's backends at their places, made from the steps' inputs records and the run's layout.

The step functions make their backends here; a notebook opens a build's indexes the same way,
without Luigi: `plan = Plan(load_config("luigi.cfg")); token_index(plan.token_index, plan.layout)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tipqa.audit.pool import AuditBackends
from tipqa.boundary.hub import BoundaryHub
from tipqa.builder.components import make_embedder, make_judge, make_token_index, make_vector_index
from tipqa.builder.step_inputs import (
    AsksLLM,
    AuditInputs,
    Dating,
    IndexInputs,
    TokenIndexInputs,
    TokenJudgeInputs,
    TrainingIndexInputs,
    VectorIndexInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.config import Choice, Config, read_config
from tipqa.config.files import check_config_files, luigi_files, parser_values
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.layout import RunLayout, TrainingIndexLayout
from tipqa.core.records import Question, VectorCandidates
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import FetchDocuments, RanksText, TokenIndex
from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenSettings
from tipqa.indexes.vector_index.base import EmbedsOnDemand, VectorIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.judging import Judges
from tipqa.stages.vector import search_vectors
from tipqa.training_order.base import TRAINING_ORDERS, TrainingOrder


def load_config(*paths: str | Path) -> Config:
    """The configuration in these config files, read as Luigi reads them (later files win).

    Importing Luigi reads its own config files, so they are checked first, with these.
    """
    missing = [str(path) for path in paths if not Path(path).is_file()]
    if missing:
        raise ConfigError(f"no config file at {', '.join(missing)}")
    check_config_files([*luigi_files(), *paths])
    from luigi.configuration import LuigiConfigParser

    parser = LuigiConfigParser()
    parser.read([str(path) for path in paths])
    return read_config(parser_values(parser))


def run_config(run: Path, files: Sequence[str]) -> Config:
    """The configuration that made `run` (an error when it names another run)."""
    paths = list(files) or [str(path) for path in luigi_files()]
    if not paths:
        raise ConfigError("no config file: give the build's with --config (or run in its folder)")
    config = load_config(*paths)
    if not run.is_dir():
        raise InputError("no build here (the run folder does not exist)", path=str(run))
    if config.layout().root.resolve() != run.resolve():
        raise ConfigError(
            f"the config's run is {config.layout().root}, not {run} ([build] output_root and name)"
        )
    return config


def index_place(inputs: IndexInputs, layout: RunLayout) -> IndexPlace:
    """Where the index of `inputs` lives, and the fingerprint of the build it must hold."""
    path = layout.token_index if inputs.step == Step.TOKEN_INDEX else layout.vector_index
    return IndexPlace(path, inputs.cluster, inputs.fingerprint)


def token_index(inputs: TokenIndexInputs, layout: RunLayout) -> TokenIndex:
    """The build's token index."""
    return make_token_index(inputs.token_index, index_place(inputs, layout))


def vector_index(
    inputs: VectorIndexInputs, layout: RunLayout
) -> tuple[Embedder, VectorIndex | EmbedsOnDemand]:
    """The build's embedder and vector index (loads the embedding model)."""
    embedder = make_embedder(inputs.embedder)
    return embedder, make_vector_index(inputs.vector_index, index_place(inputs, layout), embedder)


def llm_cache(inputs: AsksLLM, layout: RunLayout) -> Path | None:
    """The run's LLM cache, where the step caches its LLM answers."""
    return layout.llm_cache if inputs.llm_cache else None


@dataclass(frozen=True)
class TokenJudging:
    """The backends of token judging: the judges (the build's, and the confirming judge of its
    yes answers), and the fetch of the documents they judge."""

    judges: Judges
    fetch: FetchDocuments

    def close(self) -> None:
        """Let go of the judges' connections."""
        self.judges.close()


@dataclass(frozen=True)
class VectorJudging:
    """The backends of vector judging: the judges, and the token index's fetch of documents,
    which only says where each chunk is in its document (None: it is not said)."""

    judges: Judges
    fetch: FetchDocuments | None = None

    def close(self) -> None:
        """Let go of the judges' connections."""
        self.judges.close()


@dataclass(frozen=True)
class VectorSearching:
    """The backends of vector search: the embedder and the vector index, and the token index
    when the index embeds the token candidates on demand."""

    embedder: Embedder
    index: VectorIndex | EmbedsOnDemand
    token_index: TokenIndex | None = None


def judge_of(choice: Choice, inputs: AsksLLM, layout: RunLayout) -> RelevanceJudge:
    """The judge of `choice` for a step: the build's, or a second judge (`[judge.confirm]`,
    `[audit.judge]`), its answers in the run's one LLM cache, keyed by its model."""
    return make_judge(choice, llm_cache(inputs, layout))


def judges_of(inputs: TokenJudgeInputs | VectorJudgeInputs, layout: RunLayout) -> Judges:
    """A judging step's judges: the build's and, with `[judge.confirm]`, the confirming one."""
    confirm = None if inputs.confirm is None else judge_of(inputs.confirm, inputs, layout)
    return Judges(judge_of(inputs.judge, inputs, layout), confirm)


def token_judging(inputs: TokenJudgeInputs, layout: RunLayout) -> TokenJudging:
    """Token judging's backends: its judges (answers cached), the judged documents' fetch."""
    return TokenJudging(judges_of(inputs, layout), token_index(inputs.documents, layout).get)


def vector_judging(inputs: VectorJudgeInputs, layout: RunLayout) -> VectorJudging:
    """Vector judging's backends: its judges (answers cached), the documents' fetch."""
    return VectorJudging(judges_of(inputs, layout), token_index(inputs.documents, layout).get)


def vector_searching(inputs: VectorSearchInputs, layout: RunLayout) -> VectorSearching:
    """Vector search's backends; the token index too when the vector index embeds on demand."""
    embedder, index = vector_index(inputs.index, layout)
    tokens = None if inputs.tokens is None else token_index(inputs.tokens, layout)
    return VectorSearching(embedder, index, tokens)


def text_ranker(inputs: TokenIndexInputs, index: TokenIndex) -> RanksText | None:
    """The token index as a BM25 ranker of texts, when it is one (Elasticsearch: with `bm25`)."""
    settings = inputs.token_index.settings
    if isinstance(settings, ElasticsearchTokenSettings) and not settings.bm25:
        return None
    return index if isinstance(index, RanksText) else None


def auditing(inputs: AuditInputs, layout: RunLayout) -> AuditBackends:
    """The audit's backends: the build's judge (answers cached), token index and vector search
    (its embedder loaded at the first search; the token index too where the vector index
    embeds the token candidates on demand), and the judge audit's judge of `[audit.judge]`."""
    index = token_index(inputs.tokens, layout)

    def nearest(questions: list[Question], k: int) -> list[VectorCandidates]:
        embedder, vectors = vector_index(inputs.vectors, layout)
        tokens = index if isinstance(vectors, EmbedsOnDemand) else None
        stats = StepStats(Step.AUDIT)
        return search_vectors(questions, embedder, vectors, k, stats, token_index=tokens)

    judge = judge_of(inputs.judge, inputs, layout)
    second = None if inputs.audit_judge is None else judge_of(inputs.audit_judge, inputs, layout)
    return AuditBackends(judge, index, text_ranker(inputs.tokens, index), nearest, second)


def training_index_place(inputs: TrainingIndexInputs, layout: RunLayout) -> TrainingIndexLayout:
    """Where the stream's anchor index lives: `index_dir`, else one folder per stream."""
    if inputs.indexed.index_dir:
        return TrainingIndexLayout(Path(inputs.indexed.index_dir))
    return layout.training_index(inputs.fingerprint[:16])


def training_order(
    order: Choice, index: TrainingIndexInputs | None, layout: RunLayout
) -> TrainingOrder:
    """The training order (given its index's place when it keeps one)."""
    runtime: dict[str, Path] = {}
    if index is not None:
        runtime["index_dir"] = training_index_place(index, layout).root
    return TRAINING_ORDERS.create(order.backend, order.settings, **runtime)


def hub_extension(dating: Dating | None, layout: RunLayout, repo_id: str) -> BoundaryHub | None:
    """The Hub folder's boundary configurations and card section, when the boundary is built."""
    if dating is None:
        return None
    return BoundaryHub(layout, dating.checkpoints, dating.order.to_dict(), repo_id)
