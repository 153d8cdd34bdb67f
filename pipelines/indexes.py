"""Tasks that build the token and the vector index of the corpus.

Embedded backends build in one task. Elasticsearch builds one task per corpus file (run many
at once with `luigid` and `--workers N`); its ledger of finished files is what makes a task
complete, so a finished file is never indexed twice and a finished index never rebuilt.
"""

from __future__ import annotations

import luigi

from pipelines.config import build, corpus, embedder, token_index, vector_index
from pipelines.inputs import world_requirements
from tipqa import indexing
from tipqa.components import make_embedder, make_token_index, make_vector_index
from tipqa.inputs import open_corpus


def _corpus():
    return open_corpus(corpus().settings(), build().layout().world)


def _token_index():
    return make_token_index(token_index().settings(), build().layout().token_index)


def _vector_index():
    model = make_embedder(embedder().settings())
    return model, make_vector_index(vector_index().settings(), model, build().layout().vector_index)


class IndexTokenShard(luigi.Task):
    """Index one corpus file into a sharded token index."""

    shard = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def complete(self) -> bool:
        return _token_index().shard_done(self.shard)

    def run(self) -> None:
        indexing.index_token_shard(_corpus(), self.shard, _token_index())


class BuildTokenIndex(luigi.Task):
    """Index the corpus for phrase search (in shards where the backend builds that way)."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().root / "index" / "token.stats.json")

    def run(self):
        index, source = _token_index(), _corpus()
        if not indexing.builds_in_shards(index):
            indexing.build_token_index(source, index, self.output().path)
            return
        shards = indexing.corpus_shards(source)
        yield [IndexTokenShard(shard=shard) for shard in shards]
        indexing.finalize_index(index, shards, "token_index", self.output().path)


class IndexVectorShard(luigi.Task):
    """Chunk, embed and index one corpus file into a sharded vector index."""

    shard = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def complete(self) -> bool:
        return _vector_index()[1].shard_done(self.shard)

    def run(self) -> None:
        model, index = _vector_index()
        overlap = vector_index().chunk_overlap_tokens
        indexing.index_vector_shard(_corpus(), self.shard, model, index, overlap)


class BuildVectorIndex(luigi.Task):
    """Chunk, embed and index the corpus for nearest-neighbour search."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().root / "index" / "vector.stats.json")

    def run(self):
        (model, index), source = _vector_index(), _corpus()
        overlap = vector_index().chunk_overlap_tokens
        if not indexing.builds_in_shards(index):
            indexing.build_vector_index(source, model, index, self.output().path, overlap)
            return
        shards = indexing.corpus_shards(source)
        yield [IndexVectorShard(shard=shard) for shard in shards]
        indexing.finalize_index(index, shards, "vector_index", self.output().path)
