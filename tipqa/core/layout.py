"""Where a run keeps its files: every output path of a build comes from here.

The steps' names are `tipqa.core.steps.Step`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tipqa.core.steps import Step


@dataclass(frozen=True)
class RunLayout:
    """The output tree of one run under `root/run`."""

    root: Path

    @classmethod
    def of(cls, output_root: str | Path, run: str) -> RunLayout:
        """The layout of run `run` under `output_root`."""
        return cls(Path(output_root) / run)

    @property
    def world(self) -> WorldLayout:
        """The demo world (corpus files, questions, expected labels)."""
        return WorldLayout(self.root / "world")

    @property
    def token_index(self) -> Path:
        """The embedded token index."""
        return self.root / "index" / "token"

    @property
    def vector_index(self) -> Path:
        """The embedded vector index."""
        return self.root / "index" / "vector"

    def index_stats(self, step: str) -> Path:
        """The stats file of an index build (`TOKEN_INDEX` or `VECTOR_INDEX`), written last."""
        return self.root / "index" / f"{step.removesuffix('_index')}.stats.json"

    def index_start_stats(self, step: str) -> Path:
        """The stats file of starting an index built in parts (created in build mode)."""
        return self.root / "index" / f"{step}-files" / "start.stats.json"

    def index_repeats(self, step: str) -> Path:
        """Where an index built in parts keeps the corpus's repeated ids and the ids they take."""
        return self.root / "index" / f"{step}-files" / "repeats.json"

    def index_part_stats(self, step: str, corpus_file: str) -> Path:
        """The stats file of one corpus file's part of an index built in parts."""
        digest = hashlib.sha256(corpus_file.encode()).hexdigest()[:16]
        name = Path(corpus_file).name or "corpus"
        return self.root / "index" / f"{step}-files" / f"{name}.{digest}.stats.json"

    @property
    def cost_sample_index(self) -> Path:
        """PreviewCost's token index of the corpus sample (embedded, whatever the backend)."""
        return self.root / "index" / "token-sample"

    @property
    def llm_cache(self) -> Path:
        """The persistent cache of LLM calls (shared by all shards): a folder of SQLite files."""
        return self.root / "llm-cache"

    def pool(self, name: str) -> PoolLayout:
        """The files of question pool `name` (for example TriviaQA's dev or train set)."""
        return PoolLayout(self.root / "pools" / name)

    @property
    def splits(self) -> Path:
        """The benchmark's train / validation / test splits."""
        return self.root / "splits"

    @property
    def splits_stats(self) -> Path:
        """The splits' stats file, written last."""
        return self.splits / "stats.json"

    @property
    def hub(self) -> Path:
        """The Hub-ready folder (dataset card and Parquet files)."""
        return self.root / "hub"

    @property
    def hub_stats(self) -> Path:
        """The Hub-ready folder's stats file, written last (beside the folder)."""
        return self.root / "hub.stats.json"

    @property
    def report(self) -> Path:
        """The build report (Markdown, JSON, figures)."""
        return self.root / "report"

    @property
    def report_stats(self) -> Path:
        """The build report's stats file, written last."""
        return self.report / "report.stats.json"

    @property
    def publish(self) -> Path:
        """The records of what PublishDataset uploaded where."""
        return self.root / "publish"

    @property
    def summary(self) -> Path:
        """The end-of-run summary of CreateDataset (Markdown)."""
        return self.root / "summary.md"

    def annotation(self, pool: str) -> Path:
        """The annotation tree of pool `pool` (see `tipqa.annotation.layout`)."""
        return self.root / "annotation" / pool

    def flips(self, other: str) -> Path:
        """Where `tipqa flips` writes this run's label flips against run `other` (by default)."""
        return self.root / "flips" / other

    def training_index(self, key: str) -> TrainingIndexLayout:
        """The default place of a training stream's anchor index: one per stream (`key`),
        beside the runs (under the output root), so that every run reuses it."""
        return TrainingIndexLayout(self.root.parent / "training_index" / key)

    def evaluation(self, backend: str, model: str, split: str) -> EvaluationLayout:
        """The evaluation of `model` (on answerer `backend`) on `split`."""
        return EvaluationLayout(
            self.root / Step.EVALUATE / f"{backend}-{model_slug(model)}" / split
        )


def model_slug(model: str) -> str:
    """A folder name for a model: a Hub id `owner/name` is `owner--name`; a path longer than
    that is its last part and a short hash of the whole (two folders called `model` differ)."""
    parts = [part for part in model.split("/") if part]
    if not parts:
        return "model"
    if len(parts) <= 2 and not model.startswith(("/", ".")):
        return "--".join(parts)
    digest = hashlib.sha256(model.encode()).hexdigest()[:8]
    return f"{parts[-1]}-{digest}"


