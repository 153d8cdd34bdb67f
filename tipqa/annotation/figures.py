"""PNG figures of the agreement report: 2x2 confusion matrices (matplotlib, Agg canvas)."""

from __future__ import annotations

import os

from tipqa.core.jsonl import atomic_open


def confusion_png(
    path: str | os.PathLike[str],
    matrix: list[list[int]],
    labels: list[str],
    rows: str,
    columns: str,
    title: str,
) -> None:
    """Draw a confusion matrix with counts in the cells and write it as PNG atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3.6, 3.2), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    top = max((v for row in matrix for v in row), default=0) or 1
    axes.imshow(matrix, cmap="Blues", vmin=0, vmax=top)
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            colour = "white" if value > top / 2 else "black"
            axes.text(j, i, str(value), ha="center", va="center", color=colour, fontsize=12)
    axes.set_xticks(range(len(labels)), labels)
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlabel(columns)
    axes.set_ylabel(rows)
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    with atomic_open(path) as handle:
        figure.savefig(handle, format="png")
