"""Luigi tasks of tipqa: `luigi --module pipelines CreateDataset --local-scheduler`."""

from pipelines.dataset import CreateDataset, Partition
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import MakeDemoWorld, PrepareQuestions
from pipelines.preview import PreviewCost
from pipelines.stages import ExtractKeywords, TokenJudge, TokenSearch, VectorJudge, VectorSearch

__all__ = [
    "BuildTokenIndex",
    "BuildVectorIndex",
    "CreateDataset",
    "ExtractKeywords",
    "MakeDemoWorld",
    "Partition",
    "PrepareQuestions",
    "PreviewCost",
    "TokenJudge",
    "TokenSearch",
    "VectorJudge",
    "VectorSearch",
]
