"""Training curves as a PNG: loss and accuracy per epoch, side by side.

matplotlib (imported on first use, never by ``import ember``) draws on its Agg canvas directly,
so the global ``pyplot`` backend and figures of the user's own session are never touched.

>>> import os, tempfile
>>> from ember.utils.plot import plot_history
>>> history = {"train_loss": [0.9, 0.4, 0.3], "test_loss": [0.8, 0.5, 0.4],
...            "train_acc": [0.70, 0.88, 0.92], "test_acc": [0.72, 0.86, 0.90]}
>>> path = plot_history(history, os.path.join(tempfile.mkdtemp(), "curves.png"))
>>> path.name, path.read_bytes()[:8]
('curves.png', b'\\x89PNG\\r\\n\\x1a\\n')
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._errors import DTypeError, EmberError, ShapeError

__all__ = ["plot_history"]

_PANELS = (("loss", "loss"), ("acc", "accuracy"))


def _series(key: str, values) -> np.ndarray:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise DTypeError(
            f"plot_history: history[{key!r}] must be a sequence of numbers (one per epoch), "
            f"got {type(values).__name__}"
        )
    try:
        arr = np.array([float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DTypeError(
            f"plot_history: history[{key!r}] must hold numbers (one per epoch): {exc}"
        ) from None
    return arr


def plot_history(
    history: Mapping[str, Sequence[float]],
    path: str | os.PathLike,
    title: str | None = None,
) -> Path:
    """Write a PNG of the training curves in ``history`` to ``path`` and return its path.

    ``history`` maps a series name to one value per epoch. The left panel plots every key
    containing ``"loss"`` (``train_loss``, ``test_loss``...), the right one every key
    containing ``"acc"``; other keys (``lr``...) are ignored. Epochs count from 1. NaN or
    infinite values leave gaps; a missing panel says so. The file is replaced atomically and
    its folder is created if needed.

    >>> import os, tempfile
    >>> from ember.utils.plot import plot_history
    >>> folder = tempfile.mkdtemp()
    >>> plot_history({"train_loss": [0.5]}, os.path.join(folder, "p.png"), title="one epoch").name
    'p.png'
    >>> os.listdir(folder)
    ['p.png']
    """
    if not isinstance(history, Mapping):
        raise DTypeError(
            f"plot_history: history must be a mapping of name -> values per epoch, "
            f"got {type(history).__name__}"
        )
    if not history:
        raise EmberError(
            "plot_history: history is empty; expected e.g. "
            "{'train_loss': [...], 'test_acc': [...]} with one value per epoch"
        )
    panels: dict[str, dict[str, np.ndarray]] = {part: {} for part, _ in _PANELS}
    for key in history:
        if not isinstance(key, str):
            raise DTypeError(f"plot_history: history keys must be strings, got {key!r}")
        for part, _ in _PANELS:
            if part in key.lower():
                panels[part][key] = _series(key, history[key])
                break
    plotted = {k: v for series in panels.values() for k, v in series.items()}
    if not plotted:
        raise EmberError(
            f"plot_history: no key of history contains 'loss' or 'acc' (keys: "
            f"{', '.join(map(repr, history))}); nothing to plot"
        )
    lengths = {k: len(v) for k, v in plotted.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{k}: {n}" for k, n in lengths.items())
        raise ShapeError(
            f"plot_history: series have different lengths ({listed}); each needs one value "
            "per epoch"
        )
    epochs = next(iter(lengths.values()))
    if epochs == 0:
        raise ShapeError(f"plot_history: the series {', '.join(map(repr, plotted))} are empty")
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise EmberError(f"plot_history: path must end in .png, got {str(path)!r}")

    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        from .tensorboard._tbx import MissingDependencyError

        raise MissingDependencyError(
            "plot_history: drawing needs matplotlib: pip install matplotlib"
        ) from exc

    fig = Figure(figsize=(10, 4), dpi=100)
    # fixed margins: a layout engine would draw the figure twice (half the time of a plot)
    fig.subplots_adjust(
        left=0.07, right=0.985, bottom=0.12, top=0.85 if title else 0.91, wspace=0.22
    )
    FigureCanvasAgg(fig)
    x = np.arange(1, epochs + 1)
    marker = "o" if epochs <= 30 else None
    pad = 0.5 if epochs <= 12 else 0.03 * epochs
    for ax, (part, label) in zip(fig.subplots(1, 2), _PANELS, strict=True):
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        ax.set_title(label)
        ax.grid(True, alpha=0.3)
        ax.set_xlim(1 - pad, epochs + pad)
        if epochs <= 12:
            ax.set_xticks(x)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        series = panels[part]
        for key, values in series.items():
            y = np.where(np.isfinite(values), values, np.nan)
            ax.plot(x, y, marker=marker, markersize=4, label=key)
        if series:
            ax.legend()
        note = f"no {label} recorded" if not series else None
        if series and not any(np.isfinite(v).any() for v in series.values()):
            note = f"no finite {label} values"
        if note:
            ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes, color="gray")
    if title:
        fig.suptitle(title)

    from ..serialization.atomic import atomic_write

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as f:
            fig.savefig(f, format="png")
    except OSError as exc:
        raise EmberError(f"plot_history: cannot write {str(path)!r}: {exc}") from None
    return path
