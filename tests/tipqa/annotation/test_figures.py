"""Confusion-matrix figures: real PNG files with the counts drawn."""

from __future__ import annotations

from matplotlib.image import imread

from tipqa.annotation.figures import confusion_png


def test_confusion_png_is_a_readable_image(tmp_path) -> None:
    path = tmp_path / "figures" / "confusion.png"
    confusion_png(path, [[5, 1], [0, 7]], ["yes", "no"], "judge", "person", "Judge vs people")
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200
    assert image.std() > 0.05
    assert not list(path.parent.glob(".*.tmp"))


def test_an_empty_matrix_still_draws(tmp_path) -> None:
    path = tmp_path / "empty.png"
    confusion_png(path, [[0, 0], [0, 0]], ["yes", "no"], "a", "b", "nothing yet")
    assert path.read_bytes()[:4] == b"\x89PNG"
