"""A synthetic training order built the way GPT-NeoX builds Pythia's, for the demo and tests.

`build_stream` shuffles the documents of all epochs together, appends an EOD token to each,
concatenates them, cuts `seq_length`-token samples every `seq_length - overlap` tokens, and
shuffles the samples (optionally keeping only the first `sequences`), as GPT-NeoX's
`GPT2Dataset` does with its doc-idx, sample-idx and shuffle-idx. Every token keeps its
provenance (document and offset), so the first step of any span can be computed by brute
force. `train_tokenizer` makes a small byte-level BPE `tokenizer.json` (GPT-NeoX style, EOD
token `<|endoftext|>` = 0) from texts, for a world that has no model of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tipqa.errors import MissingExtraError
from tipqa.training_order.base import step_of_batch
from tipqa.training_order.megatron_format import IndexedDatasetWriter

EOD_TOKEN = "<|endoftext|>"


@dataclass
class SyntheticStream:
    """Training sequences (n, seq_length) and each token's document and offset in it.

    A document's EOD token has the document's index and offset = the document's length.
    """

    sequences: np.ndarray
    documents: np.ndarray
    offsets: np.ndarray
    batch_size: int

    def first_steps(self, document: int) -> np.ndarray:
        """The first step of each token of `document` (EOD last; 0 where never seen)."""
        rows, columns = np.nonzero(self.documents == document)
        if not rows.size:
            return np.zeros(0, dtype=np.int64)
        length = int(self.offsets[rows, columns].max()) + 1
        steps = np.full(length, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(
            steps, self.offsets[rows, columns], rows // self.batch_size + step_of_batch(0)
        )
        steps[steps == np.iinfo(np.int64).max] = 0
        return steps

    def span_step(self, document: int, start: int, stop: int) -> tuple[int | None, int]:
        """Brute force: when the seen tokens of [start, stop) had all been seen; how many never.

        The step is None when no token of the span was ever in a sequence.
        """
        steps = self.first_steps(document)[start:stop]
        unseen = (stop - start) - int((steps > 0).sum())
        seen = steps[steps > 0]
        return (int(seen.max()) if seen.size else None), unseen


def build_stream(
    documents: Sequence[np.ndarray],
    *,
    eod: int,
    seq_length: int,
    batch_size: int,
    overlap: int = 1,
    epochs: int = 1,
    sequences: int | None = None,
    seed: int = 0,
    shuffle_samples: bool = True,
) -> SyntheticStream:
    """A GPT-NeoX-style training stream of `documents` (token arrays without EOD)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(np.tile(np.arange(len(documents)), epochs))
    tokens = np.concatenate([np.append(documents[d], eod) for d in order])
    owner = np.concatenate([np.full(len(documents[d]) + 1, d) for d in order])
    offset = np.concatenate([np.arange(len(documents[d]) + 1) for d in order])
    stride = seq_length - overlap
    count = (len(tokens) - overlap) // stride
    where = np.arange(count)[:, None] * stride + np.arange(seq_length)[None, :]
    if shuffle_samples:
        where = where[rng.permutation(count)]
    if sequences is not None:
        where = where[:sequences]
    return SyntheticStream(
        tokens[where], owner[where].astype(np.int32), offset[where].astype(np.int32), batch_size
    )


def write_megatron(sequences: np.ndarray, prefix: str | os.PathLike[str]) -> None:
    """Write sequences as an indexed dataset, one item per sequence (Pythia's layout)."""
    dtype = np.uint16 if int(sequences.max(initial=0)) < 1 << 16 else np.int32
    with IndexedDatasetWriter(prefix, dtype=dtype) as writer:
        writer.add_sequences(sequences)


def train_tokenizer(texts: Iterable[str], path: str | os.PathLike[str], vocab_size: int) -> Path:
    """Train a byte-level BPE tokenizer (EOD `<|endoftext|>` = 0) on `texts`; save it."""
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError as exc:
        raise MissingExtraError("tokenizers", "boundary") from exc
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOD_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out))
    return out
