"""tipqa: build knowledge-boundary QA benchmarks against an LLM's pretraining corpus."""

__version__ = "0.1.0"
