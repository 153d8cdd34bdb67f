"""Typed configuration, one Luigi `Config` section per concern (documented in the README)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import luigi

import tipqa
from tipqa.layout import RunLayout
from tipqa.records import SCHEMA_VERSION


class Section(luigi.Config):
    """A config section whose parameters can be handed to a backend as settings."""

    def settings(self) -> dict[str, Any]:
        """Every parameter of the section by name (backends pick the ones they take)."""
        return {name: _plain(getattr(self, name)) for name, _ in self.get_params()}


def _plain(value: Any) -> Any:
    """Luigi's frozen dicts and tuples as plain dicts and lists (JSON-ready)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


class build(Section):
    """[build]: where outputs go and the sizes of Algorithm 1."""

    name = luigi.Parameter(default="demo", description="run name: outputs go to <root>/<name>")
    output_root = luigi.Parameter(default="outputs")
    shard_size = luigi.IntParameter(default=200, description="questions per shard")
    k1 = luigi.IntParameter(default=100, description="token-stage documents judged at most")
    k2 = luigi.IntParameter(default=10, description="vector-stage chunks judged")

    def layout(self) -> RunLayout:
        """The run's output tree."""
        return RunLayout.of(self.output_root, self.name)


class demo(Section):
    """[demo]: the synthetic world used when questions or corpus come from "demo"."""

    documents = luigi.IntParameter(default=2000)
    seed = luigi.IntParameter(default=13)
    files = luigi.IntParameter(default=4)


class questions(Section):
    """[questions]: the question pools, each a tipqa.questions source partitioned on its own.

    `pools` maps a pool name to its source settings: `source` (demo, triviaqa-json, hf-rows,
    tipqa-jsonl, llm-foundry-jsonl, hub) and, as the source needs them, `paths`, `name`,
    `config`, `split`, `limit`.
    """

    pools = luigi.DictParameter(default={"dev": {"source": "demo"}})


class corpus(Section):
    """[corpus]: the pretraining corpus (a tipqa.corpus reader)."""

    source = luigi.Parameter(default="demo", description="demo, files or hub")
    paths = luigi.ListParameter(default=[])
    text_field = luigi.Parameter(default="text")
    id_field = luigi.Parameter(default="id", description="empty: ids from file and line")
    name = luigi.Parameter(default="", description="hub dataset name")
    config = luigi.Parameter(default="")
    split = luigi.Parameter(default="train")


class token_index(Section):
    """[token_index]: the token-search backend."""

    backend = luigi.Parameter(default="tantivy", description="tantivy or elasticsearch")
    path = luigi.Parameter(default="", description="tantivy folder (default: under the run)")
    index = luigi.Parameter(default="tipqa-token", description="elasticsearch index name")
    url = luigi.Parameter(default="", description="elasticsearch URL (or TIPQA_ES_URL)")
    heap_mb = luigi.IntParameter(default=512, description="tantivy writer heap")
    threads = luigi.IntParameter(default=2, description="writer / bulk threads")
    rank_pool = luigi.IntParameter(default=1000, description="tantivy: exact ranking depth")
    shards = luigi.IntParameter(default=1, description="elasticsearch primary shards")
    replicas = luigi.OptionalIntParameter(default=None, description="elasticsearch replicas")
    bulk_chunk_docs = luigi.IntParameter(default=500, description="elasticsearch bulk size")
    force_merge_segments = luigi.OptionalIntParameter(default=None)
    api_key_env = luigi.Parameter(default="ES_API_KEY", description="env var of the API key")
    ca_certs = luigi.Parameter(default="", description="CA file of a self-signed cluster")