@dataclass(frozen=True)
class WorldLayout:
    """The demo world's files: its corpus, its questions and their expected labels."""

    root: Path

    @property
    def corpus(self) -> Path:
        """The folder of the corpus files."""
        return self.root / "corpus"

    def corpus_file(self, part: int) -> Path:
        """Corpus file number `part`."""
        return self.corpus / f"part-{part:05d}.jsonl"

    @property
    def questions(self) -> Path:
        """The questions (`Question`)."""
        return self.root / "questions.jsonl"

    @property
    def expected(self) -> Path:
        """Each question's expected label and why (`Expected`)."""
        return self.root / "expected.jsonl"

    @property
    def spec(self) -> Path:
        """The world's settings and counts."""
        return self.root / "world.json"

    @property
    def stats(self) -> Path:
        """The world step's stats file, written last."""
        return self.root / "world.stats.json"


@dataclass(frozen=True)
class EvaluationLayout:
    """One model's evaluation on one split: its predictions, then its scores and report."""

    root: Path

    @property
    def predictions(self) -> Path:
        """The model's predictions (`{id, prediction, confidence}` per question), in gold order."""
        return self.root / "predictions.jsonl"

    @property
    def predictions_stats(self) -> Path:
        """The predictions' stats file, written with them."""
        return self.root / "predictions.stats.json"

    @property
    def scored(self) -> Path:
        """Each question's reading and outcome."""
        return self.root / "scored.jsonl"

    @property
    def scores(self) -> Path:
        """The scores (JSON)."""
        return self.root / "scores.json"

    @property
    def report(self) -> Path:
        """The Markdown report."""
        return self.root / "report.md"

    @property
    def confidence(self) -> Path:
        """Each question's confidences by method (sampled answers, P(True), ...)."""
        return self.root / "confidence.jsonl"

    def figure(self, name: str) -> Path:
        """A figure of the report (`reliability`, `breakdown-stage`, ...)."""
        return self.root / f"{name}.png"

    @property
    def stats(self) -> Path:
        """The evaluation's stats file, written last."""
        return self.root / "evaluate.stats.json"


@dataclass(frozen=True)
class TrainingIndexLayout:
    """A training stream's anchor index (`tipqa.training_order.anchors`) and its stats."""

    root: Path

    @property
    def stats(self) -> Path:
        """The index build's stats file, written last."""
        return self.root / "build.stats.json"


@dataclass(frozen=True)
class PoolLayout:
    """One question pool: its questions, its shards, and its partition."""

    root: Path

    @property
    def questions(self) -> Path:
        """The pool's questions, normalised to `Question` records."""
        return self.root / "questions.jsonl"

    @property
    def questions_stats(self) -> Path:
        """The stats file of the pool's questions step, written last."""
        return self.root / "questions.stats.json"

    @property
    def shards(self) -> Path:
        """The folder of the pool's question shards."""
        return self.root / "shards"

    def shard(self, index: int) -> ShardLayout:
        """The files of question shard `index`."""
        return ShardLayout(self.shards / f"shard-{index:05d}")

    def shard_folders(self) -> list[ShardLayout]:
        """The pool's shards there are on disk, in order."""
        return [ShardLayout(path) for path in sorted(self.shards.glob("shard-*"))]

    @property
    def partition(self) -> Path:
        """The pool's partition: one file per label, instances, relevance files (qrels and
        judged units), stats, a DatasetDict."""
        return self.root / "partition"

    @property
    def partition_files(self) -> PartitionLayout:
        """The files of the pool's partition."""
        return PartitionLayout(self.partition)

    @property
    def partition_stats(self) -> Path:
        """The partition's stats file, written last."""
        return self.partition_files.stats

    @property
    def cost_preview(self) -> Path:
        """PreviewCost's bounds on what the judge will be sent."""
        return self.root / "cost_preview.json"

    @property
    def audit(self) -> Path:
        """The audit of the pool's unanswerable and discarded labels (`tipqa.audit`)."""
        return self.root / "audit.json"

    @property
    def audit_judgments(self) -> Path:
        """Every judgment the audit obtained (`Judgment`, stage "audit")."""
        return self.root / "audit_judgments.jsonl"

    @property
    def judge_audit_judgments(self) -> Path:
        """Every judgment of the judge audit's second judge (`Judgment`, the build's stages)."""
        return self.root / "judge_audit_judgments.jsonl"

    @property
    def audit_stats(self) -> Path:
        """The audit's stats file, written last."""
        return self.root / "audit.stats.json"

    @property
    def verbatim(self) -> Path:
        """Per question, the documents that contain it verbatim (`Verbatim`)."""
        return self.root / "verbatim.jsonl"

    @property
    def verbatim_stats(self) -> Path:
        """The verbatim count's stats file, written last."""
        return self.root / "verbatim.stats.json"

    @property
    def boundary(self) -> BoundaryLayout:
        """The pool's knowledge boundary over training time (with a training order)."""
        return BoundaryLayout(self.root / "boundary")


