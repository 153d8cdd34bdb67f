"""Build a tiny random-weight chat model that the real vLLM engine can load (test helper).

The model is a 2-layer `LlamaForCausalLM` (hidden 128, 4 heads: head_dim 32, the least the CPU
attention backend accepts) with a byte-level BPE tokenizer trained on sentences written here, and
a small Jinja chat template. Its answers are meaningless; it exists so that tests drive the real
engine, batching, tokenization and constrained decoding.
"""

from __future__ import annotations

import itertools
from pathlib import Path

SPECIAL_TOKENS = ["<s>", "</s>", "<pad>", "<unk>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

_SUBJECTS = [
    "The lighthouse keeper",
    "A retired astronomer",
    "Our neighbour's parrot",
    "The village choir",
    "An old sea captain",
    "The museum curator",
    "A travelling violinist",
    "The chess club",
    "My grandmother",
    "The night train",
]
_PREDICATES = [
    "painted the harbour wall blue in 1931",
    "counted seventeen comets over the northern hills",
    "won the regional quiz about rivers and capitals",
    "kept a diary of every storm that reached the coast",
    "answered yes when asked about the treasure map",
    "answered no when asked to sell the brass telescope",
    "wrote a letter to the king of a faraway island",
    "found the answer to the question in an old newspaper",
    "moved to Lisbon and opened a small bookshop",
    "played the cello at the opening of the bridge",
    "said yes, the passage names the capital of Peru",
    "said no, the passage does not mention the river",
    "grew tomatoes on the roof of the town hall",
    "read the document twice before giving an answer",
    "asked whether the expected answer was Mount Kilimanjaro",
    "learned that Canberra is the capital of Australia",
    "believed the first emperor was born in the spring",
    "remembered the name of the ship that sank in 1912",
    "trained pigeons to carry notes across the valley",
    "sang a song about the seven bridges of the city",
]
_REPLIES = ["Yes.", "No.", "yes", "no", "Yes, it does.", "No, it does not."]


def training_sentences() -> list[str]:
    """A few hundred sentences of our own, with plenty of "yes" and "no" in them."""
    sentences = [f"{s} {p}." for s, p in itertools.product(_SUBJECTS, _PREDICATES)]
    questions = [
        f"Question: who {p}? Expected answer: {s.lower()}. Reply with a single word: yes or no."
        for s, p in zip(_SUBJECTS * 2, _PREDICATES, strict=False)
    ]
    return sentences + questions + _REPLIES * 20


def build_tiny_model(directory: str | Path, *, vocab_size: int = 1200, seed: int = 0) -> Path:
    """Write a random tiny Llama chat model with its tokenizer into `directory`; return the path."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from benchmarks.gpu_models import fast_tokenizer, train_bpe

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    bpe = train_bpe(training_sentences(), vocab_size, SPECIAL_TOKENS, unk="<unk>")
    tokenizer = fast_tokenizer(bpe, additional_special_tokens=["<|user|>", "<|assistant|>"])
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.model_max_length = 2048
    tokenizer.save_pretrained(out)

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    return out
