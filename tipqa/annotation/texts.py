"""The text the judge saw for each sampled item.

Vector-stage texts are stored with the candidates (`vector_candidates.jsonl`, matched by chunk
id). Token-stage window texts are not stored: the window ``<doc_id>@w<index>`` is recomputed
with `tipqa.stages.windows.judge_windows` from the document in the token index, the keywords
the token search used, the question's aliases and the window settings of the shard's
token-judge stats.
Where the stored evidence of an answerable question is at hand, the recomputed window must equal
it; anything else means the index or the window code changed since the run, and is an error.
"""

from __future__ import annotations

from tqdm import tqdm

from tipqa.annotation.items import AnnotationItem
from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_records, read_json
from tipqa.core.layout import PoolLayout, ShardLayout
from tipqa.core.records import Document, LabeledQuestion, TokenCandidates, VectorCandidates
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.stages.windows import WindowSettings, judge_windows

FETCH_BATCH = 256


def recorded_windows(shard: ShardLayout) -> WindowSettings:
    """The window settings a shard's token judge used (from its stats file)."""
    path = shard.stats(Step.TOKEN_JUDGE)
    stats = read_json(path)
    info = stats.get("info", {}) if isinstance(stats, dict) else {}
    try:
        return WindowSettings(
            max_words=int(info["max_words"]), max_windows=int(info["max_windows"])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError("no window settings in the info", path=str(path), field="info") from exc


def attach_vector_texts(items: list[AnnotationItem], pool: PoolLayout) -> None:
    """Fill in the chunk text of every vector-stage item."""
    wanted = {(i.question_id, i.unit_id): i for i in items if i.stage == "vector"}
    if not wanted:
        return
    for shard in pool.shard_folders():
        path = shard.vector_candidates
        if not path.exists():
            continue
        for candidates in iter_records(path, VectorCandidates):
            for hit in candidates.hits:
                item = wanted.get((candidates.question_id, hit.chunk_id))
                if item is not None:
                    item.text = hit.text
    missing = [i.item_id for i in wanted.values() if not i.text]
    if missing:
        raise InputError(
            f"{len(missing)} vector item(s) have no stored chunk text, e.g. {missing[0]}",
            path=str(pool.shards),
        )


def _token_context(
    items: list[AnnotationItem], pool: PoolLayout
) -> dict[str, tuple[list[str], WindowSettings, ShardLayout]]:
    """For each question with token items: the search keywords, window settings and shard."""
    needed = {i.question_id for i in items if i.stage == "token"}
    found: dict[str, tuple[list[str], WindowSettings, ShardLayout]] = {}
    for shard in pool.shard_folders():
        path = shard.token_candidates
        if not needed or not path.exists():
            continue
        settings: WindowSettings | None = None
        for candidates in iter_records(path, TokenCandidates):
            if candidates.question_id in needed:
                settings = settings or recorded_windows(shard)
                found[candidates.question_id] = (candidates.keywords, settings, shard)
    lost = needed - set(found)
    if lost:
        raise InputError(
            f"no token candidates for question {sorted(lost)[0]} ({len(lost)} in all)",
            path=str(pool.shards),
        )
    return found


def _stored_evidence(pool: PoolLayout) -> dict[tuple[str, str], str]:
    """The evidence texts stored in the partition, by (question id, unit id)."""
    path = pool.partition_files.labelled("answerable")
    return {
        (row.id, row.evidence.unit_id): row.evidence.text
        for row in iter_records(path, LabeledQuestion)
        if row.evidence is not None
    }


def window_index(item: AnnotationItem) -> int:
    """The window number of a token-stage unit id ``<doc_id>@w<index>``."""
    prefix = f"{item.doc_id}@w"
    suffix = item.unit_id[len(prefix) :]
    if not item.unit_id.startswith(prefix) or not suffix.isdigit():
        raise InputError(
            f"item {item.item_id}: token unit id {item.unit_id!r} is not '<doc_id>@w<index>'",
            field="unit_id",
        )
    return int(suffix)


def attach_token_texts(
    items: list[AnnotationItem], pool: PoolLayout, fetch: FetchDocuments, stats: StepStats
) -> None:
    """Recompute the judge window of every token-stage item from the token index."""
    token_items = sorted((i for i in items if i.stage == "token"), key=lambda i: i.doc_id)
    if not token_items:
        return
    context = _token_context(token_items, pool)
    evidence = _stored_evidence(pool)
    doc_ids = sorted({i.doc_id for i in token_items})
    documents: dict[str, Document] = {}
    for start in tqdm(range(0, len(doc_ids), FETCH_BATCH), desc="fetch documents", leave=False):
        documents.update(fetch(doc_ids[start : start + FETCH_BATCH]))
    for item in token_items:
        keywords, settings, shard = context[item.question_id]
        document = documents.get(item.doc_id)
        if document is None:
            raise InputError(
                f"item {item.item_id}: the token index has no document {item.doc_id!r} "
                "(was the index rebuilt since the run?)",
                path=str(shard.token_judgments),
            )
        windows, _ = judge_windows(document, keywords, item.aliases, settings)
        index = window_index(item)
        if index >= len(windows):
            raise InputError(
                f"item {item.item_id}: window {index} of {item.doc_id!r} does not exist any more "
                f"({len(windows)} windows recomputed)",
                path=str(shard.token_judgments),
            )
        item.text = windows[index].text
        stored = evidence.get((item.question_id, item.unit_id))
        if stored is not None and item.evidence:
            if stored != item.text:
                raise InputError(
                    f"item {item.item_id}: the recomputed window differs from the stored "
                    "evidence (the token index or the window code changed since the run)",
                    path=str(pool.partition_files.labelled("answerable")),
                )
            stats.add("token_evidence_checked")
        stats.add("token_windows_recomputed")


def attach_texts(
    items: list[AnnotationItem], pool: PoolLayout, fetch: FetchDocuments, stats: StepStats
) -> None:
    """Fill in `text` for every item: chunks from the candidates, windows recomputed."""
    attach_vector_texts(items, pool)
    attach_token_texts(items, pool, fetch, stats)
