"""The boundary figure: the answerable share against the training step, as a PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image

from tipqa.dataset.figures import draw_boundary


def test_boundary_figure_is_a_png(tmp_path: Path) -> None:
    shares = [
        {"step": step, "answerable": a, "unanswerable": 10 - a, "answerable_share": a / 10}
        for step, a in ((0, 0), (1000, 2), (72_000, 6), (143_000, 7))
    ]
    shares.append({"step": 150_000, "answerable": 0, "unanswerable": 0, "answerable_share": None})
    path = tmp_path / "report" / "boundary.png"
    later = [
        {**s, "answerable_share": s["answerable_share"] and s["answerable_share"] / 2}
        for s in shares
    ]
    draw_boundary({"test": shares, "train": later}, path, title="TIP-PopQA for Pythia")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width, _ = matplotlib.image.imread(path).shape
    assert width > 600 and height > 300
    draw_boundary({"test": []}, tmp_path / "empty.png")
    assert (tmp_path / "empty.png").stat().st_size > 0
