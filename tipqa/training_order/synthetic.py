"""A synthetic training order built the way GPT-NeoX builds Pythia's, for the demo and tests.

`build_stream` shuffles the documents of all epochs together, appends an EOD token to each,
concatenates them, cuts `seq_length`-token samples every `seq_length - overlap` tokens, and
shuffles the samples (optionally keeping only the first `sequences`), as GPT-NeoX's
`GPT2Dataset` does with its doc-idx, sample-idx and shuffle-idx. Every token keeps its
provenance (document and offset), so the first step of any span can be computed by brute
force. `train_tokenizer` makes a small byte-level BPE `tokenizer.json` (GPT-NeoX style, EOD
token `<|endoftext|>` = 0) from texts, for a world that has no model of its own.

`write_training_order` does both for a corpus, to try the boundary on the demo world:

    python -m tipqa.training_order.synthetic outputs/demo/world/corpus outputs/demo-order

prints the `[training_order]` and `[boundary]` sections that use it (`path`, `tokenizer`,
`seq_length`, `batch_size`, checkpoints up to its last step).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tipqa.core.errors import MissingExtraError
from tipqa.core.records import Document
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


@dataclass
class SyntheticOrder:
    """A corpus's synthetic training order: the stream's prefix, the tokenizer, the stream."""

    prefix: Path
    tokenizer: Path
    stream: SyntheticStream
    doc_ids: list[str]

    @property
    def steps(self) -> int:
        """The last training step (the stream's batches)."""
        return -(-len(self.stream.sequences) // self.stream.batch_size)


def write_training_order(
    documents: Iterable[Document],
    folder: str | os.PathLike[str],
    *,
    seq_length: int = 257,
    batch_size: int = 16,
    epochs: int = 2,
    vocab_size: int = 2000,
    seed: int = 0,
) -> SyntheticOrder:
    """Train a tokenizer on `documents`, build their stream, write both under `folder`.

    Writes `tokenizer.json` and `document.idx` + `document.bin` (one item per sequence, as
    Pythia's); with two epochs every document is read whole at least once.
    """
    from tipqa.training_order.wanted import load_tokenizer

    docs = list(documents)
    out = Path(folder)
    tokenizer = train_tokenizer((d.text for d in docs), out / "tokenizer.json", vocab_size)
    encoded = load_tokenizer(tokenizer).encode_batch(
        [d.text for d in docs], add_special_tokens=False
    )
    tokens = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
    stream = build_stream(
        tokens, eod=0, seq_length=seq_length, batch_size=batch_size, epochs=epochs, seed=seed
    )
    write_megatron(stream.sequences, out / "document")
    return SyntheticOrder(out / "document", tokenizer, stream, [d.id for d in docs])


def main(argv: Sequence[str] | None = None) -> None:
    """Write a synthetic training order of a corpus's files (the demo world's, say)."""
    from tipqa.sources.corpus.files import FileCorpus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("corpus", help="corpus files or folder (JSONL / Parquet)")
    parser.add_argument("out", help="folder for tokenizer.json and document.idx/.bin")
    parser.add_argument("--seq-length", type=int, default=257)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    order = write_training_order(
        FileCorpus.of(args.corpus),
        args.out,
        seq_length=args.seq_length,
        batch_size=args.batch_size,
        epochs=args.epochs,
        seed=args.seed,
    )
    every = max(1, order.steps // 8)
    print(
        f"# {len(order.doc_ids)} documents, {len(order.stream.sequences)} sequences, "
        f"{order.steps} steps\n[training_order]\nbackend = megatron\npath = {order.prefix}\n"
        f"tokenizer = {order.tokenizer}\nseq_length = {args.seq_length}\n"
        f"batch_size = {args.batch_size}\n\n[boundary]\njudge_all_candidates = true\n"
        f"checkpoints = 0, {every}, ..., {order.steps}"
    )


if __name__ == "__main__":
    main()
