"""The package's version, written once: pyproject.toml reads it, `tipqa.__version__` is it."""

__version__ = "0.1.0"
