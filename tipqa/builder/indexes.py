"""Index builds: the corpus into the token index, and its chunks into the vector index.

Backends that build in parts (`PartedIndex`, Elasticsearch: one part per corpus file, many
workers at once, a ledger of finished parts in the cluster) are started once, built part by
part, and finalized once; embedded backends (tantivy, FAISS) are built in one pass into a
folder that holds one build only (a folder left by a build with another fingerprint is
removed first).

Both builds read the whole corpus once and record the reader's counts (`corpus.*`, and its
skips by kind as errors) in their stats; a build in parts sums those of its parts when it is
finalized. The token index build logs each skipped record (on a line of its own, above the
progress bar); the vector index build counts them and logs them at DEBUG only, so a build warns
about a bad record once.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import Protocol, runtime_checkable

from tqdm.contrib.logging import logging_redirect_tqdm

from tipqa.builder.assemble import index_place, token_index, vector_index
from tipqa.builder.inputs import open_corpus
from tipqa.builder.step_inputs import (
    IndexInputs,
    IndexPartInputs,
    TokenIndexInputs,
    VectorIndexInputs,
)
from tipqa.config import VectorChunkingSettings
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.layout import RunLayout
from tipqa.core.records import Document
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.dataset.provenance import REMEDY
from tipqa.indexes.chunking import embed_chunks, iter_chunks, make_splitter
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.indexes.vector_index.base import VECTOR_INDEXES, EmbedsOnDemand, VectorIndex
from tipqa.sources.corpus.base import RENAMED_LISTED, Corpus, Repeats, skips_logged_at_debug

CALIBRATION_DOCUMENTS = 200
CHECKPOINT_CHUNKS = 50_000
WHOLE_CORPUS = "all"
NO_SETTINGS = VectorChunkingSettings()  # no overlap, no cap


@runtime_checkable
class PartedIndex(Protocol):
    """An index built in named parts (corpus files) by many workers, then finalized once."""

    def start_build(self) -> None:
        """Create the index (or put it into build mode) once, before the first part."""
        ...

    def part_done(self, part: str) -> bool:
        """True when part `part` has been indexed completely."""
        ...

    def record_part(self, part: str, counts: dict[str, float]) -> None:
        """Record that part `part` has been indexed completely, with its counts."""
        ...

    def finalize(self, parts: Sequence[str] = ()) -> dict[str, float]:
        """Check that every part is done and make the index searchable; return counts."""
        ...


@runtime_checkable
class PartedTokenIndex(PartedIndex, Protocol):
    """A token index built in parts, each part indexed (and recorded) by `build_part`."""

    def build_part(self, documents: Iterable[Document], part: str) -> dict[str, float]:
        """Index one part and record it as done; return its counts."""
        ...


@runtime_checkable
class PartedVectorIndex(PartedIndex, VectorIndex, Protocol):
    """A vector index built in parts: chunks are added per part, then the part recorded."""


def builds_in_parts(backend: object) -> bool:
    """True for index backends that build in parts (one per corpus file) and finalize once."""
    return isinstance(backend, type) and issubclass(backend, PartedIndex)


@runtime_checkable
class CorpusOfFiles(Corpus, Protocol):
    """A corpus made of files that can be read one at a time (a build's parts)."""

    files: Sequence[Path]

    def iter_file(self, path: str | Path) -> Iterator[Document]:
        """The documents of one file."""
        ...


@runtime_checkable
class RepeatsAcrossFiles(CorpusOfFiles, Protocol):
    """A corpus of files that finds the repeated ids of a pass over all of them, and reads a
    file apart with those ids (`tipqa.sources.corpus.files.FileCorpus`)."""

    def find_repeats(self) -> Repeats:
        """Where an id repeats an earlier one's (file, line), and the id it takes."""
        ...

    def apply_repeats(self, repeats: Repeats) -> None:
        """Read each file with the ids `find_repeats` found."""
        ...


def note_repeats(corpus: Corpus, path: Path) -> int:
    """Before a build in parts: one pass over the whole corpus, writing to `path` where an id
    repeats an earlier one's and the id it takes, so that each part (a file read apart) gets
    the ids a build in one pass gives. Returns how many; a corpus of one part needs none."""
    found: Repeats = {}
    if isinstance(corpus, RepeatsAcrossFiles) and len(corpus.files) > 1:
        with skips_logged_at_debug():
            found = corpus.find_repeats()
    write_json(path, [[file, line, new] for (file, line), new in sorted(found.items())])
    return len(found)


def with_repeats(corpus: Corpus, path: Path) -> Corpus:
    """`corpus`, reading its files with the ids `note_repeats` wrote to `path` (when there)."""
    if isinstance(corpus, RepeatsAcrossFiles) and path.is_file():
        rows = read_json(path)
        if not isinstance(rows, list):
            raise InputError("not a list of repeated ids", path=str(path))
        corpus.apply_repeats({(str(file), int(line)): new for file, line, new in rows})
    return corpus


def corpus_parts(corpus: Corpus) -> list[str]:
    """The parts of a build: the corpus's files, or the whole corpus when it has none."""
    if isinstance(corpus, CorpusOfFiles) and corpus.files:
        return [str(path) for path in corpus.files]
    return [WHOLE_CORPUS]


def part_documents(corpus: Corpus, part: str) -> Iterator[Document]:
    """The documents of one part."""
    if part == WHOLE_CORPUS or not isinstance(corpus, CorpusOfFiles):
        return iter(corpus)
    return corpus.iter_file(part)


def fresh_folder(path: Path, fingerprint: str) -> None:
    """Make `path` a folder for the build `fingerprint`: a folder of another build is removed.

    The build's fingerprint is kept beside the folder (`<path>.build`), so an interrupted
    build of the same settings resumes into what it already wrote.
    """
    marker = path.with_name(path.name + ".build")
    recorded = marker.read_text().strip() if marker.is_file() else None
    if recorded != fingerprint:
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(fingerprint + "\n")


def _no_documents(corpus: Corpus, stats: StepStats) -> None:
    """Raise InputError naming the corpus files when not one readable document was found."""
    if stats.counts.get("documents", 0) or corpus.stats.counts.get("documents", 0):
        return
    files = [str(p) for p in corpus.files] if isinstance(corpus, CorpusOfFiles) else []
    skipped = ", ".join(f"{kind}: {n}" for kind, n in sorted(corpus.stats.errors.items()))
    raise InputError(
        "the corpus has no readable document" + (f" (skipped: {skipped})" if skipped else ""),
        path=", ".join(files[:5]) + (" ..." if len(files) > 5 else "") or None,
    )


RENAMED_IDS = "corpus.renamed_ids"


def _merge_reading(stats: StepStats, corpus: Corpus) -> None:
    """Add the corpus reader's counts (as `corpus.*`), skips, and the ids it derived for
    documents whose id an earlier one has (the first of them, `corpus.renamed_ids`)."""
    stats.merge(corpus.stats, prefix="corpus.")
    renamed = corpus.stats.info.get("renamed_ids")
    if renamed:
        stats.info[RENAMED_IDS] = list(renamed)


def build_token_index(
    corpus: Corpus, index: TokenIndex, stats_path: Path, record: StepRecord
) -> StepStats:
    """Index every document of `corpus` in one pass; write the stats (reader skips included)."""
    stats = StepStats(Step.TOKEN_INDEX, provenance=record.provenance())
    with logging_redirect_tqdm():
        built = index.build(iter(corpus))
    for name, value in built.items():
        stats.add(name, value)
    _merge_reading(stats, corpus)
    _no_documents(corpus, stats)
    stats.write(stats_path)
    return stats


def index_token_part(
    corpus: Corpus, part: str, index: PartedTokenIndex, stats_path: Path, record: StepRecord
) -> StepStats:
    """Index one part of the corpus into a token index built in parts (the backend records it)."""
    stats = StepStats(
        f"{Step.TOKEN_INDEX}_file", info={"file": part}, provenance=record.provenance()
    )
    with logging_redirect_tqdm():
        built = index.build_part(part_documents(corpus, part), part)
    for name, value in built.items():
        stats.add(name, value)
    _merge_reading(stats, corpus)
    stats.write(stats_path)
    return stats


def _embed(
    documents: Iterator[Document],
    embedder: Embedder,
    index: VectorIndex,
    stats: StepStats,
    chunking: VectorChunkingSettings,
) -> None:
    """Chunk, embed and add `documents` to `index` in one pass, counting into `stats`
    (nothing when there are none).

    The first `CALIBRATION_DOCUMENTS` documents calibrate the chunk size, then are chunked
    with the others (they are not read twice).
    """
    head = list(islice(documents, CALIBRATION_DOCUMENTS))
    if not head:
        return
    sample = [doc.text for doc in head]
    splitter = make_splitter(
        embedder,
        overlap_tokens=chunking.chunk_overlap_tokens,
        calibration_texts=sample,
        max_document_chars=chunking.max_document_chars,
    )
    stats.info["chars_per_token"] = splitter.chars_per_token
    chunks = iter_chunks(chain(head, documents), splitter, stats)
    counts = embed_chunks(embedder, chunks, index, checkpoint_every=CHECKPOINT_CHUNKS)
    for name, value in counts.items():
        stats.add(f"index.{name}", value)


def build_vector_index(
    corpus: Corpus,
    embedder: Embedder,
    index: VectorIndex | EmbedsOnDemand,
    stats_path: Path,
    record: StepRecord,
    chunking: VectorChunkingSettings = NO_SETTINGS,
) -> StepStats:
    """Chunk, embed and index every document of `corpus` in one pass; write the stats.

    A stage that embeds on demand (`EmbedsOnDemand`) is only prepared: its chunking calibrated
    on the corpus's first documents, as a full index's is. The index's counts at `finish` are
    running totals: they replace those it gave at its last checkpoint.
    """
    stats = StepStats(
        Step.VECTOR_INDEX, info={"embedder": embedder.name}, provenance=record.provenance()
    )
    if isinstance(index, EmbedsOnDemand):
        with skips_logged_at_debug():
            sample = list(islice(iter(corpus), CALIBRATION_DOCUMENTS))
        if not sample:
            _no_documents(corpus, stats)
        prepared = index.prepare(
            sample, embedder, chunking.chunk_overlap_tokens, chunking.max_document_chars
        )
        for name, value in prepared.items():
            stats.add(name, value)
        stats.write(stats_path)
        return stats
    with skips_logged_at_debug():
        _embed(iter(corpus), embedder, index, stats, chunking)
    _no_documents(corpus, stats)
    for name, value in index.finish().items():
        stats.set_total(f"index.{name}", value)
    _merge_reading(stats, corpus)
    stats.write(stats_path)
    return stats


def index_vector_part(
    corpus: Corpus,
    part: str,
    embedder: Embedder,
    index: PartedVectorIndex,
    stats_path: Path,
    record: StepRecord,
    chunking: VectorChunkingSettings = NO_SETTINGS,
) -> StepStats:
    """Chunk, embed and index one part of the corpus, then record it as done."""
    info = {"file": part, "embedder": embedder.name}
    stats = StepStats(f"{Step.VECTOR_INDEX}_file", info=info, provenance=record.provenance())
    with skips_logged_at_debug():
        _embed(part_documents(corpus, part), embedder, index, stats, chunking)
    index.record_part(part, dict(stats.counts))
    _merge_reading(stats, corpus)
    stats.write(stats_path)
    return stats


def start_index(index: PartedIndex, stats_path: Path, step: str, record: StepRecord) -> StepStats:
    """Create an index built in parts (or put it into build mode) once, before its first part."""
    stats = StepStats(f"{step}_start", provenance=record.provenance())
    index.start_build()
    stats.write(stats_path)
    return stats


def finalize_index(
    index: PartedIndex,
    parts: list[str],
    step: str,
    stats_path: Path,
    record: StepRecord,
    part_stats: Sequence[Path] = (),
) -> StepStats:
    """Finalize an index built in parts once every part is done; write the stats.

    `part_stats` are the parts' stats files: the corpus reader's counts and skips they recorded
    are summed into the stats, as a build in one pass records them.
    """
    stats = StepStats(step, provenance=record.provenance())
    for name, value in index.finalize(parts).items():
        stats.add(name, value)
    if not stats.counts.get("documents"):
        raise InputError(f"{step}: the index holds no document once every corpus file is in")
    for path in part_stats:
        recorded = read_stats(path, REMEDY)
        for name, value in recorded.get("counts", {}).items():
            if name.startswith("corpus."):
                stats.add(name, value)
        stats.errors.update(recorded.get("errors", {}))
        renamed = recorded.get("info", {}).get(RENAMED_IDS, [])
        listed = stats.info.setdefault(RENAMED_IDS, [])
        listed.extend(renamed[: max(0, RENAMED_LISTED - len(listed))])
    if not stats.info.get(RENAMED_IDS):
        stats.info.pop(RENAMED_IDS, None)
    stats.write(stats_path)
    return stats


def in_parts(inputs: IndexInputs) -> bool:
    """True when the index of `inputs` is built in parts (its backend is a `PartedIndex`)."""
    registry = TOKEN_INDEXES if isinstance(inputs, TokenIndexInputs) else VECTOR_INDEXES
    return builds_in_parts(registry.resolve(inputs.backend.backend))


def index_parts(inputs: IndexInputs, layout: RunLayout) -> list[str]:
    """The parts of an index built in parts (its corpus files); none for one built at once."""
    return corpus_parts(open_corpus(inputs.reader, layout)) if in_parts(inputs) else []


def parted_index(inputs: TokenIndexInputs | VectorIndexInputs, layout: RunLayout) -> PartedIndex:
    """The index of `inputs`, which its backend builds in parts (else a ConfigError)."""
    if isinstance(inputs, TokenIndexInputs):
        index: object = token_index(inputs, layout)
    else:
        index = vector_index(inputs, layout)[1]
    if not isinstance(index, PartedIndex):
        raise ConfigError(f"[{inputs.step}] backend {inputs.backend.backend!r} builds at once")
    return index


def start_index_parts(inputs: IndexPartInputs, layout: RunLayout) -> StepStats:
    """StartIndex: an index built in parts created in build mode, once before its parts, and
    the repeated ids of the whole corpus noted for its parts (`note_repeats`)."""
    step = inputs.index.step
    corpus = open_corpus(inputs.index.reader, layout)
    repeated = note_repeats(corpus, layout.index_repeats(step))
    stats = layout.index_start_stats(step)
    started = start_index(parted_index(inputs.index, layout), stats, step, inputs.record)
    started.add("repeated_ids", repeated)
    started.write(stats)
    return started


def index_part(inputs: IndexPartInputs, layout: RunLayout) -> StepStats:
    """IndexPart: one corpus file into an index built in parts."""
    index, part = inputs.index, inputs.file or WHOLE_CORPUS
    corpus = with_repeats(open_corpus(index.reader, layout), layout.index_repeats(index.step))
    path, record = layout.index_part_stats(index.step, part), inputs.record
    if isinstance(index, TokenIndexInputs):
        tokens = token_index(index, layout)
        if isinstance(tokens, PartedTokenIndex):
            return index_token_part(corpus, part, tokens, path, record)
    else:
        embedder, vectors = vector_index(index, layout)
        if isinstance(vectors, PartedVectorIndex):
            chunking = index.vector_chunking
            return index_vector_part(corpus, part, embedder, vectors, path, record, chunking)
    raise ConfigError(f"[{index.step}] backend {index.backend.backend!r} builds at once")


def build_index(
    inputs: TokenIndexInputs | VectorIndexInputs, layout: RunLayout, parts: Sequence[str] = ()
) -> StepStats:
    """BuildTokenIndex, BuildVectorIndex: the index built in one pass, or, given the `parts`
    it was built in (all done), finalized."""
    step, path, record = inputs.step, layout.index_stats(inputs.step), inputs.record
    if parts:
        part_stats = [layout.index_part_stats(step, name) for name in parts]
        index = parted_index(inputs, layout)
        return finalize_index(index, list(parts), step, path, record, part_stats)
    fresh_folder(index_place(inputs, layout).path, record.fingerprint)
    corpus = open_corpus(inputs.reader, layout)
    if isinstance(inputs, TokenIndexInputs):
        return build_token_index(corpus, token_index(inputs, layout), path, record)
    embedder, vectors = vector_index(inputs, layout)
    chunking = inputs.vector_chunking
    return build_vector_index(corpus, embedder, vectors, path, record, chunking)
