"""Rendering with Graphviz (needs ``dot``: the ``dot_program`` fixture installs or skips)."""

from __future__ import annotations

import pytest

import ember
from ember import nn, static
from ember.viz import draw

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def eager_loss():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    return model, model(ember.randn(5, 4)).sum()


def static_graph():
    static.reset_default_graph()
    g = static.Graph("step")
    with g.as_default():
        x = static.placeholder((None, 4), name="x")
        w = static.Variable(ember.randn(4, 3), name="w")
        loss = (x @ w).relu().sum()
        (gw,) = static.gradients(loss, [w])
        static.group(w.assign_sub(0.1 * gw))
    return g


def test_svg_of_an_eager_graph(tmp_path, dot_program):
    model, loss = eager_loss()
    out = draw(loss, tmp_path / "net.svg", params=model.named_parameters())
    assert out == tmp_path / "net.svg"
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>")
    assert "MmBackward0" in text and "AccumulateGrad" in text and "0.weight" in text
    assert "f32[3,4]" in text


def test_png_of_an_eager_graph(tmp_path, dot_program):
    _, loss = eager_loss()
    out = draw(loss, str(tmp_path / "net.PNG"))  # a str path; the suffix in any case
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000


def test_svg_and_png_of_a_static_graph(tmp_path, dot_program):
    g = static_graph()
    svg = draw(g, tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "ReluGrad" in svg and "f32[?,4]" in svg
    assert draw(g, tmp_path / "g.png").read_bytes().startswith(PNG_MAGIC)


def test_pdf(tmp_path, dot_program):
    _, loss = eager_loss()
    assert draw(loss, tmp_path / "net.pdf").read_bytes().startswith(b"%PDF")


def test_to_graphviz_source(dot_program):
    _, loss = eager_loss()
    src = ember.viz.to_graphviz(loss)
    assert src.source == ember.viz.to_dot(loss)
    assert src.pipe(format="svg").lstrip().startswith(b"<?xml")


def test_missing_dot_program_is_named(tmp_path, monkeypatch):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` on PATH
    _, loss = eager_loss()
    with pytest.raises(ember.EmberError, match=r"draw: rendering net\.svg needs Graphviz's `dot`"):
        draw(loss, tmp_path / "net.svg")
    assert not (tmp_path / "net.svg").exists()
