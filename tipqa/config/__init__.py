"""A build's configuration: every section of a config file read strictly into typed settings.

`read_config` takes the sections of a Luigi-style config file (a mapping of section name to
raw key/value strings) and returns one frozen `Config`. Each seam's section names its backend
(`backend`, or `source` for the corpus) and holds that backend's settings plus the step's own
keys; question pools are `[pool.NAME]` sections or the JSON `[questions] pools`. An unknown
key, a value of the wrong type, an unknown backend or a section name close to one of ours (a
fixed name, or a member of a family of sections: `SECTION_FAMILIES`) is a `ConfigError` naming
section, key and value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tipqa.annotation.labelstudio_server import LabelStudioSettings
from tipqa.annotation.settings import AnnotationSettings
from tipqa.audit.settings import AuditSettings
from tipqa.boundary.build import BoundarySettings
from tipqa.config.judges import AUDIT_JUDGE, CONFIRM_JUDGE, SECOND_JUDGES, read_second_judge
from tipqa.config.pools import POOL_PREFIX, Pool, read_pools, selected
from tipqa.config.sections import check_section_names, ours
from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.core.layout import RunLayout
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings, check_no_inline_comment, knob, parse, setting
from tipqa.dataset.splits import SplitSettings
from tipqa.evaluate.settings import ANSWERER_SECTION, EvaluateSettings
from tipqa.hub.settings import HubSettings
from tipqa.indexes.embedders.base import EMBEDDERS
from tipqa.indexes.es.client import EsConnection
from tipqa.indexes.token_index.base import TOKEN_INDEXES
from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenSettings
from tipqa.indexes.vector_index.base import VECTOR_INDEXES
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.llm.judges.base import JUDGES
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS
from tipqa.sources.corpus.base import CORPUS_READERS
from tipqa.sources.corpus.files import FileCorpusSettings, FileGroupSettings
from tipqa.sources.demo.world import DEMO, DemoSettings
from tipqa.stages.windows import WindowStepSettings
from tipqa.training_order.base import TRAINING_ORDERS

Sections = Mapping[str, Mapping[str, Any]]
CORPUS_GROUP_PREFIX = "corpus."
S = TypeVar("S", bound=Settings)


@dataclass(frozen=True)
class BuildSettings(Settings):
    """[build]: where a run's outputs go, and the sizes of Algorithm 1."""

    name: str = knob("demo", doc="run name: outputs go to <output_root>/<name>")
    output_root: str = knob("outputs", doc="the folder of every run's outputs")
    shard_size: int = setting(200, doc="questions per shard (a failure costs one shard)")
    k1: int = setting(100, doc="token-stage documents judged at most")
    k2: int = setting(10, doc="vector-stage chunks judged")
    cost_sample: float = setting(
        0.05, doc="PreviewCost: the share of the corpus's documents it indexes and scales from"
    )
    cost_seed: int = setting(0, doc="PreviewCost: the seed of its corpus sample")
    llm_cache: bool = knob(
        True, doc="keep every LLM answer (judge, keywords, evaluated model) in the run's llm-cache"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.name or "/" in self.name:
            raise ConfigError(f"[build] name {self.name!r} must be a non-empty folder name")
        if min(self.shard_size, self.k1, self.k2) < 1:
            raise ConfigError("[build] shard_size, k1 and k2 must be at least 1")
        if not 0 < self.cost_sample <= 1:
            raise ConfigError(f"[build] cost_sample = {self.cost_sample}: a share in (0, 1]")


@dataclass(frozen=True)
class VectorChunkingSettings(Settings):
    """[vector_index] keys of the index build itself, whatever the backend."""

    chunk_overlap_tokens: int = setting(0, doc="tokens shared by consecutive chunks")
    max_document_chars: int = setting(
        0,
        doc="embed at most the first this many characters of a document (0: no cap); a "
        "document cut is named in a warning and counted (`document_cut`), as is one of over "
        "a million characters when there is no cap",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.chunk_overlap_tokens < 0 or self.max_document_chars < 0:
            raise ConfigError(
                "[vector_index] chunk_overlap_tokens and max_document_chars must be 0 or more"
            )

    def identity(self) -> dict[str, Any]:
        """The chunking's part of a fingerprint; `max_document_chars` only when set (so the
        builds without a cap keep theirs)."""
        identity = super().identity()
        if not self.max_document_chars:
            identity.pop("max_document_chars")
        return identity


@dataclass(frozen=True)
class Choice:
    """A seam's backend, chosen by name, with its settings."""

    backend: str
    settings: Settings

    def identity(self) -> dict[str, Any]:
        """The backend and what of its settings decides a step's output."""
        return {"backend": self.backend, **self.settings.identity()}

    def build_identity(self) -> dict[str, Any]:
        """The backend and what of its settings decides an index build."""
        return {"backend": self.backend, **self.settings.build_identity()}

    def to_dict(self) -> dict[str, Any]:
        """The backend and all its settings (for stats files)."""
        return {"backend": self.backend, **self.settings.to_dict()}


@dataclass(frozen=True)
class Config:
    """Every setting of a build, typed and checked."""

    build: BuildSettings
    demo: DemoSettings
    pools: tuple[Pool, ...]
    corpus: Choice
    token_index: Choice
    embedder: Choice
    vector_index: Choice
    vector_chunking: VectorChunkingSettings
    keywords: Choice
    judge: Choice
    judging: WindowStepSettings
    elasticsearch: EsConnection
    splits: SplitSettings
    hub: HubSettings
    annotation: AnnotationSettings
    labelstudio: LabelStudioSettings
    evaluate: EvaluateSettings
    answerers: tuple[Choice, ...]
    boundary: BoundarySettings = field(default_factory=BoundarySettings)
    training_order: Choice | None = None
    audit: AuditSettings = field(default_factory=AuditSettings)
    audit_judge: Choice | None = None
    confirm_judge: Choice | None = None

    def answerer(self, backend: str) -> Choice:
        """The model under evaluation on `backend`, with its `[evaluate.<backend>]` settings."""
        for choice in self.answerers:
            if choice.backend == backend:
                return choice
        raise ConfigError(f"unknown {ANSWERERS.seam} {backend!r}; known: {ANSWERERS.names}")

    def layout(self) -> RunLayout:
        """The run's output tree."""
        return RunLayout.of(self.build.output_root, self.build.name)

    def pool(self, name: str) -> Pool:
        """The pool called `name`."""
        for pool in self.pools:
            if pool.name == name:
                return pool
        known = ", ".join(p.name for p in self.pools)
        raise ConfigError(f"unknown question pool {name!r}; configured: {known}")

    @property
    def pool_names(self) -> list[str]:
        """The configured pools, in order."""
        return [pool.name for pool in self.pools]

    @property
    def uses_demo(self) -> bool:
        """True when the corpus or a pool comes from the demo world."""
        return self.corpus.backend == DEMO or any(p.source == DEMO for p in self.pools)

    def selected(self) -> dict[str, Choice]:
        """The build's seams by config section, each with its selected backend."""
        seams = {
            "corpus": self.corpus,
            "token_index": self.token_index,
            "embedder": self.embedder,
            "vector_index": self.vector_index,
            "keywords": self.keywords,
            "judge": self.judge,
        }
        if self.training_order is not None:
            seams["training_order"] = self.training_order
        if self.confirm_judge is not None:
            seams[CONFIRM_JUDGE] = self.confirm_judge
        if self.audit_judge is not None:
            seams[AUDIT_JUDGE] = self.audit_judge
        return seams

    def check_extras(self) -> None:
        """MissingExtraError for the first optional package a selected backend lacks."""
        for section, choice in self.selected().items():
            for extra in choice.settings.extras():
                if not extra.installed():
                    by = f"[{section}] backend {choice.backend!r}"
                    raise MissingExtraError(extra.package, extra.extra, needed_by=by)

    @property
    def uses_elasticsearch(self) -> bool:
        """True when an index lives in Elasticsearch (the [elasticsearch] cluster matters)."""
        return "elasticsearch" in (self.token_index.backend, self.vector_index.backend)


SIMPLE_SECTIONS: dict[str, type[Settings]] = {
    "build": BuildSettings,
    "demo": DemoSettings,
    "elasticsearch": EsConnection,
    "splits": SplitSettings,
    "hub": HubSettings,
    "annotation": AnnotationSettings,
    "labelstudio": LabelStudioSettings,
    "evaluate": EvaluateSettings,
    "boundary": BoundarySettings,
    "audit": AuditSettings,
}


@dataclass(frozen=True)
class Seam:
    """A config section that picks a backend of `registry` with its `backend` key.

    `step` is the settings class of the section's keys that every backend shares (the step's
    own settings), when the section has some.
    """

    registry: Registry[Any]
    default: str
    step: type[Settings] | None = None


SELECTOR = "backend"
SEAMS: dict[str, Seam] = {
    "token_index": Seam(TOKEN_INDEXES, "tantivy"),
    "embedder": Seam(EMBEDDERS, "sentence-transformers"),
    "vector_index": Seam(VECTOR_INDEXES, "candidates", VectorChunkingSettings),
    "keywords": Seam(KEYWORD_EXTRACTORS, "rules"),
    "judge": Seam(JUDGES, "rules", WindowStepSettings),
    "training_order": Seam(TRAINING_ORDERS, "megatron"),
}
KNOWN_SECTIONS = {*SIMPLE_SECTIONS, *SEAMS, *SECOND_JUDGES, "corpus", "questions"}
SECTION_FAMILIES: dict[str, str] = {
    POOL_PREFIX: "a question pool",
    CORPUS_GROUP_PREFIX: "a group of corpus files",
    ANSWERER_SECTION: "a model under evaluation",
}
"""The families of named sections (`[pool.NAME]`), by prefix, with what a member is."""


def read_config(sections: Sections) -> Config:
    """The configuration of these config-file sections (strict: see the module docstring)."""
    check_section_names(sections, KNOWN_SECTIONS, SECTION_FAMILIES)
    for name, values in sections.items():
        if ours(name, KNOWN_SECTIONS, SECTION_FAMILIES):
            check_no_inline_comment(name, values)

    def section(cls: type[S], name: str) -> S:
        return parse(cls, name, sections.get(name, {}))

    def step(cls: type[S], name: str) -> S:
        return parse(cls, name, _step_values(sections.get(name, {}), cls))

    seams = {name: read_seam(name, sections.get(name, {})) for name in SEAMS}
    pools = read_pools(sections)
    splits = section(SplitSettings, "splits")
    splits.check_pools([pool.name for pool in pools])
    boundary = section(BoundarySettings, "boundary")
    training_order = seams["training_order"] if "training_order" in sections else None
    check_boundary(boundary, training_order)
    check_candidate_source(seams["token_index"], seams["vector_index"])
    return Config(
        build=section(BuildSettings, "build"),
        demo=section(DemoSettings, "demo"),
        pools=pools,
        corpus=read_corpus(sections),
        token_index=seams["token_index"],
        embedder=seams["embedder"],
        vector_index=seams["vector_index"],
        vector_chunking=step(VectorChunkingSettings, "vector_index"),
        keywords=seams["keywords"],
        judge=seams["judge"],
        judging=step(WindowStepSettings, "judge"),
        elasticsearch=section(EsConnection, "elasticsearch"),
        splits=splits,
        hub=section(HubSettings, "hub"),
        annotation=section(AnnotationSettings, "annotation"),
        labelstudio=section(LabelStudioSettings, "labelstudio"),
        evaluate=section(EvaluateSettings, "evaluate"),
        answerers=read_answerers(sections),
        boundary=boundary,
        training_order=training_order,
        audit=section(AuditSettings, "audit"),
        audit_judge=read_judge(AUDIT_JUDGE, sections),
        confirm_judge=read_judge(CONFIRM_JUDGE, sections),
    )


def read_judge(section: str, sections: Sections) -> Choice | None:
    """A second judge's `Choice` (`tipqa.config.judges`), or None when its section is absent."""
    read = read_second_judge(section, sections)
    return None if read is None else Choice(*read)


def check_boundary(boundary: BoundarySettings, training_order: Choice | None) -> None:
    """Checkpoints need a training order to date the evidence, and the other way round."""
    if training_order is not None and not boundary.steps():
        raise ConfigError(
            "[training_order] is set but [boundary] checkpoints is empty: list the steps to "
            "split at (e.g. `1000, 2000, ..., 143000`, or `pythia`)"
        )
    if training_order is None and boundary.steps():
        raise ConfigError(
            "[boundary] checkpoints need a [training_order] section (backend = megatron or "
            "table) to date the evidence"
        )


def check_candidate_source(token_index: Choice, vector_index: Choice) -> None:
    """The candidate vector stage needs a token index that ranks by BM25."""
    settings = token_index.settings
    if vector_index.backend != "candidates" or not isinstance(settings, ElasticsearchTokenSettings):
        return
    if not settings.bm25:
        raise ConfigError(
            "[vector_index] backend = candidates ranks the Elasticsearch token index by BM25: "
            "set [token_index] bm25 = true (it adds the text.bm25 field: a new token index), "
            "or embed the whole corpus with [vector_index] backend = elasticsearch or faiss"
        )


def read_seam(section: str, values: Mapping[str, Any]) -> Choice:
    """A seam's backend and its settings (the keys of the step's own settings left out)."""
    seam = SEAMS[section]
    backend = selected(values, SELECTOR, seam.default, section)
    retired = seam.step.RETIRED_KEYS if seam.step is not None else {}
    for key in values:
        if key in retired:
            raise ConfigError(f"[{section}] {key!r} is no longer a key here: {retired[key]}")
    step_keys = set(seam.step.field_names()) if seam.step is not None else set()
    ignore = {SELECTOR, *step_keys}
    try:
        settings = seam.registry.parse(backend, section, values, ignore=ignore)
    except ConfigError as error:
        raise seam.registry.misplaced(error, backend, section, values, ignore) from None
    return Choice(backend, settings)


def _step_values(values: Mapping[str, Any], step: type[Settings]) -> dict[str, Any]:
    """The keys of a seam's section that are the step's own settings."""
    own = set(step.field_names())
    return {key: value for key, value in values.items() if key in own}


def read_answerers(sections: Sections) -> tuple[Choice, ...]:
    """Every answerer backend with its `[evaluate.<backend>]` section (defaults when absent)."""
    for name in sections:
        backend = name[len(ANSWERER_SECTION) :] if name.startswith(ANSWERER_SECTION) else None
        if backend is not None and backend not in ANSWERERS.names:
            raise ConfigError(
                f"unknown section [{name}]: {backend!r} is no {ANSWERERS.seam} backend; "
                f"known: {', '.join(ANSWERERS.names)}"
            )
    return tuple(
        Choice(
            name,
            ANSWERERS.parse(
                name, ANSWERER_SECTION + name, sections.get(ANSWERER_SECTION + name, {})
            ),
        )
        for name in ANSWERERS.names
    )


def read_corpus(sections: Sections) -> Choice:
    """The corpus: `source = demo` (the demo world), `files` or `hub`, with its settings.

    With `source = files`, each `[corpus.NAME]` section is a group of files read with its
    own keys, `[corpus]`'s reader keys being every group's defaults.
    """
    values = sections.get("corpus", {})
    groups = {
        name[len(CORPUS_GROUP_PREFIX) :]: group
        for name, group in sections.items()
        if name.startswith(CORPUS_GROUP_PREFIX)
    }
    source = selected(values, "source", DEMO, "corpus")
    if groups and source != "files":
        name = next(iter(groups))
        raise ConfigError(
            f"[{CORPUS_GROUP_PREFIX}{name}] is a group of files: it needs [corpus] source = files"
        )
    if source == DEMO:
        extra = [key for key in values if key != "source"]
        if extra:
            raise ConfigError(f"[corpus] source = demo takes no other keys, got {extra[0]!r}")
        return Choice(DEMO, DemoCorpusSettings())
    if groups:
        given = {"groups": read_groups(values, groups)}
        files = parse(FileCorpusSettings, "corpus", values, ignore={"source"}, given=given)
        return Choice(source, files)
    return Choice(source, CORPUS_READERS.parse(source, "corpus", values, ignore={"source"}))


def read_groups(
    corpus: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]]
) -> tuple[tuple[str, FileGroupSettings], ...]:
    """The `[corpus.NAME]` groups, each with `[corpus]`'s reader keys as its defaults."""
    shared = {
        key: value
        for key, value in corpus.items()
        if key in FileGroupSettings.field_names() and key != "paths"
    }
    read = []
    for name, values in groups.items():
        section = f"{CORPUS_GROUP_PREFIX}{name}"
        if not name or not values.get("paths"):
            raise ConfigError(f"[{section}] a group of corpus files needs `paths`")
        read.append((name, parse(FileGroupSettings, section, {**shared, **values})))
    return tuple(read)


@dataclass(frozen=True)
class DemoCorpusSettings(Settings):
    """The demo world's corpus (its files are under the run's `world/` folder)."""
