"""The report's figures, drawn with matplotlib's Agg backend (no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tipqa.core.jsonl import atomic_open

SEGMENTS = (
    ("answerable_token", "answerable (token)", "#2b8a3e"),
    ("answerable_vector", "answerable (vector)", "#8ce99a"),
    ("answerable_audit", "answerable (audit)", "#d8f5a2"),
    ("unanswerable_vector", "unanswerable (vector)", "#e8590c"),
    ("discarded_token", "discarded (token)", "#adb5bd"),
    ("undetermined_token", "undetermined (token)", "#5c7cfa"),
    ("undetermined_vector", "undetermined (vector)", "#bac8ff"),
)
SPLIT_COLOURS = {"train": "#1c7ed6", "validation": "#f59f00", "test": "#c2255c"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, path: Path) -> None:
    """Save a figure as PNG atomically and close it."""
    with atomic_open(path) as handle:
        figure.savefig(handle, format="png", dpi=120, bbox_inches="tight")
    _pyplot().close(figure)


def draw_funnel(funnel: dict[str, dict[str, dict[str, int]]], path: Path) -> None:
    """Horizontal stacked bars: each pool's and split's questions by outcome and stage."""
    plt = _pyplot()
    bars = [(f"pool {n}", f) for n, f in funnel["pools"].items()]
    bars += [(f"split {n}", f) for n, f in funnel["splits"].items()]
    figure, axes = plt.subplots(figsize=(9, 1.0 + 0.55 * len(bars)))
    names = [name for name, _ in bars][::-1]
    counts = [counts for _, counts in bars][::-1]
    left = [0] * len(bars)
    for key, title, colour in SEGMENTS:
        widths = [c.get(key, 0) for c in counts]
        if any(widths):
            axes.barh(names, widths, left=left, label=title, color=colour)
            left = [a + b for a, b in zip(left, widths, strict=True)]
    axes.set_xlabel("questions")
    axes.set_title("Outcomes per stage")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3, frameon=False)
    _save(figure, path)


def draw_matches(matches: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """Grouped bars: the answerable share per bin of keyword-matching documents, per split."""
    plt = _pyplot()
    bins = list(dict.fromkeys(s["bin"] for shares in matches.values() for s in shares))
    figure, axes = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(1, len(matches))
    for index, (split, shares) in enumerate(matches.items()):
        by_bin = {s["bin"]: s for s in shares}
        xs, heights, counts = [], [], []
        for position, name in enumerate(bins):
            share = by_bin.get(name, {}).get("share")
            if share is not None:
                xs.append(position + (index - (len(matches) - 1) / 2) * width)
                heights.append(100 * share)
                counts.append(by_bin[name]["answerable"] + by_bin[name]["unanswerable"])
        colour = SPLIT_COLOURS.get(split)
        drawn = axes.bar(xs, heights, width=width, label=split, color=colour)
        axes.bar_label(drawn, labels=[f"n={c}" for c in counts], fontsize=7)
    axes.set_xticks(range(len(bins)), bins)
    axes.set_ylim(0, 110)
    axes.set_xlabel("documents containing all keywords and an answer alias")
    axes.set_ylabel("answerable questions (%)")
    axes.set_title("Answerable share by keyword-matching documents")
    axes.legend(frameon=False)
    _save(figure, path)


def draw_boundary(
    series: Mapping[str, Sequence[dict[str, Any]]], path: Path, title: str = ""
) -> None:
    """The answerable share of the decided questions against the training step, per series
    (a pool, or each split); a legend when there are several."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(9, 4))
    colours = [SPLIT_COLOURS.get(name) for name in series]
    for (name, shares), colour in zip(series.items(), colours, strict=True):
        points = [s for s in shares if s.get("answerable_share") is not None]
        steps = [s["step"] for s in points]
        shares_pct = [100 * s["answerable_share"] for s in points]
        axes.plot(steps, shares_pct, marker="o", markersize=3, color=colour, label=name)
        if points:
            last = points[-1]
            decided = last["answerable"] + last["unanswerable"]
            axes.annotate(
                f"{last['answerable']}/{decided}",
                (steps[-1], shares_pct[-1]),
                textcoords="offset points",
                xytext=(-10, 8),
                ha="right",
                fontsize=8,
            )
    axes.set_ylim(0, 105)
    axes.set_xlabel("training step (checkpoint)")
    axes.set_ylabel("answerable questions (%)")
    alone = f" ({next(iter(series))})" if len(series) == 1 else ""
    axes.set_title(title or f"Answerable share as of each checkpoint{alone}")
    if len(series) > 1:
        axes.legend(frameon=False)
    axes.grid(alpha=0.3)
    _save(figure, path)
