"""DOT source of ``ember.static`` graphs: define-and-run and ``ember.compile`` (no Graphviz)."""

from __future__ import annotations

import pytest

import ember
import ember.nn.functional as F
from ember import nn, static
from ember.viz import STYLES, draw, to_dot

from .helpers import parse

FWD = STYLES["op"]["fillcolor"]
BWD = STYLES["backward"]["fillcolor"]
EFFECT = STYLES["effect"]["fillcolor"]


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    static.reset_default_graph()
    yield
    static.reset_default_graph()


def define_and_run():
    g = static.Graph("twolayer")
    with g.as_default():
        x = static.placeholder((None, 4), name="x")
        w1 = static.Variable(ember.randn(4, 3), name="w1")
        w2 = static.Variable(ember.randn(3, 2), name="w2")
        loss = ((x @ w1).clamp(min=0) @ w2).sum()
        gw1, gw2 = static.gradients(loss, [w1, w2])
        train = static.group(w1.assign_sub(0.1 * gw1), w2.assign_sub(0.1 * gw2))
    return g, x, loss, gw1, train


def kinds(pic) -> dict:
    """op name -> sorted fill colors of its boxes."""
    out: dict = {}
    for n, a in pic.nodes.items():
        out.setdefault(a["label"].split("\n")[0], []).append(pic.fill(n))
    return {k: sorted(v) for k, v in out.items()}


def test_define_and_run_whole_graph():
    g, *_ = define_and_run()
    pic = parse(to_dot(g))
    k = kinds(pic)
    # forward ops grey, gradient ops rose, stores and groups yellow
    assert k["Clamp"] == [FWD]
    assert k["MatMul"].count(FWD) == 2 and k["MatMul"].count(BWD) >= 2
    assert k["Sum"] == [FWD]
    assert k["ZerosLike"] == [BWD]  # the gradient seed
    assert k["Group"] == [EFFECT]
    assert set(k["Assign"]) == {EFFECT}
    # unknown batch size shown as ?, names of placeholders and variables kept
    assert "x\nf32[?,4]" in pic.labels()
    assert "w1\nf32[4,3]" in pic.labels()
    # an Assign names what it stores into (no edge back up to it)
    assigns = [pic.nodes[n]["label"] for n in pic.first_line("Assign")]
    assert sorted(assigns) == ["Assign\n→ w1"] * 2 + ["Assign\n→ w2"] * 2  # init and update
    assert all(a.get("style") != "dashed" for _, _, a in pic.edges)
    # an op attribute holding an unknown size names it
    assert any("x.shape[0]" in lbl for lbl in pic.labels())
    # the graph name is the picture's name; every op shows its text form as a tooltip
    src = to_dot(g)
    assert src.startswith('digraph "twolayer" {')
    assert 'tooltip="%' in src


def test_symbolic_tensor_draws_what_it_needs():
    g, x, loss, gw1, train = define_and_run()
    fwd = parse(to_dot(loss))
    assert set(kinds(fwd)) == {"x", "w1", "w2", "MatMul", "Clamp", "Sum", "output"}
    assert kinds(fwd)["MatMul"] == [FWD, FWD]
    grad = parse(to_dot(gw1))
    k = kinds(grad)
    assert "Assign" not in k and "Group" not in k
    assert k["ZerosLike"] == [BWD] and FWD in k["MatMul"] and BWD in k["MatMul"]
    assert grad.find("output")
    step = parse(to_dot(train))  # an Operation: no output box
    assert "output" not in kinds(step)
    assert kinds(step)["Group"] == [EFFECT]
    # the variables' initializers are not part of a training step, but are of the graph
    assert len(kinds(step)["Assign"]) == 2
    assert len(kinds(parse(to_dot(g)))["Assign"]) == 4


def test_forward_argument_overrides_the_split():
    g, x, loss, gw1, train = define_and_run()
    pic = parse(to_dot(gw1, forward=[gw1]))
    assert BWD not in {pic.fill(n) for n in pic.nodes}
    with pytest.raises(TypeError, match="forward must be symbolic"):
        to_dot(g, forward=[ember.ones(1)])


