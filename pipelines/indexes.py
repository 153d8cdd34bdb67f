"""Tasks that build the token and the vector index of the corpus.

Embedded backends build in one task, into a folder of the run. Backends that build in parts
(Elasticsearch) are started once (`StartIndex`: the index created in build mode), built one
task per corpus file (run many at once with `luigid` and `--workers N`), and finalized once
(the build task itself: serving settings restored, the index marked complete).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import luigi

from pipelines.base import StepTask
from pipelines.inputs import world_requirements
from tipqa.build import indexes
from tipqa.build.assemble import builds_in_parts, token_index, vector_index
from tipqa.build.inputs import open_corpus
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.steps import Step


class IndexStep(StepTask):
    """A step of an index build; `index` is Step.TOKEN_INDEX or Step.VECTOR_INDEX."""

    index = luigi.ChoiceParameter(choices=[Step.TOKEN_INDEX, Step.VECTOR_INDEX])

    def _open(self) -> Any:
        if self.index == Step.TOKEN_INDEX:
            return token_index(self.config, self.plan)
        return vector_index(self.config, self.plan)[1]


class StartIndex(IndexStep):
    """Create an index built in parts, in build mode, once before its first corpus file."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def record(self) -> StepRecord:
        return self.plan.index_start(self.index)

    def as_input(self) -> str:
        """The index build's fingerprint, which every part of that build records."""
        return self.plan.index(self.index).fingerprint

    def stats_path(self) -> Path:
        return self.layout.index_start_stats(self.index)

    def run(self) -> None:
        indexes.start_index(self._open(), self.stats_path(), self.index, self.record())


class IndexFile(IndexStep):
    """Index one corpus file into an index built in parts."""

    file = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return StartIndex(index=self.index)

    def record(self) -> StepRecord:
        return self.plan.index_part(self.index, self.file)

    def stats_path(self) -> Path:
        return self.layout.index_part_stats(self.index, self.file)

    def run(self) -> None:
        corpus = open_corpus(self.config.corpus, self.layout)
        record, path = self.record(), self.stats_path()
        if self.index == Step.TOKEN_INDEX:
            index = token_index(self.config, self.plan)
            assert isinstance(index, indexes.PartedTokenIndex)
            indexes.index_token_part(corpus, self.file, index, path, record)
            return
        embedder, vectors = vector_index(self.config, self.plan)
        assert isinstance(vectors, indexes.PartedVectorIndex)
        overlap = self.plan.vector_index_inputs.vector_chunking.chunk_overlap_tokens
        indexes.index_vector_part(corpus, self.file, embedder, vectors, path, record, overlap)


class BuildIndex(IndexStep):
    """Build an index of the corpus (finalizing one built in parts): see the subclasses."""

    def requires(self) -> list[luigi.Task]:
        start = [StartIndex(index=self.index)] if builds_in_parts(self.index, self.config) else []
        return [*world_requirements(), *start]

    def record(self) -> StepRecord:
        return self.plan.index(self.index)

    def stats_path(self) -> Path:
        return self.layout.index_stats(self.index)

    def dynamic_requires(self) -> list[luigi.Task]:
        """One IndexFile per corpus file, for a backend that builds in parts."""
        return list(self._parts())

    def _parts(self) -> list[IndexFile]:
        if not builds_in_parts(self.index, self.config):
            return []
        files = indexes.corpus_parts(open_corpus(self.config.corpus, self.layout))
        return [IndexFile(index=self.index, file=name) for name in files]

    def run(self) -> Any:
        config, record, path = self.config, self.record(), self.stats_path()
        corpus = open_corpus(config.corpus, self.layout)
        if builds_in_parts(self.index, config):
            tasks = self._parts()
            yield tasks
            files = [task.file for task in tasks]
            parts = [self.layout.index_part_stats(self.index, name) for name in files]
            indexes.finalize_index(self._open(), files, self.index, path, record, parts)
            return
        _fresh(self.layout, self.index, record)
        if self.index == Step.TOKEN_INDEX:
            indexes.build_token_index(corpus, token_index(config, self.plan), path, record)
            return
        embedder, vectors = vector_index(config, self.plan)
        overlap = self.plan.vector_index_inputs.vector_chunking.chunk_overlap_tokens
        indexes.build_vector_index(corpus, embedder, vectors, path, record, overlap)


def _fresh(layout: RunLayout, step: str, record: StepRecord) -> None:
    """Empty the embedded index's folder if it holds another build."""
    folder = layout.token_index if step == Step.TOKEN_INDEX else layout.vector_index
    indexes.fresh_folder(folder, record.fingerprint)


class BuildTokenIndex(BuildIndex):
    """Index the corpus for phrase search: `luigi --module pipelines BuildTokenIndex`."""

    index = Step.TOKEN_INDEX


class BuildVectorIndex(BuildIndex):
    """Chunk, embed and index the corpus for nearest-neighbour search."""

    index = Step.VECTOR_INDEX
