"""Random-weight models of the paper's architectures for throughput checks (nothing downloaded).

Speed does not depend on the weights' values, so the judge is a `LlamaForCausalLM` with Llama
3.1 8B's published configuration and random bf16 weights, and the embedder an `XLMRobertaModel`
with multilingual-e5-large's. Neither tokenizer can be downloaded: a byte-level BPE is trained
on the fly on the benchmark's own text (for the judge with room for 128,256 entries, Llama 3's
vocabulary size, which the model's embedding and output layers always have), with Llama 3's
chat markup as special tokens. Token counts per prompt therefore differ somewhat from the real
tokenizers'; prompt tokens/s is the figure that carries over.

Weights are written tensor by tensor (drawn on the target device, bf16) into sharded
safetensors files with an index, so an 8B model (16 GB) needs neither a copy of the whole
model in CPU memory nor a transformers model instantiated with real tensors.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

LLAMA_31_8B = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128_256,
    "max_position_embeddings": 131_072,
    "rms_norm_eps": 1e-5,
    "rope_theta": 500_000.0,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    "tie_word_embeddings": False,
}
# the architecture of the tiny test model (tests/support/vllm_model.py): head_dim 32, the CPU
# minimum
TINY_LLAMA = {
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 2048,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}
E5_LARGE = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "vocab_size": 250_002,
    "max_position_embeddings": 514,
    "type_vocab_size": 1,
    "layer_norm_eps": 1e-5,
}
TINY_E5 = {**E5_LARGE, "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2}
TINY_E5 = {**TINY_E5, "num_attention_heads": 4, "vocab_size": 2048}

BOS, EOS = "<|begin_of_text|>", "<|eot_id|>"
LLAMA_SPECIALS = [BOS, "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", EOS]
LLAMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] | trim }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
SHARD_BYTES = 4 * 2**30


def train_bpe(
    texts: Iterable[str], vocab_size: int, specials: list[str], unk: str | None = None
) -> Any:
    """A byte-level BPE `tokenizers.Tokenizer` trained on `texts` (at most `vocab_size`), with
    `unk` as its unknown token when given."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token=unk))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    return bpe


def fast_tokenizer(bpe: Any, **specials: Any) -> Any:
    """The `transformers` fast tokenizer of `bpe`, with `<s>`, `</s>`, `<pad>` and `<unk>` as
    its begin, end, padding and unknown tokens, and `specials` besides."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        **specials,
    )


def _write_shards(shapes: dict[str, tuple[int, ...]], out: Path, device: str, dtype: Any) -> int:
    """Random tensors of `shapes` into model-0000N-of-0000M.safetensors plus the index."""
    import torch
    from safetensors.torch import save_file

    groups: list[list[str]] = [[]]
    size = 0
    width = torch.tensor([], dtype=dtype).element_size()
    for name, shape in shapes.items():
        nbytes = width * int(torch.Size(shape).numel())
        if groups[-1] and size + nbytes > SHARD_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += nbytes
    generator = torch.Generator(device=device).manual_seed(0)
    weight_map = {}
    for number, names in enumerate(groups, start=1):
        file = f"model-{number:05d}-of-{len(groups):05d}.safetensors"
        tensors = {}
        for name in names:
            shape = shapes[name]
            if name.endswith("norm.weight") or name.endswith("LayerNorm.weight"):
                tensor = torch.ones(shape, dtype=dtype, device=device)
            elif name.endswith("bias"):
                tensor = torch.zeros(shape, dtype=dtype, device=device)
            else:
                tensor = torch.randn(shape, generator=generator, device=device, dtype=torch.float32)
                tensor = (tensor * 0.02).to(dtype)
            tensors[name] = tensor.cpu().contiguous()
            weight_map[name] = file
        save_file(tensors, str(out / file), metadata={"format": "pt"})
    total = sum(width * int(torch.Size(s).numel()) for s in shapes.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=1))
    return total


def _shapes(model_class: Any, config: Any) -> dict[str, tuple[int, ...]]:
    """Parameter names and shapes of the model, built on the meta device (no memory)."""
    import torch

    with torch.device("meta"):
        model = model_class(config)
    return {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}


def write_llama(out: Path, texts: list[str], dims: dict[str, Any], device: str) -> dict[str, Any]:
    """A random Llama chat model with a trained byte-level BPE tokenizer, saved in `out`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    bpe = train_bpe(texts, int(dims["vocab_size"]), LLAMA_SPECIALS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token=BOS, eos_token=EOS, pad_token="<|end_of_text|>"
    )
    tokenizer.chat_template = LLAMA_CHAT_TEMPLATE
    tokenizer.model_max_length = int(dims["max_position_embeddings"])
    tokenizer.save_pretrained(out)
    config = LlamaConfig(
        **dims,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="bfloat16",
    )
    config.save_pretrained(out)
    weight_bytes = _write_shards(_shapes(LlamaForCausalLM, config), out, device, torch.bfloat16)
    return {
        "tokenizer_vocab": bpe.get_vocab_size(),
        "model_vocab": config.vocab_size,
        "weight_bytes": weight_bytes,
        "config": dims,
    }


def write_e5(out: Path, texts: list[str], dims: dict[str, Any], device: str) -> dict[str, Any]:
    """A random XLM-RoBERTa encoder with a trained tokenizer, as a sentence-transformers folder
    (mean pooling, then normalisation, as e5 has)."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    out.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe = train_bpe(texts, int(dims["vocab_size"]), specials)
    from tokenizers import processors

    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = fast_tokenizer(bpe, mask_token="<mask>", cls_token="<s>", sep_token="</s>")
    tokenizer.model_max_length = int(dims["max_position_embeddings"]) - 2
    tokenizer.save_pretrained(out)
    config = XLMRobertaConfig(**dims, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    config.save_pretrained(out)
    _write_shards(_shapes(XLMRobertaModel, config), out, device, torch.float32)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    (out / "modules.json").write_text(json.dumps(modules))
    (out / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": tokenizer.model_max_length, "do_lower_case": False})
    )
    (out / "1_Pooling").mkdir(exist_ok=True)
    (out / "1_Pooling" / "config.json").write_text(
        json.dumps({"embedding_dimension": dims["hidden_size"], "pooling_mode": "mean"})
    )
    (out / "2_Normalize").mkdir(exist_ok=True)
    return {
        "tokenizer_vocab": bpe.get_vocab_size(),
        "model_vocab": config.vocab_size,
        "config": dims,
    }
