"""Fixtures shared across the test tree: the vLLM engine's environment and the tiny model.

Defined once here so that every test of a session gets the same tiny model, and so one engine.
"""

from __future__ import annotations

from vllm_fixtures import tiny_model, vllm_environment

__all__ = ["tiny_model", "vllm_environment"]
