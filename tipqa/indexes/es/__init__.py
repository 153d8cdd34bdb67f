"""Shared Elasticsearch plumbing for the token and vector indexes.

`client` creates the official client (imported lazily), `mappings` builds index settings and
mappings (the analyzer that reproduces `tipqa.core.text.tokenize`, the frequency similarity, the
`dense_vector` field), `queries` builds request bodies and parses responses as pure
functions, `bulk` runs parallel bulk indexing with retries, and `lifecycle` holds what both
indexes share: build and serving settings, the shard ledger and the completion marker.
"""