def test_params_name_symbolic_tensors():
    g, x, loss, gw1, train = define_and_run()
    pic = parse(to_dot(loss, params={"features": x}))
    assert "features\nf32[?,4]" in pic.labels()


def compiled_step():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    opt = ember.optim.SGD(model.parameters(), lr=0.1)

    @ember.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    train_step(ember.randn(5, 4), ember.randn(5, 2))
    return model, train_step


def test_compiled_train_step():
    model, step = compiled_step()
    src = to_dot(step)
    assert src == to_dot(step.graph)
    pic = parse(src)
    k = kinds(pic)
    assert src.startswith('digraph "train_step" {')
    assert k["MatMul"].count(FWD) == 2 and k["MatMul"].count(BWD) == 3
    assert k["ReluGrad"] == [BWD]
    assert k["Assign"] == [EFFECT] * 8  # the 4 gradients and the 4 updated parameters
    assert "x\nf32[5,4]" in pic.labels() and "y\nf32[5,2]" in pic.labels()
    assert "model.0.weight\nf32[3,4]" in pic.labels()
    assert "Assign\n→ model.2.bias.grad" in pic.labels()
    assert "Assign\n→ model.0.weight" in pic.labels()
    assert "lr\nf64[]" in pic.labels()  # SGD's learning rate: state read on every run
    (out,) = pic.find("output")
    ((src_id, attrs),) = pic.into(out)
    assert attrs["label"] == " f32[]" and pic.fill(src_id) == FWD
    # every edge into an op is labelled with the type of the value it carries
    assert all(a.get("label") for _, _, a in pic.edges)
    # one edge per input read (an Assign's target is not read) and one into the output
    graph = step.graph
    reads = sum(len(n.inputs) - (n.op.__class__.__name__ == "Assign") for n in graph.nodes)
    assert len(pic.edges) == reads + 1


def test_compiled_params_rename_state():
    model, step = compiled_step()
    pic = parse(to_dot(step, params={"W1": model[0].weight}))
    assert "W1\nf32[3,4]" in pic.labels()


def test_compiled_forward_only():
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
    fast = ember.compile(model)
    with ember.no_grad():
        fast(ember.randn(2, 4))
    pic = parse(to_dot(fast))
    assert {pic.fill(n) for n in pic.nodes if pic.nodes[n].get("tooltip", "").count("=")} == {FWD}
    assert pic.find("output")


def test_constants_and_graph_outputs():
    g = static.Graph("f")
    x = g.add_input((2,), "float32", "x")
    two = g.add_constant(ember.tensor(2.0).numpy())
    y = g.add_node(ember.ops.elementwise.Mul(), [x, two], (2,), "float32")
    g.outputs.append(y)
    g.outputs.append(x)
    pic = parse(to_dot(g))
    assert "2.0" in pic.labels()
    assert sorted(lbl for lbl in pic.labels() if lbl.startswith("output")) == [
        "output 0",
        "output 1",
    ]


def test_errors():
    @ember.compile
    def f(x):
        return x * 2

    with pytest.raises(ember.EmberError, match="compiled function f has no graph yet"):
        to_dot(f)
    g1, g2 = static.Graph(), static.Graph()
    with g1.as_default():
        a = static.placeholder((2,))
    with g2.as_default():
        b = static.placeholder((2,))
    with pytest.raises(ember.EmberError, match="different graphs"):
        to_dot([a, b])
    with pytest.raises(TypeError, match="symbolic and eager"):
        to_dot([a, ember.ones(2, requires_grad=True)])


def test_draw_dot_text_needs_no_graphviz(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "graphviz", None)  # as if not installed
    g, *_ = define_and_run()
    out = draw(g, tmp_path / "g.gv")
    assert out == tmp_path / "g.gv" and out.read_text() == to_dot(g)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'ember\[viz\]'"):
        draw(g, tmp_path / "g.svg")
    with pytest.raises(ValueError, match=r"cannot tell the format.*'g\.txt'.*\.svg"):
        draw(g, "g.txt")
