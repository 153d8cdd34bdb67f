"""A tiny random causal model that answers some prompts with nothing (a refusal) and others not.

It is `vllm_model.build_tiny_model`'s random Llama, with one change made at test time: the
output row of the new-line token is solved for (least squares on the prompts' last hidden
states) so that the new line is the first token generated exactly for the chosen prompts, by a
margin. Those answers are empty, so refusals; the others are random text, so wrong answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from support.vllm_model import build_tiny_model

MARGIN = 4.0


def refusing_model(directory: Path, prompts: Sequence[str], refuse: set[int]) -> Path:
    """Write the model into `directory`: greedy decoding of prompt i starts with a new line
    exactly when i is in `refuse`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    build_tiny_model(directory)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory)
    newline = tokenizer("\n", add_special_tokens=False)["input_ids"]
    assert len(newline) == 1, newline
    states, others = [], []
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([tokenizer(prompt)["input_ids"]])
            out = model(ids, output_hidden_states=True)
            logits = out.logits[0, -1].clone()
            logits[newline[0]] = -torch.inf
            others.append(logits.max())
            states.append(out.hidden_states[-1][0, -1])
        hidden = torch.stack(states).double()
        sign = torch.tensor([1.0 if i in refuse else -1.0 for i in range(len(prompts))])
        target = torch.stack(others).double() + MARGIN * sign.double()
        row = torch.linalg.pinv(hidden) @ target
        model.lm_head.weight[newline[0]] = row.float()
    model.save_pretrained(directory)
    return Path(directory)
