"""The token index on an Elasticsearch cluster (the paper's setup, for the whole Pile).

Documents are indexed with `_id` = document id by bulk `create` actions, so a rerun or a
resumed part never duplicates a document (an id already present is counted as a duplicate,
and the first text indexed under it is kept). The `text` field uses the analyzer of
`tipqa.indexes.es.mappings`, which produces the tokens of `tipqa.core.text.tokenize`.

Frequency, as Elasticsearch computes it: `text` is scored by a scripted similarity that
returns `query.boost * doc.freq`. For a `match_phrase` clause Lucene passes the number of
occurrences of the phrase in the document as `doc.freq` (overlapping occurrences included;
for a one-token phrase, the term frequency), and a `bool` query adds up the scores of its
matching clauses. The query has one clause per distinct phrase (`must`: the keywords and a
nested `bool` whose `should` holds the aliases, `minimum_should_match` 1; see
`tipqa.indexes.es.queries.token_query`), so its score is the number of occurrences of the distinct
keyword and alias phrases: the frequency of `tipqa.indexes.token_index.base`, counted as the tantivy
backend counts it. The scores are small integers, exact in floats, and the sort (`_score`
descending, then `doc_id` ascending) is exact across shards: the ranking is exact at any
depth (no rank pool is needed, unlike the tantivy backend), and `track_total_hits: true`
makes the total exact.

BM25 (`rank_texts`, `tipqa.indexes.token_index.base.RanksText`, for `[vector_index] backend =
candidates`): `text` scores frequency and has no length norms, so it cannot rank by BM25. With
`bm25 = true` the index also maps a sub-field `text.bm25`: the same analyzer, term frequencies
without positions, length norms, and Elasticsearch's BM25 (BM25's k1 = 1.2, b = 0.75). It is off by
default because only the candidate vector stage reads it and it adds a second inverted index of
the text (without positions, the larger part of the first). A text is a `match` query on it
(its distinct tokens joined by spaces; any may match), sorted by `_score` descending, then
`doc_id` ascending, sent in `_msearch` requests of RANK_BATCH searches with
`dfs_query_then_fetch`, so that idf and the average length are those of the whole index (as
tantivy computes them), not of each shard. `rank_texts` on an index without the sub-field is
refused with what to do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Document, TokenHit
from tipqa.core.settings import setting
from tipqa.core.text import tokenize
from tipqa.indexes.es import mappings, queries
from tipqa.indexes.es.client import body
from tipqa.indexes.es.lifecycle import EsBuildSettings, EsIndexBase
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import TokenResult

log = logging.getLogger(__name__)

MAX_ID_BYTES = 512
GET_BATCH = 500
PAGE_SIZE = queries.MAX_RESULT_WINDOW
WHOLE_CORPUS = "all"
MAX_SKIP_LOGS = 20
RANK_BATCH = 64
BM25_SUBFIELD = "bm25"
BM25_FIELD = f"{queries.TEXT_FIELD}.{BM25_SUBFIELD}"


@dataclass(frozen=True)
class ElasticsearchTokenSettings(EsBuildSettings):
    """[token_index] of the Elasticsearch backend (the cluster is in [elasticsearch])."""

    index: str = setting("tipqa-token", doc="the index's name")
    shards: int = setting(1, doc="primary shards")
    max_doc_bytes: int = setting(50_000_000, doc="skip larger documents (counted)")
    bm25: bool = setting(
        False, doc="also index text.bm25, the BM25 field of [vector_index] backend = candidates"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_doc_bytes < 1:
            raise ConfigError(f"max_doc_bytes must be >= 1, got {self.max_doc_bytes}")
        mappings.token_index_settings(self.shards)


class ElasticsearchTokenIndex(EsIndexBase):
    """A `TokenIndex` in an Elasticsearch index, built in parts in parallel if needed."""

    settings: ElasticsearchTokenSettings

    def __init__(
        self,
        settings: ElasticsearchTokenSettings,
        place: IndexPlace | None = None,
        *,
        progress: bool = True,
        client: Any | None = None,
    ) -> None:
        connection, build = (place.elasticsearch, place.build) if place else (None, "")
        super().__init__(settings.index, settings.shards, settings, connection, build, client)
        self.progress = progress
        self._has_bm25 = False

    @classmethod
    def named(
        cls, index: str, *, progress: bool = True, client: Any | None = None, **settings: Any
    ) -> ElasticsearchTokenIndex:
        """The index called `index` on the cluster of TIPQA_ES_URL (library use)."""
        options = ElasticsearchTokenSettings(index=index, **settings)
        return cls(options, None, progress=progress, client=client)

    def _creation_body(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Settings and mappings of a new token index."""
        return mappings.token_index_settings(self.shards), token_mappings(self.settings.bm25)

    def _expected_meta(self) -> dict[str, Any]:
        """The `_meta.tipqa` of a token index."""
        return mappings.token_index_meta()

    def build(self, documents: Iterable[Document]) -> dict[str, float]:
        """Index `documents` as one part and finalize; an index marked complete is reused."""
        if self.is_complete():
            marker = self.completion() or {}
            log.info("Elasticsearch index %s is complete; not rebuilding", self.index)
            return {"documents": float(marker.get("documents", 0)), "reused": 1}
        self.start_build()
        counts = self.build_part(documents, WHOLE_CORPUS)
        counts.update(self.finalize([WHOLE_CORPUS]))
        return counts

    def build_part(self, documents: Iterable[Document], part: str) -> dict[str, float]:
        """Index one part of the corpus (e.g. one file) and record it in the ledger.

        A part already recorded is skipped (its recorded counts are returned with
        `reused`: 1). Many processes may build different parts of one index at once; call
        `finalize(all_part_names)` when all are done. Empty, oversized and badly identified
        documents are skipped and counted; documents the cluster refuses for good are counted
        under `rejected` and logged; documents still refused for a transient reason after the
        retries raise `BulkFailure` and leave the part unrecorded, so a rerun redoes it
        (documents already indexed then count as duplicates).
        """
        done = self.part_record(part)
        if done is not None:
            return {**done, "reused": 1}
        self._ensure_index()
        skipped = dict.fromkeys(("empty", "too_large", "unencodable", "bytes"), 0.0)
        started = time.perf_counter()
        with tqdm(
            desc=f"indexing {part} into {self.index}", unit="doc", disable=not self.progress
        ) as bar:
            report = self._bulk(self._actions(documents, skipped), progress=bar)
        report.raise_for_transient(f"index {self.index!r}, part {part!r}")
        seconds = time.perf_counter() - started
        counts: dict[str, float] = {
            "documents": report.created + report.updated,
            "duplicates": report.conflicts,
            "rejected": sum(report.rejected.values()),
            **skipped,
            "seconds": round(seconds, 3),
            "docs_per_second": round(report.done / seconds, 1) if seconds > 0 else 0.0,
            "mb_per_second": round(skipped["bytes"] / 1e6 / seconds, 3) if seconds > 0 else 0.0,
        }
        counts.update({f"rejected_{kind}": n for kind, n in report.rejected.items()})
        self.record_part(part, counts)
        return counts

    def _actions(
        self, documents: Iterable[Document], skipped: dict[str, float]
    ) -> Iterator[dict[str, Any]]:
        """Bulk actions for the documents worth sending; the others are counted and logged."""
        for number, document in enumerate(documents, start=1):
            size, reason = self._check(document, number)
            if reason is not None:
                skipped[reason] += 1
                if skipped[reason] <= MAX_SKIP_LOGS:
                    log.warning("skipping document %.80r: %s", document.id, reason)
                continue
            skipped["bytes"] += size
            yield queries.document_action(self.index, document)

    def _check(self, document: Document, number: int) -> tuple[int, str | None]:
        """The UTF-8 size of the text, and why the document is skipped (or None).

        Skipped and counted: "empty" (blank text), "too_large" (over `max_doc_bytes`),
        "unencodable" (lone surrogates, or a `meta` that is not JSON). An id that is not a
        non-empty string of at most 512 bytes (Elasticsearch's limit), or a text that is not
        a string, raises InputError naming the document.
        """
        where = f"document {number}"
        if not isinstance(document.id, str) or not document.id:
            raise InputError(f"{where}: id must be a non-empty string", field="id")
        try:
            id_bytes = len(document.id.encode("utf-8"))
        except UnicodeEncodeError:
            return 0, "unencodable"
        if id_bytes > MAX_ID_BYTES:
            raise InputError(
                f"{where}: id longer than {MAX_ID_BYTES} bytes, Elasticsearch's limit "
                f"({document.id[:60]!r}...)",
                field="id",
            )
        if not isinstance(document.text, str):
            raise InputError(f"{where} ({document.id!r}): text must be a string", field="text")
        try:
            size = len(document.text.encode("utf-8"))
            orjson.dumps(document.meta)
        except (UnicodeEncodeError, TypeError, orjson.JSONEncodeError):
            return 0, "unencodable"
        if not document.text.strip():
            return size, "empty"
        if size > self.settings.max_doc_bytes:
            return size, "too_large"
        return size, None

    def search(self, keywords: list[str], aliases: list[str], k: int) -> TokenResult:
        """Documents with all keywords and any alias as phrases, by frequency, first k of them.

        A keyword or alias without any token is ignored; with no alias left nothing matches.
        """
        if k < 0:
            raise ConfigError(f"k must be >= 0, got {k}")
        keyword_phrases = queries.phrases(keywords)
        alias_phrases = queries.phrases(aliases)
        if not alias_phrases:
            return TokenResult(total=0, hits=[])
        hits: list[TokenHit] = []
        after: list[Any] | None = None
        total = 0
        while True:
            size = min(k - len(hits), PAGE_SIZE)
            request = queries.token_search_body(keyword_phrases, alias_phrases, size, after)
            try:
                response = body(self.client.search(index=self.index, body=request))
            except self._es.NotFoundError as exc:
                raise self.missing_index() from exc
            total, page, after = queries.parse_token_response(response)
            hits.extend(page)
            if len(hits) >= k or len(page) < size or not page:
                return TokenResult(total=total, hits=hits)

    def get(self, doc_ids: list[str]) -> dict[str, Document]:
        """The stored documents with these ids (missing ids are absent from the result)."""
        found: dict[str, Document] = {}
        unique = list(dict.fromkeys(doc_ids))
        for start in range(0, len(unique), GET_BATCH):
            batch = unique[start : start + GET_BATCH]
            try:
                response = self.client.mget(index=self.index, ids=batch, source=["text", "meta"])
            except self._es.NotFoundError as exc:
                raise self.missing_index() from exc
            found.update(queries.parse_mget(body(response)))
        return found

    def rank_texts(self, texts: list[str], n: int) -> list[list[str]]:
        """Per text, the ids of its n best documents by BM25 (`text.bm25`), ties by smaller id."""
        if not 1 <= n <= queries.MAX_RESULT_WINDOW:
            raise ConfigError(f"n must be between 1 and {queries.MAX_RESULT_WINDOW}, got {n}")
        asked = [(i, tokens) for i, text in enumerate(texts) if (tokens := distinct_tokens(text))]
        ranked: list[list[str]] = [[] for _ in texts]
        if asked:
            self._check_bm25()
        for start in range(0, len(asked), RANK_BATCH):
            batch = asked[start : start + RANK_BATCH]
            bodies = [bm25_search_body(tokens, n) for _, tokens in batch]
            try:
                response = self.client.msearch(
                    index=self.index,
                    searches=queries.msearch_lines(bodies),
                    search_type="dfs_query_then_fetch",
                )
            except self._es.NotFoundError as exc:
                raise self.missing_index() from exc
            found = parse_ranked_ids(body(response), len(bodies))
            for (position, _), ids in zip(batch, found, strict=True):
                ranked[position] = ids
        return ranked

    def _check_bm25(self) -> None:
        """Raise ConfigError when the index has no `text.bm25` sub-field."""
        if self._has_bm25:
            return
        try:
            mapping = body(self.client.indices.get_mapping(index=self.index))
        except self._es.NotFoundError as exc:
            raise self.missing_index() from exc
        index_mapping: dict[str, Any] = next(iter(mapping.values()), {})
        fields = index_mapping.get("mappings", {}).get("properties", {})
        if BM25_SUBFIELD not in fields.get(queries.TEXT_FIELD, {}).get("fields", {}):
            raise ConfigError(
                f"Elasticsearch index {self.index!r} has no {BM25_FIELD} field to rank by BM25: "
                "set [token_index] bm25 = true and rebuild it, or add the field with "
                "PUT _mapping and an _update_by_query"
            )
        self._has_bm25 = True


