"""The built splits in other abstention benchmarks' record formats (`python -m tipqa.export`)."""
