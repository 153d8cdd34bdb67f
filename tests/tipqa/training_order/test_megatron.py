"""The `megatron` training order: spans found in a GPT-NeoX-style stream equal brute force."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tipqa.core.errors import ConfigError
from tipqa.core.records import Document
from tipqa.core.settings import parse
from tipqa.training_order.base import TRAINING_ORDERS, SpanStep, WantedSpan
from tipqa.training_order.megatron import MegatronOrder, MegatronOrderSettings
from tipqa.training_order.streams import write_parquet_stream
from tipqa.training_order.synthetic import (
    SyntheticStream,
    build_stream,
    train_tokenizer,
    write_megatron,
)
from tipqa.training_order.wanted import load_tokenizer

SYLLABLES = ["ka", "lo", "mi", "ren", "tus", "vo", "shi", "an", "del", "qu", "or", "ix"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))


def paragraph(rng: random.Random, low: int, high: int) -> str:
    return " ".join(word(rng) for _ in range(rng.randint(low, high)))


def make_text(rng: random.Random, paragraphs: int, words: tuple[int, int]) -> str:
    """Paragraphs with untidy whitespace (windows re-join them with blank lines)."""
    parts = [paragraph(rng, *words) for _ in range(paragraphs)]
    return "".join(p + rng.choice(["\n\n", "  \n\n", "\n \n\n "]) for p in parts).rstrip()


@dataclass
class World:
    """A corpus, its tokenizer, the training stream written as `.idx` + `.bin`."""

    root: Path
    texts: list[str]
    stream: SyntheticStream
    tokenizer: Path
    seq_length: int
    batch_size: int

    def documents(self) -> dict[str, Document]:
        return {f"d{i}": Document(f"d{i}", text) for i, text in enumerate(self.texts)}

    def settings(self, **options: object) -> MegatronOrderSettings:
        values = {
            "path": str(self.root / "document"),
            "tokenizer": str(self.tokenizer),
            "seq_length": self.seq_length,
            "batch_size": self.batch_size,
            "index_dir": str(self.root / "index"),
            "progress": False,
            **options,
        }
        return MegatronOrderSettings(**values)  # type: ignore[arg-type]


def make_world(root: Path, *, docs: int, seq_length: int, batch_size: int, seed: int,
               overlap: int = 1) -> World:  # fmt: skip
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < docs:
        kind = len(texts) % 5
        if kind == 0:
            text = paragraph(rng, 2, 4)
        elif kind == 4:
            text = make_text(rng, rng.randint(8, 30), (10, 60))
        else:
            text = make_text(rng, rng.randint(1, 6), (3, 40))
        if text not in texts:  # a deduplicated corpus: identical texts cannot be told apart
            texts.append(text)
    tokenizer = train_tokenizer(texts[:300], root / "tokenizer.json", 400)
    encoded = load_tokenizer(tokenizer).encode_batch(texts, add_special_tokens=False)
    tokens = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
    full = build_stream(tokens, eod=0, seq_length=seq_length, batch_size=batch_size,
                        overlap=overlap, epochs=2, seed=seed)  # fmt: skip
    keep = len(full.sequences) * 3 // 4
    stream = SyntheticStream(
        full.sequences[:keep], full.documents[:keep], full.offsets[:keep], batch_size
    )
    write_megatron(stream.sequences, root / "document")
    return World(root, texts, stream, tokenizer, seq_length, batch_size)


def window_spans(world: World, rng: random.Random, count: int) -> list[WantedSpan]:
    """Windows of paragraphs (many from the first), and some whole documents."""
    spans = []
    for i in rng.sample(range(len(world.texts)), count):
        paragraphs = [p.strip() for p in world.texts[i].split("\n\n") if p.strip()]
        if i % 7 == 0:
            spans.append(WantedSpan(f"whole-{i}", f"d{i}", None))
            continue
        first = 0 if rng.random() < 0.4 else rng.randrange(len(paragraphs))
        last = rng.randrange(first, min(len(paragraphs), first + 3))
        spans.append(WantedSpan(f"w-{i}", f"d{i}", "\n\n".join(paragraphs[first : last + 1])))
    return spans


def token_range(world: World, span: WantedSpan) -> tuple[int, int, int]:
    """The span's tokens [start, stop) in its document, and the document's length."""
    text = world.texts[int(span.doc_id[1:])]
    encoding = load_tokenizer(world.tokenizer).encode(text, add_special_tokens=False)
    if span.text is None:
        return 0, len(encoding.ids), len(encoding.ids)
    compact = "".join(span.text.split())
    positions = [i for i, c in enumerate(text) if not c.isspace()]
    at = "".join(text[i] for i in positions).index(compact)
    low, high = positions[at], positions[at + len(compact) - 1] + 1
    offsets = np.asarray(encoding.offsets)
    start = int(np.searchsorted(offsets[:, 1], low, side="right"))
    stop = int(np.searchsorted(offsets[:, 0], high, side="left"))
    return start, stop, len(encoding.ids)


def expected(world: World, span: WantedSpan) -> tuple[int | None, int]:
    """Brute force over every token of the stream, with the generator's provenance."""
    start, stop, _ = token_range(world, span)
    return world.stream.span_step(int(span.doc_id[1:]), start, stop)


