"""Shared fixtures of the scorer's tests."""

from __future__ import annotations

import pytest

from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings


@pytest.fixture
def rules_detector() -> RefusalDetector:
    """A refusal detector without the embedding rule (signals, boxes, empty, phrases)."""
    return RefusalDetector(RefusalSettings(embedding=False))
