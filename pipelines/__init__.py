"""Luigi tasks of tipqa: `luigi --module pipelines CreateDataset --local-scheduler`."""

from pipelines.annotation import AnnotationAgreement, CompletedAnnotation, ExportAnnotation
from pipelines.audit import Audit, CountVerbatim
from pipelines.boundary import Boundary, BuildTrainingIndex
from pipelines.create_dataset import CreateDataset
from pipelines.evaluate import Evaluate
from pipelines.exit_codes import set_default_exit_codes
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex, IndexPart, StartIndex
from pipelines.inputs import MakeDemoWorld, PrepareQuestions
from pipelines.labelstudio import PullAnnotation, PushAnnotation
from pipelines.partition import Partition
from pipelines.preview import PreviewCost
from pipelines.publish import BuildHubFolder, BuildReport, MakeSplits, PublishDataset
from pipelines.retry import RetryFailed
from pipelines.shard_steps import (
    ExtractKeywords,
    TokenJudge,
    TokenSearch,
    VectorJudge,
    VectorSearch,
)

set_default_exit_codes()

__all__ = [
    "AnnotationAgreement",
    "Audit",
    "Boundary",
    "BuildHubFolder",
    "BuildReport",
    "BuildTokenIndex",
    "BuildTrainingIndex",
    "BuildVectorIndex",
    "CompletedAnnotation",
    "CountVerbatim",
    "CreateDataset",
    "Evaluate",
    "ExportAnnotation",
    "ExtractKeywords",
    "IndexPart",
    "MakeDemoWorld",
    "MakeSplits",
    "Partition",
    "PrepareQuestions",
    "PreviewCost",
    "PublishDataset",
    "PullAnnotation",
    "PushAnnotation",
    "RetryFailed",
    "StartIndex",
    "TokenJudge",
    "TokenSearch",
    "VectorJudge",
    "VectorSearch",
]
