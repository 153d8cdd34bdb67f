"""The scorer's figures (matplotlib's Agg canvas, no display): reliability diagrams, breakdowns."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from tipqa.core.jsonl import atomic_open
from tipqa.evaluate.calibration import Bin

MIN_WIDTH = 0.015
SCHEME_TITLES = {"width": "equal-width bins", "mass": "equal-mass bins"}


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: str | os.PathLike[str]) -> None:
    """Write the figure as PNG atomically."""
    with atomic_open(path) as handle:
        figure.savefig(handle, format="png", bbox_inches="tight")


def reliability_png(
    path: str | os.PathLike[str], diagrams: dict[str, Sequence[Bin]], min_count: int, title: str
) -> None:
    """One column per binning scheme: accuracy against confidence above, bin counts below.

    Bins with fewer than `min_count` predictions are hatched and pale, and named so in the
    legend: their accuracy says little.
    """
    figure = _figure(5.2 * len(diagrams), 5.6)
    grid = figure.add_gridspec(2, len(diagrams), height_ratios=[3, 1], hspace=0.08)
    for column, (scheme, bins) in enumerate(diagrams.items()):
        top = figure.add_subplot(grid[0, column])
        bottom = figure.add_subplot(grid[1, column], sharex=top)
        top.plot([0, 1], [0, 1], linestyle="--", color="#868e96", label="perfect calibration")
        filled = [b for b in bins if b.count]
        for few in (False, True):
            chosen = [b for b in filled if (b.count < min_count) == few]
            if not chosen:
                continue
            lefts = [b.low for b in chosen]
            widths = [max(b.high - b.low, MIN_WIDTH) for b in chosen]
            top.bar(
                lefts,
                [b.accuracy for b in chosen],
                width=widths,
                align="edge",
                color="#a5d8ff" if few else "#1c7ed6",
                edgecolor="#1864ab",
                hatch="//" if few else None,
                label=f"accuracy (bins of < {min_count})" if few else "accuracy",
            )
        top.scatter(
            [b.confidence for b in filled],
            [b.confidence for b in filled],
            marker="_",
            color="#e8590c",
            s=120,
            label="mean confidence",
        )
        top.set_xlim(0, 1)
        top.set_ylim(0, 1.05)
        top.set_ylabel("accuracy")
        top.set_title(f"{title} ({SCHEME_TITLES.get(scheme, scheme)})", fontsize=9)
        top.legend(loc="upper left", fontsize=7, frameon=False)
        top.tick_params(labelbottom=False)
        for b in filled:
            centre = b.low + max(b.high - b.low, MIN_WIDTH) / 2
            bottom.bar(
                b.low,
                b.count,
                width=max(b.high - b.low, MIN_WIDTH),
                align="edge",
                color="#adb5bd" if b.count < min_count else "#495057",
            )
            bottom.text(centre, b.count, str(b.count), ha="center", va="bottom", fontsize=7)
        bottom.set_xlabel("confidence")
        bottom.set_ylabel("predictions")
        bottom.set_ylim(0, max((b.count for b in filled), default=1) * 1.3)
    _save(figure, path)


def breakdown_png(
    path: str | os.PathLike[str], rows: Sequence[dict[str, Any]], xlabel: str, title: str
) -> None:
    """Grouped bars per group: EM-F1, PM-F1, accuracy and refusal rate, with group sizes."""
    series = (
        ("em_f1", "EM-F1", "#1c7ed6"),
        ("pm_f1", "PM-F1", "#74c0fc"),
        ("accuracy_answerable", "accuracy (answerable)", "#2b8a3e"),
        ("refusal_rate_unanswerable", "refusal rate (unanswerable)", "#e8590c"),
    )
    figure = _figure(max(6.0, 1.3 * len(rows) + 2), 4.2)
    axes = figure.add_subplot()
    width = 0.8 / len(series)
    for index, (key, name, colour) in enumerate(series):
        xs = [position + (index - (len(series) - 1) / 2) * width for position in range(len(rows))]
        axes.bar(xs, [100 * row[key] for row in rows], width=width, label=name, color=colour)
    labels = [f"{row['group']}\nn={row['questions']}" for row in rows]
    axes.set_xticks(range(len(rows)), labels, fontsize=8)
    axes.set_ylim(0, 110)
    axes.set_ylabel("%")
    axes.set_xlabel(xlabel)
    axes.set_title(title, fontsize=10)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=4, fontsize=7, frameon=False)
    _save(figure, path)
