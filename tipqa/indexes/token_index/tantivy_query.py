"""The queries both rankings build over one tantivy searcher, and reading what they find.

`tantivy_rank` (frequency by scores) and `tantivy_narrow` (candidates of common tokens) share
these; neither calls the other: `tantivy.py` picks which answers a search.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tipqa.core.text import tokenize
from tipqa.indexes.token_index import tantivy_schema as fields
from tipqa.indexes.token_index.tantivy_ids import IdTable
from tipqa.indexes.token_index.tantivy_verify import Key, Phrase, address_key


def phrases(texts: Iterable[str]) -> list[Phrase]:
    """The distinct non-empty token phrases of `texts`, in first-seen order."""
    return list(dict.fromkeys(p for p in (tuple(tokenize(t)) for t in texts) if p))


class Queries:
    """Term, phrase and match queries over one tantivy searcher, and the stored documents."""

    def __init__(self, searcher: Any, schema: Any, table: IdTable) -> None:
        self.tantivy = fields.import_tantivy()
        self.searcher = searcher
        self.schema = schema
        self.table = table

    # queries

    def term(self, field: str, value: str, option: str = "basic") -> Any:
        """A term query on `field`."""
        return self.tantivy.Query.term_query(self.schema, field, value, index_option=option)

    def phrase(self, phrase: Phrase) -> Any:
        """A term query for one token, a phrase query for more (no query-string parsing)."""
        if len(phrase) == 1:
            return self.term(fields.TEXT, phrase[0], "freq")
        return self.tantivy.Query.phrase_query(self.schema, fields.TEXT, list(phrase))

    def match(self, keywords: list[Phrase], aliases: list[Phrase]) -> Any:
        """All keyword phrases AND any alias phrase."""
        must, should = self.tantivy.Occur.Must, self.tantivy.Occur.Should
        if len(aliases) == 1:
            alias_query = self.phrase(aliases[0])
        else:
            alias_query = self.tantivy.Query.boolean_query(
                [(should, self.phrase(a)) for a in aliases]
            )
        if not keywords:
            return alias_query
        clauses = [(must, self.phrase(k)) for k in keywords]
        return self.tantivy.Query.boolean_query([*clauses, (must, alias_query)])

    def stored(self, address: Any) -> tuple[str, bytes]:
        """The id and the UTF-8 text of a document, from the store."""
        stored = self.searcher.doc(address)
        return stored.get_first(fields.DOC_ID), stored.get_first(fields.BODY)

    def ids(self, addresses: list[Any]) -> dict[Key, str]:
        """The document ids of these hits, by their rows (not from the stored text)."""
        if not addresses:
            return {}
        rows = self.searcher.fast_field_values(fields.ROW, addresses)
        return {address_key(a): i for a, i in zip(addresses, self.table.ids(rows), strict=True)}
