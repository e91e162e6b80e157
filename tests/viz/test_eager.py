"""DOT source of eager autograd graphs (no Graphviz needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ember
from ember import nn
from ember.viz import STYLES, to_dot

from .helpers import parse

GRAD_FN = STYLES["grad_fn"]["fillcolor"]
LEAF = STYLES["leaf"]["fillcolor"]


def two_layer():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    loss = model(ember.randn(5, 4)).sum()
    return model, loss


def test_two_layer_net_nodes_leaves_and_edges():
    model, loss = two_layer()
    pic = parse(to_dot(loss, params=dict(model.named_parameters())))
    names = sorted(a["label"].split("\n")[0] for a in pic.nodes.values())
    assert names == sorted(
        ["output", "SumBackward0", "ReluBackward0"]
        + ["AddmmBackward0", "MmBackward0", "TBackward0"] * 2
        + ["AccumulateGrad"] * 4
    )
    # one edge per input that needs a gradient (x needs none) and one into the output
    assert len(pic.edges) == 12
    # leaves: named, typed, blue, each feeding the op that read it
    leaves = {a["label"] for n, a in pic.nodes.items() if pic.fill(n) == LEAF}
    assert leaves == {
        "AccumulateGrad\n0.weight\nf32[3,4]",
        "AccumulateGrad\n0.bias\nf32[3]",
        "AccumulateGrad\n2.weight\nf32[2,3]",
        "AccumulateGrad\n2.bias\nf32[2]",
    }
    (bias,) = pic.find("AccumulateGrad\n2.bias\nf32[2]")
    ((add, attrs),) = pic.out_of(bias)
    assert pic.nodes[add]["label"] == "AddmmBackward0" and attrs["label"] == " f32[2]"
    for n in pic.first_line("MmBackward0"):
        assert pic.fill(n) == GRAD_FN
    (out,) = pic.first_line("output")
    assert pic.nodes[out]["label"] == "output\nf32[]"
    ((src, _),) = pic.into(out)
    assert pic.nodes[src]["label"] == "SumBackward0"
    # the second MatMul reads the ReLU's (5, 3) output and the transposed (3, 2) weight
    (second,) = [n for n in pic.first_line("MmBackward0") if len(pic.into(n)) == 2]
    assert sorted(a["label"] for _, a in pic.into(second)) == [" f32[3,2]", " f32[5,3]"]


def test_params_as_module_pairs_or_dict_give_the_same_picture():
    model, loss = two_layer()
    by_dict = to_dot(loss, params=dict(model.named_parameters()))
    assert to_dot(loss, params=model.named_parameters()) == by_dict
    assert to_dot(loss, params=model) == by_dict
    assert to_dot(loss) != by_dict  # unnamed leaves
    assert "AccumulateGrad\\nf32[3,4]" in to_dot(loss)


def test_deterministic_and_does_not_change_the_graph():
    model, loss = two_layer()
    assert to_dot(loss, params=model) == to_dot(loss, params=model)
    loss.backward()
    assert model[0].weight.grad.shape == (3, 4)
    # after backward (saved tensors freed) the history can still be drawn
    assert "MmBackward0" in to_dot(loss)


def test_shared_leaf_is_one_box_with_two_edges():
    w = ember.randn(3, 3, requires_grad=True)
    pic = parse(to_dot(w.mm(w).sum(), params={"w": w}))
    (leaf,) = pic.find("AccumulateGrad\nw\nf32[3,3]")
    assert [pic.nodes[b]["label"] for b, _ in pic.out_of(leaf)] == ["MmBackward0"] * 2


def test_shapes_false_leaves_edges_unlabelled():
    _, loss = two_layer()
    pic = parse(to_dot(loss, shapes=False))
    assert len(pic.edges) == 12 and all("label" not in a for _, _, a in pic.edges)


def test_several_outputs_leaf_and_no_history():
    x = ember.ones(2, requires_grad=True)
    y = x.exp()
    c = ember.zeros(3)
    pic = parse(to_dot([y, x, c]))
    assert sorted(pic.labels()) == sorted(
        [
            "ExpBackward0",
            "AccumulateGrad\nf32[2]",
            "output 0\nf32[2]",
            "output 1\nf32[2]",
            "output 2\nf32[3]\n(no autograd history)",
        ]
    )
    (leaf,) = pic.find("AccumulateGrad\nf32[2]")
    assert len(pic.out_of(leaf)) == 2  # into Exp and into output 1
    (none,) = pic.first_line("output 2")
    assert pic.into(none) == []


def test_grad_fn_and_dtypes():
    x = ember.arange(6, dtype=ember.float64).reshape(2, 3).requires_grad_()
    y = (x * 2).sum(dim=1)
    pic = parse(to_dot(y.grad_fn))  # a node: no output box
    assert "output" not in " ".join(pic.labels())
    assert sorted(pic.labels()) == ["AccumulateGrad\nf64[2,3]", "MulBackward0", "SumBackward1"]
    assert {a["label"] for _, _, a in pic.edges} == {" f64[2,3]"}


def test_function_with_several_outputs():
    class Split(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    w = ember.randn(3, requires_grad=True)
    a, b = Split.apply(w)
    pic = parse(to_dot((a + b).sum()))
    # the Function's node feeds one small node per output; those edges say which output
    slots = sorted(a["label"] for _, _, a in pic.edges if a.get("label", "").startswith(" out"))
    assert slots == [" output 0", " output 1"]
    assert len(pic.find("SplitBackward")) == 3


def test_higher_order_history():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ember.autograd.grad((x**3).sum(), x, create_graph=True)
    pic = parse(to_dot(g))
    assert pic.find("AccumulateGrad\nf32[2]")
    assert len(pic.nodes) > 3


def test_deep_history_is_not_recursive():
    x = ember.ones(2, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    pic = parse(to_dot(y))
    assert len(pic.find("MulBackward0")) == 3000


def test_names_are_escaped():
    w = ember.ones(2, requires_grad=True)
    src = to_dot(w.sum(), params={'we"ird\\name': w}, name='my "graph"')
    assert src.startswith('digraph "my \\"graph\\"" {')
    pic = parse(src)
    assert pic.find('AccumulateGrad\nwe"ird\\name\nf32[2]')


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"to_dot: expected a Tensor.*got int"):
        to_dot(3)
    with pytest.raises(ValueError, match="nothing to draw"):
        to_dot([])


def test_import_ember_does_not_import_graphviz():
    code = "import sys, ember; ember.viz.to_dot(ember.ones(1)); print('graphviz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