def check_against_brute_force(
    world: World, spans: list[WantedSpan], order: MegatronOrder
) -> dict[str, SpanStep]:
    """Every span's step equals brute force, except where short fragments are at stake.

    A document's first or last few tokens (fewer than a key) alone at a sequence's end or
    head are placed only next to a found piece of the same occurrence: without one they are
    unlocated, or covered by a later occurrence; among several equally possible sequences
    the latest is taken. So a span over them may show more unlocated tokens (and an earlier
    step for the rest), or a later step; never an earlier one with the same tokens.
    """
    documents = world.documents()
    found = order.first_steps(spans, lambda ids: {i: documents[i] for i in ids if i in documents})
    width = order.settings.match_tokens
    deviations = 0
    for span in spans:
        result = found[span.span_id]
        step, unlocated = expected(world, span)
        if (result.step, result.unlocated) == (step, unlocated):
            continue
        deviations += 1
        start, stop, length = token_range(world, span)
        context = (span, result, (step, unlocated))
        assert start < width or stop > length - width, context
        if result.unlocated == unlocated:
            assert result.step is not None and step is not None and result.step > step, context
        else:
            assert 0 < result.unlocated - unlocated <= 2 * width, context
            assert result.step is None or step is None or result.step <= step, context
    assert deviations <= max(2, len(spans) // 20), deviations
    return found


def test_steps_equal_brute_force_on_a_small_stream(tmp_path: Path) -> None:
    world = make_world(tmp_path, docs=250, seq_length=65, batch_size=4, seed=7)
    order = MegatronOrder(world.settings())
    spans = window_spans(world, random.Random(1), 120)
    found = check_against_brute_force(world, spans, order)
    counts = order.stats.counts
    assert counts["openings_placed"] > 0 and order.stats.info["index"]["anchors_truncated"] > 0
    assert any(r.sequences >= 3 for r in found.values())
    assert any(r.step is None for r in found.values())
    assert any(r.unlocated and r.step is not None for r in found.values())
    assert {r.matched for r in found.values()} == {"window", "document"}
    assert counts["joins_sharing_one"] > 4 * counts["joins_sharing_none"]
    assert "warnings" not in order.stats.info


@pytest.mark.slow
def test_steps_equal_brute_force_on_millions_of_tokens(tmp_path: Path) -> None:
    world = make_world(tmp_path, docs=7000, seq_length=257, batch_size=16, seed=11)
    assert world.stream.sequences.size > 2_000_000
    order = MegatronOrder(world.settings(workers=2, range_mb=1))
    spans = window_spans(world, random.Random(2), 600)
    check_against_brute_force(world, spans, order)
    assert order.stats.info["index"]["units"] > 2


def test_overlap_zero_streams_and_the_default_overlap_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    world = make_world(tmp_path, docs=150, seq_length=48, batch_size=3, seed=3, overlap=0)
    spans = window_spans(world, random.Random(4), 80)
    order = MegatronOrder(world.settings(overlap=0))
    check_against_brute_force(world, spans, order)
    right = order.stats.counts
    assert "warnings" not in order.stats.info
    assert right["joins_sharing_none"] > 4 * right["joins_sharing_one"]
    wrong = MegatronOrder(world.settings())  # overlap = 1, Pythia's
    documents = world.documents()
    wrong.first_steps(spans, lambda ids: {i: documents[i] for i in ids})
    assert wrong.stats.counts["tokens_unlocated"] > right["tokens_unlocated"]
    [warning] = wrong.stats.info["warnings"]
    assert "overlap = 1, but" in warning and "set overlap = 0" in warning
    assert f"({wrong.stats.counts['tokens_unlocated']} tokens of the wanted spans" in warning
    assert warning in caplog.text


def test_absent_documents_have_no_step_and_changed_text_is_unlocated(tmp_path: Path) -> None:
    world = make_world(tmp_path, docs=80, seq_length=65, batch_size=4, seed=5)
    order = MegatronOrder(world.settings())
    documents = world.documents()
    documents["new"] = Document("new", "vokaren ixor shidel " * 30)
    changed = world.texts[4]
    documents["changed"] = Document("changed", "quor ixtus " + changed)
    spans = [
        WantedSpan("a", "new", "vokaren ixor shidel"),
        WantedSpan("b", "changed", None),
        WantedSpan("c", "nowhere", None),
        WantedSpan("d", "d4", "text that is not in it"),
    ]
    found = order.first_steps(spans, lambda ids: {i: documents[i] for i in ids if i in documents})
    assert found["a"].step is None and found["a"].unlocated == found["a"].tokens > 0
    original, _ = expected(world, WantedSpan("x", "d4"))
    assert found["b"].matched == "document" and 0 < found["b"].unlocated < found["b"].tokens
    assert found["b"].step is not None and original is not None and found["b"].step <= original
    assert found["c"].matched == "missing_document" and found["c"].step is None
    assert found["d"].matched == "document"
    assert (found["d"].step, found["d"].unlocated) == expected(world, WantedSpan("x", "d4"))
    assert order.stats.errors["missing_document"] == 1


def test_contiguous_sequences_spanning_sequences_and_steps(tmp_path: Path) -> None:
    """Unshuffled samples: a document across two sequences of one step, one across two steps."""
    rng = random.Random(8)
    texts = [paragraph(rng, 8, 30) for _ in range(12)]
    tokenizer = train_tokenizer(texts, tmp_path / "tok.json", 300)
    encoded = load_tokenizer(tokenizer).encode_batch(texts, add_special_tokens=False)
    tokens = [np.asarray(e.ids) for e in encoded]
    stream = build_stream(tokens, eod=0, seq_length=33, batch_size=2, seed=0,
                          shuffle_samples=False)  # fmt: skip
    write_megatron(stream.sequences, tmp_path / "document")
    settings = MegatronOrderSettings(path=str(tmp_path / "document"), tokenizer=str(tokenizer),
                                     seq_length=33, batch_size=2, match_tokens=6,
                                     index_dir=str(tmp_path / "index"), progress=False)  # fmt: skip
    documents = {f"d{i}": Document(f"d{i}", t) for i, t in enumerate(texts)}
    spans = [WantedSpan(f"d{i}", f"d{i}") for i in range(len(texts))]
    found = MegatronOrder(settings).first_steps(spans, lambda ids: {i: documents[i] for i in ids})
    spread = []
    for i in range(len(texts)):
        rows = np.unique(np.nonzero(stream.documents == i)[0])
        spread.append((len(rows), len(set(rows // 2))))
        whole = stream.span_step(i, 0, len(tokens[i]))
        assert (found[f"d{i}"].step, found[f"d{i}"].unlocated) == whole, (i, found[f"d{i}"])
        if rows.size:
            assert whole[0] == int(rows.max()) // 2 + 1
    assert any(sequences == 2 and steps == 1 for sequences, steps in spread)
    assert any(steps == 2 for _, steps in spread)


def test_parquet_layout_gives_the_same_steps(tmp_path: Path) -> None:
    world = make_world(tmp_path, docs=120, seq_length=65, batch_size=4, seed=9)
    sequences = world.stream.sequences
    batches = np.arange(len(sequences)) // world.batch_size
    (tmp_path / "parquet").mkdir()
    half = len(sequences) // 2
    write_parquet_stream(tmp_path / "parquet" / "a.parquet", sequences[:half], batches[:half],
                         rows_per_group=50)  # fmt: skip
    write_parquet_stream(tmp_path / "parquet" / "b.parquet", sequences[half:], batches[half:],
                         rows_per_group=50)  # fmt: skip
    spans = window_spans(world, random.Random(3), 60)
    documents = world.documents()
    fetch = lambda ids: {i: documents[i] for i in ids}  # noqa: E731
    bin_steps = MegatronOrder(world.settings()).first_steps(spans, fetch)
    parquet = world.settings(layout="parquet", path=str(tmp_path / "parquet"),
                             index_dir=str(tmp_path / "pindex"))  # fmt: skip
    assert MegatronOrder(parquet).first_steps(spans, fetch) == bin_steps


def test_settings_parse_and_registry(tmp_path: Path) -> None:
    settings = parse(
        MegatronOrderSettings,
        "training_order",
        {"path": "/data/document", "seq_length": "2049", "workers": "16", "tokenizer": "t.json"},
    )
    assert settings.batch_size == 1024 and settings.workers == 16
    assert "workers" not in settings.identity() and "match_tokens" in settings.identity()
    with pytest.raises(ConfigError, match=r"\[training_order\] overlap must be 0 or 1"):
        parse(MegatronOrderSettings, "training_order", {"overlap": "2"})
    with pytest.raises(ConfigError, match="index_dir"):
        MegatronOrder(MegatronOrderSettings(path="x", tokenizer="y"))
    assert TRAINING_ORDERS.resolve("megatron") is MegatronOrder
