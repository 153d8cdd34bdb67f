"""Benchmark scripts: `python -m benchmarks.<name>` (see benchmarks/README.md)."""