@dataclass(frozen=True)
class PartitionLayout:
    """A pool's partition: one file per label, the vector instances, the relevance files (named
    by `tipqa.dataset.qrels`), a DatasetDict, and the stats file, written last."""

    root: Path

    def labelled(self, label: str) -> Path:
        """The pool's questions that the partition labelled `label`."""
        return self.root / f"{label}.jsonl"

    @property
    def instances(self) -> Path:
        """The vector-stage instances of the pool's questions."""
        return self.root / "instances.jsonl"

    @property
    def dataset(self) -> Path:
        """The partition as a `datasets.DatasetDict` (one split per label, plus instances)."""
        return self.root / "hf"

    @property
    def stats(self) -> Path:
        """The partition's stats file, written last."""
        return self.root / "stats.json"


@dataclass(frozen=True)
class SplitsLayout:
    """The files of the splits folder."""

    root: Path

    def folder(self, split: str) -> Path:
        """The folder of `split`'s files."""
        return self.root / split

    def questions(self, split: str) -> Path:
        """The labelled questions of `split`."""
        return self.folder(split) / "questions.jsonl"

    def instances(self, split: str) -> Path:
        """The vector-stage instances of `split`'s questions."""
        return self.folder(split) / "instances.jsonl"

    @property
    def stats(self) -> Path:
        """The split statistics (table 2 of the paper, and more), written last."""
        return self.root / "stats.json"


@dataclass(frozen=True)
class BoundaryLayout:
    """A pool's answerable questions dated, and its split as of each checkpoint."""

    root: Path

    @property
    def first_seen(self) -> Path:
        """Each answerable question's first training step and its evidence (`FirstSeen`)."""
        return self.root / "first_seen.jsonl"

    def checkpoint(self, step: int) -> Path:
        """Every question of the pool as of checkpoint `step` (`LabeledQuestion`)."""
        return self.root / f"questions_step{step}.jsonl"

    def checkpoint_files(self) -> list[Path]:
        """The checkpoint files there are (of the current checkpoints or of earlier ones)."""
        return sorted(self.root.glob("questions_step*.jsonl"))

    @property
    def shares(self) -> Path:
        """Per checkpoint: questions by label and the answerable share."""
        return self.root / "shares.json"

    @property
    def figure(self) -> Path:
        """The answerable share against the training step."""
        return self.root / "boundary.png"

    @property
    def stats(self) -> Path:
        """The boundary step's stats file, written last."""
        return self.root / "stats.json"


@dataclass(frozen=True)
class ShardLayout:
    """The files one question shard goes through, step by step."""

    root: Path

    @property
    def questions(self) -> Path:
        """The shard's questions (written with the pool's questions)."""
        return self.root / "questions.jsonl"

    def data(self, name: str) -> Path:
        """A JSONL output of the shard (named after what it holds, e.g. "token_decisions")."""
        return self.root / f"{name}.jsonl"

    def stats(self, step: str) -> Path:
        """The stats file of `step`, written last."""
        return self.root / f"{step}.stats.json"

    @property
    def keywords(self) -> Path:
        """The shard's keywords of each question (`Keywords`)."""
        return self.data("keywords")

    @property
    def token_candidates(self) -> Path:
        """The shard's token-search results (`TokenCandidates`)."""
        return self.data("token_candidates")

    @property
    def token_judgments(self) -> Path:
        """The shard's token-stage judgments (`Judgment`)."""
        return self.data("token_judgments")

    @property
    def token_decisions(self) -> Path:
        """The shard's token-stage decisions (`Decision`)."""
        return self.data("token_decisions")

    @property
    def vector_candidates(self) -> Path:
        """The shard's vector-search results (`VectorCandidates`)."""
        return self.data("vector_candidates")

    @property
    def vector_judgments(self) -> Path:
        """The shard's vector-stage judgments (`Judgment`)."""
        return self.data("vector_judgments")

    @property
    def vector_decisions(self) -> Path:
        """The shard's vector-stage decisions (`Decision`)."""
        return self.data("vector_decisions")

    @property
    def instances(self) -> Path:
        """The shard's vector-stage instances (`VectorInstance`)."""
        return self.data("instances")
