"""tipqa: build knowledge-boundary QA benchmarks against an LLM's pretraining corpus.

The names a notebook needs are exported here and imported on first use, so `import tipqa`
stays light and the modules behind them may move.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tipqa.core.version import __version__ as __version__

_EXPORTS = {
    "load_config": "tipqa.builder.assemble",
    "token_index": "tipqa.builder.assemble",
    "vector_index": "tipqa.builder.assemble",
    "read_config": "tipqa.config",
    "Config": "tipqa.config",
    "Plan": "tipqa.builder.plan",
    "make_judge": "tipqa.builder.components",
    "make_keyword_extractor": "tipqa.builder.components",
    "read_records": "tipqa.core.jsonl",
    "Question": "tipqa.core.records",
    "JudgeRequest": "tipqa.core.records",
    "Judgment": "tipqa.core.records",
    "LabeledQuestion": "tipqa.core.records",
    "score_file": "tipqa.evaluate.score",
}
__all__ = [
    "Config",
    "JudgeRequest",
    "Judgment",
    "LabeledQuestion",
    "Plan",
    "Question",
    "load_config",
    "make_judge",
    "make_keyword_extractor",
    "read_config",
    "read_records",
    "score_file",
    "token_index",
    "vector_index",
]

if TYPE_CHECKING:
    from tipqa.builder.assemble import load_config, token_index, vector_index
    from tipqa.builder.components import make_judge, make_keyword_extractor
    from tipqa.builder.plan import Plan
    from tipqa.config import Config, read_config
    from tipqa.core.jsonl import read_records
    from tipqa.core.records import JudgeRequest, Judgment, LabeledQuestion, Question
    from tipqa.evaluate.score import score_file


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tipqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
