"""Short tails on hand-cut streams: other documents ending alike leave a located span exact."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tipqa.training_order.anchors import build_anchor_index
from tipqa.training_order.base import SpanStep
from tipqa.training_order.joins import Joins, count_joins
from tipqa.training_order.locate import Covering, SpanFinder, span_steps, uncovered
from tipqa.training_order.megatron_format import IndexedDatasetWriter
from tipqa.training_order.streams import MegatronStream
from tipqa.training_order.wanted import WantedDocument

EOD, SEQ, WIDTH = 0, 12, 4


def cut(documents: list[list[int]], overlap: int) -> np.ndarray:
    """The documents concatenated with an EOD each, cut into SEQ-token samples, in order."""
    tokens = [t for doc in documents for t in [*doc, EOD]]
    stride = SEQ - overlap
    count = (len(tokens) - overlap) // stride
    return np.array([tokens[i * stride : i * stride + SEQ] for i in range(count)])


def wanted(doc_id: str, tokens: list[int]) -> WantedDocument:
    """A document wanted whole (its body, without the EOD)."""
    ids = np.array([*tokens, EOD], dtype=np.int64)
    return WantedDocument(doc_id, len(ids), [(0, ids)], [(doc_id, 0, len(tokens))], {doc_id})


def steps_of(tmp_path: Path, samples: np.ndarray, docs: list[WantedDocument],
             overlap: int) -> tuple[dict[str, SpanStep], SpanFinder]:  # fmt: skip
    """Every wanted span's step in the stream of `samples` (one sequence per batch)."""
    with IndexedDatasetWriter(tmp_path / "document") as writer:
        writer.add_sequences(samples.astype(np.uint16))
    stream = MegatronStream(tmp_path / "document", SEQ, 1)
    build_anchor_index(stream, tmp_path / "index", width=WIDTH, eod=EOD, sequences_per_unit=4,
                       progress=False)  # fmt: skip
    finder = SpanFinder(stream, tmp_path / "index", width=WIDTH, eod=EOD, overlap=overlap,
                        sequences_per_unit=4)  # fmt: skip
    finder.find(docs)
    return {s.span_id: s for s in span_steps(docs, finder)}, finder


A = [5, 6, 7, 8, 9]
B = [31, 32, 33, 34, 35, 36, 37, 9]
FILL = [[20, 21, 22, 23], [40, 41, 42], list(range(60, 80))]


def test_another_documents_tail_alike_leaves_a_located_span_exact(tmp_path: Path) -> None:
    """B's last token and EOD head sample 2; A ends alike but lies whole in sample 0."""
    samples = cut([A, FILL[0], FILL[1], B, FILL[2]], overlap=1)
    assert samples[0][:6].tolist() == [*A, EOD] and samples[2][:2].tolist() == [9, EOD]
    found, finder = steps_of(tmp_path, samples, [wanted("a", A), wanted("b", B)], overlap=1)
    assert finder.stats.counts["tails_uncorroborated"] == 1  # A's key hit B's tail
    assert found["a"] == SpanStep("a", "a", 1, "document", tokens=5, sequences=1)
    assert found["b"] == SpanStep("b", "b", 2, "document", tokens=8, sequences=2)


def test_a_tail_left_out_leaves_its_unlocated_tokens_not_exact(tmp_path: Path) -> None:
    """Without sample 1 (B's body), B's tail heading sample 2 is not corroborated: B is
    unlocated and not exact; A, whole in sample 0, stays exact."""
    samples = cut([A, FILL[0], FILL[1], B, FILL[2]], overlap=1)
    found, _ = steps_of(tmp_path, samples[[0, 2, 3]], [wanted("a", A), wanted("b", B)], 1)
    assert found["a"].exact and found["a"].step == 1
    assert found["b"].step is None and found["b"].unlocated == 8 and not found["b"].exact


def test_a_placed_tail_shares_its_first_token_with_the_piece_before(tmp_path: Path) -> None:
    """A's last token ends sample 0 and, with its EOD, heads sample 1 (overlap 1); C ends in
    the same token, its tail heading sample 3. Only A's EOD is ambiguous: A stays exact. Cut
    without overlap, A's last token is only in the tail: then A is an upper bound."""
    a = list(range(5, 17))
    for overlap, body, expected in ((1, a, (1, True)), (0, [*a, 17], (4, False))):
        ending = body[-1]
        c = [31, 32, 33, ending]
        fill = [list(range(20, 28)), list(range(40, 49 - 2 * overlap)), list(range(60, 80))]
        samples = cut([body, fill[0], fill[1], c, fill[2]], overlap)
        heads = [s[:2].tolist() for s in samples]
        assert heads[1] == heads[3] == [ending, EOD], (overlap, heads)
        folder = tmp_path / f"overlap{overlap}"
        folder.mkdir()
        found, finder = steps_of(folder, samples, [wanted("a", body)], overlap)
        assert finder.stats.counts["tails_placed"] == 1
        assert finder.stats.counts["fragments_ambiguous"] == 1
        assert (found["a"].step, found["a"].exact) == expected, overlap
        assert found["a"].unlocated == 0


def test_uncovered_runs() -> None:
    pieces = [Covering(2, 4, 0, 0, 0), Covering(6, 7, 0, 1, 0), Covering(3, 5, 0, 2, 0)]
    assert uncovered(0, 10, pieces) == [(0, 2), (5, 6), (7, 10)]
    assert uncovered(2, 5, pieces) == [] and uncovered(8, 9, []) == [(8, 9)]


def test_joins_tell_the_overlap() -> None:
    doc = wanted("d", list(range(1, 40)))
    shared = [Covering(0, 12, 0, 0, 0), Covering(11, 23, 1, 1, 0)]
    apart = [Covering(0, 12, 0, 0, 0), Covering(12, 24, 1, 1, 0)]
    assert count_joins([doc], {0: shared}, SEQ) == Joins(sharing_one=1)
    assert count_joins([doc], {0: apart}, SEQ) == Joins(sharing_none=1)
    assert count_joins([doc], {0: [Covering(0, 12, 0, 0, 3)]}, SEQ) == Joins()
    assert Joins(1, 3).suggested_overlap(1) == 0 and Joins(1, 3).suggested_overlap(0) is None
    assert Joins(2, 3).suggested_overlap(1) is None  # not clearly contradicted
    assert Joins(9, 0).suggested_overlap(0) == 1 and Joins(0, 2).suggested_overlap(1) is None
    message = Joins(0, 5).warning(1, 42)
    assert message is not None and "set overlap = 0" in message and "42 tokens" in message
    assert Joins(5, 0).warning(1, 42) is None
