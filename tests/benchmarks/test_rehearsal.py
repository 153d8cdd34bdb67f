"""The rehearsal, small: luigid, two clients x two workers, a real vLLM server killed once.

Both clients must exit 0, no prompt may be answered twice, and the labels must equal those of a
one-process build on vLLM's offline engine with the same tiny model.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from benchmarks.rehearsal import BACKOFF_BASE, BACKOFF_MAX, rehearse, retries_covering


@pytest.mark.parametrize("outage_s", [0.1, 7.75, 30.0, 400.0])
def test_the_clients_retries_outlast_the_outage_they_are_sized_for(outage_s: float) -> None:
    def shortest_wait(retries: int) -> float:
        return sum(min(BACKOFF_MAX, BACKOFF_BASE * 2**i) / 2 for i in range(retries))

    retries = retries_covering(outage_s)
    assert shortest_wait(retries) >= outage_s > shortest_wait(retries - 1)


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="vllm is not installed: this test runs in .venv-vllm (see .ci/run)",
)
def test_the_rehearsal_survives_a_server_kill_and_labels_like_the_offline_engine(
    tmp_path: Path,
) -> None:
    result = rehearse(tmp_path, documents=200, shard_size=8, kill_after=6)
    served, offline = result["served"], result["offline"]
    assert offline["exit_code"] == 0 and offline["engine_starts"] >= 1
    assert served["server_starts"] == 2 and served["in_flight_at_kill"] >= 1
    assert served["requests_failed"] >= 1, "no request met the dead server"
    logs = [(tmp_path / "served" / f"client-{i}.log").read_text()[-2000:] for i in range(2)]
    assert served["client_exit_codes"] == [0, 0], (served, *logs)
    assert served["engine_starts"] == 0
    assert served["prompts_answered_twice"] == 0
    assert served["judge_answers"] > 6
    assert result["questions"] >= 20
    assert result["labels_differ"] == 0, result["differing_questions"]
