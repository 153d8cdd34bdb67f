"""The rehearsal, small: luigid, two clients x two workers, a real vLLM server killed once.

Both clients must exit 0, no prompt may be answered twice, and the labels must equal those of a
one-process build on vLLM's offline engine with the same tiny model.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from benchmarks.rehearsal import rehearse

pytestmark = [
    pytest.mark.slow,
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vllm is not installed: this test runs in .venv-vllm (see .ci/run)",
    ),
]


def test_the_rehearsal_survives_a_server_kill_and_labels_like_the_offline_engine(
    tmp_path: Path,
) -> None:
    result = rehearse(tmp_path, documents=200, shard_size=8, kill_after=6)
    served, offline = result["served"], result["offline"]
    assert offline["exit_code"] == 0 and offline["engine_starts"] >= 1
    assert served["server_starts"] == 2 and served["in_flight_at_kill"] >= 1
    assert served["requests_failed"] >= 1, "no request met the dead server"
    assert served["client_exit_codes"] == [0, 0], served
    assert served["engine_starts"] == 0
    assert served["prompts_answered_twice"] == 0
    assert served["judge_answers"] > 6
    assert result["questions"] >= 20
    assert result["labels_differ"] == 0, result["differing_questions"]
