"""Tasks that build the token and the vector index of the corpus."""

from __future__ import annotations

import luigi

from pipelines.config import build, corpus, embedder, token_index, vector_index
from pipelines.inputs import world_requirements
from tipqa.components import make_embedder, make_token_index, make_vector_index
from tipqa.indexing import build_token_index, build_vector_index
from tipqa.inputs import open_corpus


class BuildTokenIndex(luigi.Task):
    """Index the corpus for phrase search."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().root / "index" / "token.stats.json")

    def run(self) -> None:
        layout = build().layout()
        index = make_token_index(token_index().settings(), layout.token_index)
        build_token_index(open_corpus(corpus().settings(), layout.world), index, self.output().path)


class BuildVectorIndex(luigi.Task):
    """Chunk, embed and index the corpus for nearest-neighbour search."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().root / "index" / "vector.stats.json")

    def run(self) -> None:
        layout = build().layout()
        model = make_embedder(embedder().settings())
        index = make_vector_index(vector_index().settings(), model, layout.vector_index)
        build_vector_index(
            open_corpus(corpus().settings(), layout.world),
            model,
            index,
            self.output().path,
            vector_index().chunk_overlap_tokens,
        )
