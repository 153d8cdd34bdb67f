"""PreviewCost, the step: a token index of a seeded sample of the corpus, searched with a pool's
keywords as the build will search the whole corpus; the counts scaled to the whole by the
estimator of `tipqa.stages.cost`, and written with the step's provenance."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from tipqa.builder.indexes import fresh_folder
from tipqa.builder.inputs import open_corpus, pool_shards, shard_count
from tipqa.builder.step_inputs import PreviewInputs
from tipqa.core.fingerprint import fingerprint
from tipqa.core.jsonl import read_records, write_json
from tipqa.core.layout import RunLayout
from tipqa.core.records import SCHEMA_VERSION, Document, Keywords
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.indexes.token_index.tantivy import TantivySettings, TantivyTokenIndex
from tipqa.stages.cost import confirmation_cost, preview_pool_from_sample, sample_documents

SAMPLE_INDEX = "tantivy"
"""The sample's index backend, whatever `[token_index] backend` says (same queries, exact
totals, embedded)."""


def sample_token_index(
    documents: Iterable[Document], folder: Path, inputs: PreviewInputs
) -> tuple[TokenIndex, dict[str, float]]:
    """The index of the corpus sample in `folder`, built unless it holds this very sample.

    It takes the configured tantivy settings when the build's token index is tantivy too.
    """
    settings = inputs.token_index.settings
    if not isinstance(settings, TantivySettings):
        settings = TantivySettings()
    sample = {"share": inputs.share, "seed": inputs.seed}
    key = fingerprint("cost_sample", inputs.reader.identity(), settings.build_identity(), sample)
    fresh_folder(folder, key)
    made = TOKEN_INDEXES.create(SAMPLE_INDEX, settings, place=IndexPlace(folder))
    index = cast(TantivyTokenIndex, made)
    if index.complete():
        return index, {"documents": index.count(), "reused": 1}
    counts = index.build(sample_documents(documents, inputs.share, inputs.seed))
    return index, {"documents": counts.get("documents", index.count()), "reused": 0}


def preview_sample_pool(inputs: PreviewInputs, layout: RunLayout) -> dict[str, Any]:
    """PreviewCost of a pool from the corpus sample: written to the pool's cost preview file
    and returned (every shard's keywords extracted)."""
    pool = layout.pool(inputs.pool)
    shards = pool_shards(pool, shard_count(pool))
    documents = open_corpus(inputs.reader, layout)
    index, counts = sample_token_index(documents, layout.cost_sample_index, inputs)
    with_keywords = [
        (questions, {k.question_id: k.keywords for k in read_records(shard.keywords, Keywords)})
        for questions, shard in shards
    ]
    preview = preview_pool_from_sample(
        with_keywords, index, inputs.window_limits(), (inputs.k1, inputs.k2), inputs.share,
        inputs.seed, inputs.prompt_words(), inputs.chunk_tokens(),
    )  # fmt: skip
    preview["sample"] = {"share": inputs.share, "seed": inputs.seed, **counts}
    if inputs.confirm is not None:
        preview["confirmation"] = confirmation_cost(preview)
    if inputs.judge_all:
        token = preview["token_stage"]
        preview["judge_all_candidates"] = {
            "prompts": token["prompts_at_most"],
            "prompt_tokens": token["prompt_tokens_at_most"],
        }
    record = inputs.record
    write_json(
        pool.cost_preview,
        {
            **preview,
            "schema_version": SCHEMA_VERSION,
            "fingerprint": record.fingerprint,
            "provenance": record.provenance(),
        },
    )
    return preview
