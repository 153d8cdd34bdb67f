"""The CPU runtimes (OpenVINO, ONNX Runtime) against sentence-transformers fp32 on torch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.indexes.embedders.sentence_transformers import (
    SentenceTransformerEmbedder,
    SentenceTransformerSettings,
)

SHARED = Path(__file__).resolve().parents[4].parent / "shared" / "data"
PASSAGES = SHARED / "corpus" / "wikipedia-passages-1000.jsonl"
OWN_TEXTS = [
    "The lighthouse keeper painted the harbour wall blue in 1931.",
    "Budapest is the Hungarian capital.",
    "x",
    "",
    "A retired astronomer counted seventeen comets. " * 60,  # over the 256-token limit
    "Kneading dough develops the gluten in bread; rye has little of it.",
]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One export folder for the module (the first CPU embedder exports, the others reuse)."""
    return str(tmp_path_factory.mktemp("exports"))


@pytest.fixture(scope="module")
def reference() -> SentenceTransformerEmbedder:
    """sentence-transformers fp32 on torch: what the CPU runtimes must agree with."""
    return SentenceTransformerEmbedder(SentenceTransformerSettings(runtime="torch"))


@pytest.fixture(scope="module", params=["openvino", "onnx"])
def cpu(request: pytest.FixtureRequest, exports: str) -> SentenceTransformerEmbedder:
    """An embedder on one of the CPU runtimes, its export under the module's folder."""
    if request.param == "openvino":
        pytest.importorskip("openvino", reason="the openvino extra is not installed")
    settings = SentenceTransformerSettings(runtime=request.param, export_dir=exports, batch_size=4)
    return SentenceTransformerEmbedder(settings)


def real_passages(count: int) -> list[str]:
    """Real Wikipedia passages from the shared samples (the test skips without them)."""
    if not PASSAGES.is_file():
        pytest.skip("the shared data samples are absent")
    with open(PASSAGES) as handle:
        return [json.loads(line)["contents"] for _, line in zip(range(count), handle, strict=False)]


def test_agrees_with_fp32_on_real_text(cpu, reference) -> None:
    texts = real_passages(48)
    mine, theirs = cpu.encode_passages(texts), reference.encode_passages(texts)
    assert mine.shape == (48, 384) and mine.dtype == np.float32 and mine.flags["C_CONTIGUOUS"]
    assert float(np.min(np.sum(mine * theirs, axis=1))) > 0.999
    queries = ["Which river flows through Budapest?", "Who wrote about the gluten in bread?"]
    near_mine = np.argsort(-(cpu.encode_queries(queries) @ mine.T), axis=1)[:, :10]
    near_theirs = np.argsort(-(reference.encode_queries(queries) @ theirs.T), axis=1)[:, :10]
    overlap = [len(set(a) & set(b)) for a, b in zip(near_mine, near_theirs, strict=True)]
    assert min(overlap) >= 9


def test_mixed_lengths_keep_their_order_and_truncate_like_torch(cpu, reference) -> None:
    together = cpu.encode_passages(OWN_TEXTS)
    alone = np.vstack([cpu.encode_passages([text]) for text in OWN_TEXTS])
    np.testing.assert_allclose(together, alone, atol=2e-5)
    agreement = np.sum(together * reference.encode_passages(OWN_TEXTS), axis=1)
    assert float(agreement.min()) > 0.999
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_same_shape_and_token_counts_as_torch(cpu, reference) -> None:
    assert (cpu.dimension, cpu.max_seq_length, cpu.similarity) == (384, 256, "cosine")
    assert cpu.count_tokens(OWN_TEXTS) == reference.count_tokens(OWN_TEXTS)
    assert cpu.count_tokens(["", "word " * 600]) == [2, 602]


def test_the_runtime_is_part_of_the_name(cpu, reference) -> None:
    assert reference.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert cpu.name == f"{reference.name} runtime={cpu.runtime}"
    assert cpu.settings.identity() != reference.settings.identity()


def test_prefixes_apply_as_on_torch(cpu, exports) -> None:
    settings = SentenceTransformerSettings(
        runtime=cpu.runtime, export_dir=exports, query_prefix="query: ", passage_prefix="passage: "
    )
    prefixed = SentenceTransformerEmbedder(settings)
    np.testing.assert_allclose(
        prefixed.encode_queries(["x"]), cpu.encode_passages(["query: x"]), atol=1e-5
    )
    assert prefixed.count_tokens(["x"]) == cpu.count_tokens(["passage: x"])


def test_bad_input(cpu) -> None:
    assert cpu.encode_passages([]).shape == (0, 384)
    assert cpu.count_tokens([]) == []
    with pytest.raises(InputError, match=r"texts\[1\]"):
        cpu.encode_passages(["fine", 7])  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"texts\[0\]"):
        cpu.count_tokens([None])  # type: ignore[list-item]


def test_a_hub_id_without_a_cached_copy_is_a_config_error(exports, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    settings = SentenceTransformerSettings(model="nobody/no-such-model", export_dir=exports)
    with pytest.raises(ConfigError, match="neither a folder nor in the Hugging Face cache"):
        SentenceTransformerEmbedder(settings)
