"""Per-shard tasks of Algorithm 1: keywords, token search and judging, vector search and judging."""

from __future__ import annotations

import luigi

from pipelines.config import build, embedder, judge, keywords, token_index, vector_index
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from tipqa import steps
from tipqa.components import (
    make_embedder,
    make_judge,
    make_keyword_extractor,
    make_token_index,
    make_vector_index,
    window_settings,
)
from tipqa.layout import ShardLayout


class ShardTask(luigi.Task):
    """A step over one block of questions; its stats file marks it complete."""

    pool = luigi.Parameter()
    shard = luigi.IntParameter()
    step = ""

    def layout(self) -> ShardLayout:
        return build().layout().pool(self.pool).shard(self.shard)

    def questions(self) -> list:
        path = build().layout().pool(self.pool).questions
        return steps.shard_questions(path, self.shard, build().shard_size)

    def previous(self, task: type[ShardTask]) -> ShardTask:
        """The same shard's task of an earlier step."""
        return task(pool=self.pool, shard=self.shard)

    def cache(self):
        return build().layout().llm_cache if judge().cache else None

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(self.layout().stats(self.step))


class ExtractKeywords(ShardTask):
    """Keywords of the shard's questions."""

    step = "keywords"

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def run(self) -> None:
        extractor = make_keyword_extractor(keywords().settings(), self.cache())
        steps.extract_keywords(self.questions(), extractor, self.layout())


class TokenSearch(ShardTask):
    """Token search: the first k1 documents with all keywords and any alias, and the total."""

    step = "token_search"

    def requires(self) -> list[luigi.Task]:
        return [self.previous(ExtractKeywords), BuildTokenIndex()]

    def run(self) -> None:
        index = make_token_index(token_index().settings(), build().layout().token_index)
        steps.token_search(self.questions(), index, build().k1, self.layout())


class TokenJudge(ShardTask):
    """Judge token candidates with early exit; decide answerable, discarded or on to vectors."""

    step = "token_judge"

    def requires(self) -> luigi.Task:
        return self.previous(TokenSearch)

    def run(self) -> None:
        index = make_token_index(token_index().settings(), build().layout().token_index)
        settings = judge().settings()
        relevance = make_judge(settings, self.cache())
        steps.token_judge(
            self.questions(),
            index.get,
            relevance,
            build().k1,
            window_settings(settings, relevance),
            self.layout(),
        )


class VectorSearch(ShardTask):
    """Vector search for the questions the token stage could not settle."""

    step = "vector_search"

    def requires(self) -> list[luigi.Task]:
        return [self.previous(TokenJudge), BuildVectorIndex()]

    def run(self) -> None:
        model = make_embedder(embedder().settings())
        index = make_vector_index(vector_index().settings(), model, build().layout().vector_index)
        steps.vector_search(self.questions(), model, index, build().k2, self.layout())


class VectorJudge(ShardTask):
    """Judge every vector candidate; decide answerable or unanswerable."""

    step = "vector_judge"

    def requires(self) -> luigi.Task:
        return self.previous(VectorSearch)

    def run(self) -> None:
        steps.vector_judge(
            self.questions(), make_judge(judge().settings(), self.cache()), self.layout()
        )
