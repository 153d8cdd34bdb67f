"""Encode texts with an exported sentence-transformers model on ONNX Runtime or OpenVINO (CPU).

Texts are tokenized with the model's own fast tokenizer (`tokenizers`, no transformers import),
truncated to the model's sequence limit as sentence-transformers does, sorted by length and
run in batches padded only to their longest member, then pooled (mean over real tokens, or
the first token) and normalised here. The output order is the input order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.indexes.embedders.export import ExportInfo

Feeds = dict[str, np.ndarray]
ENGINES = ("onnxruntime", "openvino")


def _onnxruntime(info: ExportInfo, threads: int) -> Callable[[Feeds], np.ndarray]:
    """Run the export on an ONNX Runtime CPU session (`threads` 0: its default).

    Its memory pattern (a plan kept per input shape) is off: batches come padded to every width,
    and the plans made peak memory grow with the number of embedding calls (a 1 MB document
    embedded 256 chunks a call: 1,041 MB above the loaded model with it, 661 MB without).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_mem_pattern = False
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(info.model_file), options, providers=["CPUExecutionProvider"]
    )
    return lambda feeds: session.run(None, feeds)[0]


def _openvino(info: ExportInfo, threads: int) -> Callable[[Feeds], np.ndarray]:
    """Run the export compiled by OpenVINO for the CPU, in fp32 even where the CPU could do
    bf16 (OpenVINO's default on AMX CPUs), so vectors agree with the fp32 model."""
    try:
        import openvino
    except ImportError as exc:
        raise MissingExtraError("openvino", "openvino") from exc
    config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    compiled = openvino.Core().compile_model(str(info.model_file), "CPU", config)
    request = compiled.create_infer_request()
    return lambda feeds: np.asarray(request.infer(feeds)[0])


def _tokenizer(info: ExportInfo, max_length: int | None) -> Any:
    """The export's tokenizer, truncating to `max_length` tokens (None: never)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(info.tokenizer_file))
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


class OnnxEncoder:
    """Turns texts into pooled vectors with an ONNX export (`tipqa.indexes.embedders.export`)."""

    def __init__(
        self,
        info: ExportInfo,
        *,
        engine: str = "onnxruntime",
        batch_size: int = 64,
        threads: int = 0,
    ) -> None:
        if engine not in ENGINES:
            raise ConfigError(f"unknown ONNX engine {engine!r}; known: {', '.join(ENGINES)}")
        if batch_size < 1:
            raise ConfigError(f"embedder batch_size must be >= 1, got {batch_size}")
        if threads < 0:
            raise ConfigError(f"embedder threads must be >= 0 (0: all cores), got {threads}")
        self.info = info
        self.batch_size = batch_size
        self.dimension = info.dimension
        self.max_seq_length = info.max_seq_length
        self._run = (_openvino if engine == "openvino" else _onnxruntime)(info, threads)
        self._truncating = _tokenizer(info, info.max_seq_length)
        self._counting = _tokenizer(info, None)
        self._wanted = set(info.inputs)

    def _prepare(self, texts: list[str]) -> list[str]:
        """Texts as the model's Transformer module sees them (lower-cased if it says so)."""
        return [text.lower() for text in texts] if self.info.do_lower_case else texts

    def count(self, texts: list[str]) -> list[int]:
        """Untruncated token counts, special tokens included."""
        encodings = self._counting.encode_batch(self._prepare(texts), add_special_tokens=True)
        return [len(encoding.ids) for encoding in encodings]

    def encode(self, texts: list[str], normalize: bool) -> np.ndarray:
        """Float32 matrix (len(texts), dimension), in input order."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._truncating.encode_batch(self._prepare(texts), add_special_tokens=True)
        order = np.argsort([-len(encoding.ids) for encoding in encodings], kind="stable")
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._pooled([encodings[i] for i in rows])
        if normalize or self.info.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, 1e-12)
        return out

    def _pooled(self, encodings: list[Any]) -> np.ndarray:
        """Run one batch (padded to its longest member) and pool its hidden states."""
        width = max(len(encoding.ids) for encoding in encodings)
        shape = (len(encodings), width)
        ids = np.full(shape, self.info.pad_token_id, dtype=np.int64)
        mask = np.zeros(shape, dtype=np.int64)
        types = np.zeros(shape, dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            ids[row, :length] = encoding.ids
            mask[row, :length] = 1
            types[row, :length] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self._run({k: v for k, v in feeds.items() if k in self._wanted})
        if self.info.pooling == "cls":
            return hidden[:, 0, :]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
