"""A configured build's backends at their places, made from its config and plan.

The Luigi tasks call these; a notebook calls the same to open a build's indexes without Luigi:
`config = load_config("luigi.cfg"); token_index(config, Plan(config))`.
"""

from __future__ import annotations

from pathlib import Path

from luigi.configuration import LuigiConfigParser

from tipqa.boundary.hub import BoundaryHub
from tipqa.build import indexes
from tipqa.build.components import make_embedder, make_judge, make_token_index, make_vector_index
from tipqa.build.plan import Plan
from tipqa.build.shard_steps import Judging, VectorSearching
from tipqa.config import Choice, Config, read_config
from tipqa.core.errors import ConfigError
from tipqa.core.layout import TrainingIndexLayout
from tipqa.core.steps import Step
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.indexes.vector_index.base import VECTOR_INDEXES, EmbedsOnDemand, VectorIndex
from tipqa.training_order.base import TRAINING_ORDERS, IndexedOrderSettings, TrainingOrder


def load_config(*paths: str | Path) -> Config:
    """The configuration in these config files, read as Luigi reads them (later files win)."""
    parser = LuigiConfigParser()
    missing = [str(path) for path in paths if not Path(path).is_file()]
    if missing:
        raise ConfigError(f"no config file at {', '.join(missing)}")
    parser.read([str(path) for path in paths])
    return read_config({name: dict(parser.items(name)) for name in parser.sections()})


def index_place(step: str, config: Config, plan: Plan) -> IndexPlace:
    """Where the index of `step` lives, and the fingerprint of the build it must hold."""
    layout = config.layout()
    path = layout.token_index if step == Step.TOKEN_INDEX else layout.vector_index
    return IndexPlace(path, config.elasticsearch, plan.index(step).fingerprint)


def token_index(config: Config, plan: Plan) -> TokenIndex:
    """The build's token index."""
    return make_token_index(config.token_index, index_place(Step.TOKEN_INDEX, config, plan))


def vector_index(config: Config, plan: Plan) -> tuple[Embedder, VectorIndex | EmbedsOnDemand]:
    """The build's embedder and vector index (loads the embedding model)."""
    embedder = make_embedder(config.embedder)
    place = index_place(Step.VECTOR_INDEX, config, plan)
    return embedder, make_vector_index(config.vector_index, place, embedder)


def llm_cache(config: Config) -> Path | None:
    """The build's LLM cache file, unless `[judge] cache` is off."""
    return config.layout().llm_cache if config.judging.cache else None


def judging(judge: Choice, config: Config, plan: Plan) -> Judging:
    """A judging step's backends: the judge of `judge` (answers cached), the documents' fetch."""
    return Judging(make_judge(judge, llm_cache(config)), token_index(config, plan).get)


def vector_searching(config: Config, plan: Plan) -> VectorSearching:
    """Vector search's backends; the token index too when the vector index embeds on demand."""
    embedder, index = vector_index(config, plan)
    tokens = token_index(config, plan) if isinstance(index, EmbedsOnDemand) else None
    return VectorSearching(embedder, index, tokens)


def builds_in_parts(step: str, config: Config) -> bool:
    """True when the configured backend of the index `step` builds in parts."""
    if step == Step.TOKEN_INDEX:
        return indexes.builds_in_parts(TOKEN_INDEXES.resolve(config.token_index.backend))
    return indexes.builds_in_parts(VECTOR_INDEXES.resolve(config.vector_index.backend))


def training_index_place(config: Config, plan: Plan) -> TrainingIndexLayout:
    """Where the stream's anchor index lives: `index_dir`, else one folder per stream."""
    record = plan.training_index
    choice = config.training_order
    if choice is None or record is None or not isinstance(choice.settings, IndexedOrderSettings):
        raise ConfigError("this [training_order] backend keeps no index of a training stream")
    if choice.settings.index_dir:
        return TrainingIndexLayout(Path(choice.settings.index_dir))
    return config.layout().training_index(record.fingerprint[:16])


def training_order(config: Config, plan: Plan) -> TrainingOrder:
    """The configured training order (given its index's place when it keeps one)."""
    choice = config.training_order
    if choice is None:
        raise ConfigError("no [training_order] section: the boundary steps do not run")
    runtime: dict[str, Path] = {}
    if plan.training_index is not None:
        runtime["index_dir"] = training_index_place(config, plan).root
    return TRAINING_ORDERS.create(choice.backend, choice.settings, **runtime)


def hub_extension(config: Config) -> BoundaryHub | None:
    """The Hub folder's boundary configurations and card section, when configured."""
    if config.training_order is None:
        return None
    order = config.training_order.to_dict()
    return BoundaryHub(config.layout(), config.boundary.steps(), order, config.hub.repo_id)