def token_mappings(bm25: bool) -> dict[str, Any]:
    """The token index's mappings (`tipqa.indexes.es.mappings`), with the BM25 sub-field of `text`
    if
    `bm25`."""
    mapping = mappings.token_index_mappings()
    if not bm25:
        return mapping
    mapping["properties"][queries.TEXT_FIELD]["fields"] = {
        BM25_SUBFIELD: {
            "type": "text",
            "analyzer": mappings.ANALYZER,
            "index_options": "freqs",
            "similarity": "BM25",
        }
    }
    return mapping


def distinct_tokens(text: str) -> list[str]:
    """The distinct tokens of `text` (`tipqa.core.text.tokenize`), in first-seen order."""
    return list(dict.fromkeys(tokenize(text)))


def bm25_search_body(tokens: list[str], n: int) -> dict[str, Any]:
    """A search for the n best documents by BM25 for any of `tokens`, ties by `doc_id`."""
    return {
        "query": {"match": {BM25_FIELD: {"query": " ".join(tokens)}}},
        "size": n,
        "sort": [{"_score": {"order": "desc"}}, {"doc_id": {"order": "asc"}}],
        "track_total_hits": False,
        "_source": False,
    }


def parse_ranked_ids(response: dict[str, Any], searches: int) -> list[list[str]]:
    """The hit ids of each search of an msearch response, in rank order."""
    try:
        items = response["responses"]
        for number, item in enumerate(items):
            if "error" in item:
                raise queries.ResponseError(f"BM25 search {number} failed: {item['error']}")
        ranked = [[str(hit["_id"]) for hit in item["hits"]["hits"]] for item in items]
    except (KeyError, TypeError) as exc:
        raise queries.ResponseError(f"unexpected msearch response: {exc!r}") from exc
    if len(ranked) != searches:
        raise queries.ResponseError(f"msearch answered {len(ranked)} of {searches} searches")
    return ranked
