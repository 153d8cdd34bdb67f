"""Tasks that build the token and the vector index of the corpus.

Embedded backends build in one task, into a folder of the run. Backends that build in parts
(Elasticsearch) are started once (`StartIndex`: the index created in build mode), built one
task per corpus file (run many at once with `luigid` and `--workers N`), and finalized once
(the build task itself: serving settings restored, the index marked complete).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.inputs import world_requirements
from tipqa.builder.assemble import index_place
from tipqa.builder.indexes import build_index, in_parts, index_part, index_parts, start_index_parts
from tipqa.builder.step_inputs import IndexPartInputs, TokenIndexInputs, VectorIndexInputs
from tipqa.core.steps import Step


class IndexStep(StepTask):
    """A step of an index build; `index` is `token_index` or `vector_index`."""

    index = luigi.ChoiceParameter(choices=[Step.TOKEN_INDEX.value, Step.VECTOR_INDEX.value])

    def built(self) -> TokenIndexInputs | VectorIndexInputs:
        """The inputs record of the index build this step is part of."""
        return self.plan.index(self.index)


class StartIndex(IndexStep):
    """Create an index built in parts, in build mode, once before its first corpus file."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements(self)

    def inputs(self) -> IndexPartInputs:
        return self.plan.index_start(self.index)

    def as_input(self) -> str:
        """The index build's fingerprint, which every part of that build records."""
        return self.built().fingerprint

    def stats_path(self) -> Path:
        return self.layout.index_start_stats(self.index)

    def outputs(self) -> list[Path]:
        return []  # the index is on its server, which checks the build's fingerprint

    def run(self) -> None:
        start_index_parts(self.inputs(), self.layout)


class IndexPart(IndexStep):
    """Index one part of the corpus (one of its files) into an index built in parts."""

    part = luigi.Parameter(description="the corpus file this task indexes")

    def requires(self) -> luigi.Task:
        return StartIndex(index=self.index)

    def inputs(self) -> IndexPartInputs:
        return self.plan.index_part(self.index, self.part)

    def stats_path(self) -> Path:
        return self.layout.index_part_stats(self.index, self.part)

    def outputs(self) -> list[Path]:
        return []  # the index is on its server, which checks the build's fingerprint

    def run(self) -> None:
        index_part(self.inputs(), self.layout)


class BuildIndex(IndexStep):
    """Build an index of the corpus (finalizing one built in parts): see the subclasses."""

    def requires(self) -> list[luigi.Task]:
        start = [StartIndex(index=self.index)] if in_parts(self.built()) else []
        return [*world_requirements(self), *start]

    def inputs(self) -> TokenIndexInputs | VectorIndexInputs:
        return self.built()

    def stats_path(self) -> Path:
        return self.layout.index_stats(self.index)

    def outputs(self) -> list[Path]:
        """The index's folder in the run, for an index built at once (embedded)."""
        return [] if in_parts(self.built()) else [index_place(self.built(), self.layout).path]

    def dynamic_requires(self) -> list[luigi.Task]:
        """One IndexPart per corpus file, for a backend that builds in parts."""
        return list(self.parts())

    def parts(self) -> list[IndexPart]:
        """The tasks of the index's parts (none for a backend that builds at once)."""
        parts = index_parts(self.built(), self.layout)
        return [IndexPart(index=self.index, part=name) for name in parts]

    def run(self) -> Iterator[list[IndexPart]]:
        parts = self.parts()
        if parts:
            yield parts
        build_index(self.built(), self.layout, [part.part for part in parts])


class BuildTokenIndex(BuildIndex):
    """Index the corpus for phrase search: `luigi --module pipelines BuildTokenIndex`."""

    index = Step.TOKEN_INDEX


class BuildVectorIndex(BuildIndex):
    """Chunk, embed and index the corpus for nearest-neighbour search."""

    index = Step.VECTOR_INDEX
