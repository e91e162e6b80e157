"""ember.utils.plot.plot_history: a valid PNG written atomically, and clear errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ember
from ember._errors import DTypeError, EmberError, ShapeError
from ember.utils.plot import plot_history

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("matplotlib")


def open_png(path):
    with PIL.open(path) as im:
        assert im.format == "PNG"
        im.load()
        return im.size, np.asarray(im.convert("RGB"))


@pytest.mark.parametrize(
    "history",
    [
        {
            "train_loss": np.array([0.9, 0.5, 0.3]),
            "test_loss": (ember.tensor(1.0), ember.tensor(0.6), 0.4),
            "train_acc": [0.6, 0.8, 0.9],
            "test_acc": [0.55, 0.75, 0.85],
            "lr": [0.1],  # neither loss nor accuracy: ignored (and its length too)
        },
        {"train_loss": [0.4]},  # one epoch, no accuracy
        {"loss": [1.0, float("nan"), np.inf, 0.2], "val_accuracy": [np.nan] * 4},
    ],
    ids=["full", "one-point", "nan-inf"],
)
def test_writes_png(tmp_path, history):
    import matplotlib

    backend = matplotlib.rcParams._get_backend_or_none()
    path = plot_history(history, tmp_path / "curves.png", title="run")
    assert matplotlib.rcParams._get_backend_or_none() == backend  # pyplot's untouched
    assert path == tmp_path / "curves.png"
    size, rgb = open_png(path)
    assert size == (1000, 400)
    assert rgb.std() > 10  # something was drawn
    assert os.listdir(tmp_path) == ["curves.png"]  # no temp file left behind


def test_replaces_atomically_and_creates_folders(tmp_path):
    target = tmp_path / "out" / "deep" / "plot.png"
    plot_history({"train_loss": [1.0, 0.5]}, str(target))
    first = target.read_bytes()
    plot_history({"train_loss": [1.0, 0.5, 0.1], "test_acc": [0.1, 0.2, 0.9]}, target)
    assert target.read_bytes() != first
    assert os.listdir(target.parent) == ["plot.png"]


def test_failed_write_leaves_old_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    target = tmp_path / "plot.png"
    plot_history({"train_loss": [1.0]}, target)
    before = target.read_bytes()

    def boom(self, *args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Figure, "savefig", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        plot_history({"train_loss": [2.0, 1.0]}, target)
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["plot.png"]


@pytest.mark.parametrize(
    "history, err, match",
    [
        ({}, EmberError, "plot_history: history is empty"),
        ([("loss", [1.0])], DTypeError, "plot_history: history must be a mapping"),
        (
            {"train_loss": [1.0, 0.5], "test_acc": [0.5]},
            ShapeError,
            r"plot_history: series have different lengths \(train_loss: 2, test_acc: 1\)",
        ),
        ({"train_loss": []}, ShapeError, "plot_history: the series 'train_loss' are empty"),
        ({"lr": [0.1]}, EmberError, "no key of history contains 'loss' or 'acc'"),
        ({"loss": 0.5}, DTypeError, r"history\['loss'\] must be a sequence of numbers"),
        ({"loss": ["a"]}, DTypeError, r"history\['loss'\] must hold numbers"),
        ({"loss": "0.5"}, DTypeError, r"history\['loss'\] must be a sequence"),
    ],
)
def test_errors(tmp_path, history, err, match):
    with pytest.raises(err, match=match):
        plot_history(history, tmp_path / "p.png")
    assert os.listdir(tmp_path) == []


def test_missing_matplotlib_is_named(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="plot_history: drawing needs matplotlib: pip install"):
        plot_history({"loss": [1.0]}, tmp_path / "p.png")


def test_path_must_be_png(tmp_path):
    with pytest.raises(EmberError, match=r"plot_history: path must end in \.png"):
        plot_history({"loss": [1.0]}, tmp_path / "p.pdf")