class embedder(Section):
    """[embedder]: the text embedder of the vector index."""

    backend = luigi.Parameter(default="sentence-transformers")
    model = luigi.Parameter(default="all-MiniLM-L6-v2")
    query_prefix = luigi.OptionalParameter(
        default=None, description='e.g. "query: " (quoted: a config file drops a trailing space)'
    )
    passage_prefix = luigi.OptionalParameter(default=None, description='e.g. "passage: "')
    batch_size = luigi.IntParameter(default=64)
    device = luigi.Parameter(default="cpu")
    bf16 = luigi.BoolParameter(default=False)

    def settings(self) -> dict[str, Any]:
        """The section's settings, with JSON-quoted prefixes unquoted."""
        settings = super().settings()
        for key in ("query_prefix", "passage_prefix"):
            value = settings[key]
            if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
                settings[key] = json.loads(value)
        return settings


class vector_index(Section):
    """[vector_index]: the vector-search backend."""

    backend = luigi.Parameter(default="faiss", description="faiss or elasticsearch")
    path = luigi.Parameter(default="", description="faiss folder (default: under the run)")
    index = luigi.Parameter(default="tipqa-vector", description="elasticsearch index name")
    url = luigi.Parameter(default="")
    kind = luigi.Parameter(default="hnsw", description="faiss: flat or hnsw")
    hnsw_m = luigi.IntParameter(default=32)
    ef_construction = luigi.IntParameter(default=80)
    ef_search = luigi.IntParameter(default=256, description="faiss HNSW search depth")
    num_candidates = luigi.IntParameter(default=100, description="elasticsearch kNN")
    quantize = luigi.Parameter(default="", description="elasticsearch: int8, int4, bbq")
    shards = luigi.IntParameter(default=1, description="elasticsearch primary shards")
    replicas = luigi.OptionalIntParameter(default=None, description="elasticsearch replicas")
    api_key_env = luigi.Parameter(default="ES_API_KEY")
    ca_certs = luigi.Parameter(default="")
    chunk_overlap_tokens = luigi.IntParameter(default=0)


class keywords(Section):
    """[keywords]: the keyword extractor."""

    backend = luigi.Parameter(default="rules", description="rules or openai")
    model = luigi.Parameter(default="gpt-4o-mini")
    base_url = luigi.Parameter(default="", description="empty: OPENAI_BASE_URL or OpenAI")
    prompt = luigi.Parameter(default="keywords-v1", description="template name or file")
    max_concurrency = luigi.IntParameter(default=8)
    max_retries = luigi.IntParameter(default=5)
    timeout = luigi.FloatParameter(default=60.0)


class judge(Section):
    """[judge]: the relevance judge and the judge windows."""

    backend = luigi.Parameter(default="rules", description="rules, vllm or openai")
    model = luigi.Parameter(default="meta-llama/Llama-3.1-8B-Instruct")
    base_url = luigi.Parameter(default="")
    prompt = luigi.Parameter(default="judge-v1")
    mode = luigi.Parameter(default="logprobs", description="vllm: logprobs or choice")
    batch_size = luigi.IntParameter(default=256)
    tensor_parallel_size = luigi.IntParameter(default=1)
    max_model_len = luigi.OptionalIntParameter(default=None)
    dtype = luigi.Parameter(default="auto")
    max_concurrency = luigi.IntParameter(default=8)
    max_retries = luigi.IntParameter(default=5)
    parse_retries = luigi.IntParameter(default=2)
    timeout = luigi.FloatParameter(default=60.0)
    max_words = luigi.OptionalIntParameter(
        default=None, description="judge-window word limit (default: from the judge's context)"
    )
    max_windows = luigi.IntParameter(default=16, description="windows judged per document")
    cache = luigi.BoolParameter(default=True, description="cache LLM calls under the run")


SECTIONS = [build, demo, questions, corpus, token_index, embedder, vector_index, keywords, judge]


def run_info() -> dict[str, Any]:
    """Every section's settings, for the stats and the dataset card (no secrets live here)."""
    return {
        "tipqa_version": tipqa.__version__,
        "schema_version": SCHEMA_VERSION,
        **{section.__name__: section().settings() for section in SECTIONS},
    }
