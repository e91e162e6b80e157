"""``passes.pool_before_relu`` and the pooled bias-gradient sum: compiled training steps of small
convnets against PyTorch (losses and the weights after each step), with the rewrite applied
where the ReLU's output has no other reader and left out where it has."""

import numpy as np
import pytest
import torch

import ember
from ember.ops.broadcast import SumTo
from ember.ops.conv import Conv2d
from ember.ops.pool import MaxPool2d, MaxPoolScatter
from ember.static import Graph, passes
from ember.static.executor import Plan


class Net:
    """The same convnet in ember or torch (``lib``): conv, the block under test, a linear head."""

    def __init__(self, lib, block: str, bias: bool = True):
        nn = lib.nn
        self.lib, self.block = lib, block
        self.conv = nn.Conv2d(2, 4, 3, padding=1, bias=bias)
        pools = {"pool2": (2, 2, 0, False), "pool3_pad": (3, 2, 1, False), "ceil": (2, 2, 0, True)}
        k, s, p, ceil = pools.get(block, pools["pool2"])
        self.pool = nn.MaxPool2d(k, s, p, ceil_mode=ceil)
        size = 7 if block == "ceil" else 8
        out = ((size + 2 * p - k + (s - 1 if ceil else 0)) // s) + 1
        self.head = nn.Linear(4 * out * out, 3)
        self.bias_w = lib.tensor(
            np.linspace(-0.5, 0.5, size, dtype=np.float32).reshape(1, 1, 1, -1)
        )
        self.bias_c = lib.tensor(np.linspace(-0.3, 0.3, 4, dtype=np.float32).reshape(4, 1, 1))

    def params(self):
        return list(self.conv.parameters()) + list(self.head.parameters())

    def __call__(self, x):
        F = self.lib.nn.functional
        c = self.conv(x)
        if self.block == "bias_along_w":  # not constant over a window: only the ReLU moves
            c = c + self.bias_w
        if self.block == "bias_first":  # (C, 1, 1) + conv: the add's operands swapped
            c = self.bias_c + c
        r = F.relu(c)
        y = self.pool(r)
        if self.block == "relu_read_twice":  # a second reader of the ReLU: no rewrite
            y = y + F.avg_pool2d(r, 2)
        return self.head(y.flatten(1))


CASES = {  # block -> whether the conv's output feeds a MaxPool2d after the passes
    "pool2": True,
    "pool3_pad": True,
    "ceil": True,
    "no_bias": True,
    "bias_first": True,
    "bias_along_w": False,
    "relu_read_twice": False,
}


def _pair(block):
    bias = block not in ("no_bias", "bias_first")
    torch.manual_seed(0)
    t = Net(torch, block, bias)
    e = Net(ember, block, bias)
    for pe, pt in zip(e.params(), t.params()):
        pe.data = ember.tensor(pt.detach().numpy().copy())
    return e, t


@pytest.mark.parametrize("block", list(CASES))
def test_compiled_step_equals_torch(block, jit):
    e, t = _pair(block)
    size = 7 if block == "ceil" else 8
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2, size, size)).astype(np.float32)
    y = rng.integers(0, 3, 5)
    opt_e = ember.optim.SGD(e.params(), lr=0.1)
    opt_t = torch.optim.SGD(t.params(), lr=0.1)

    def step_e(x, y):
        opt_e.zero_grad()
        loss = ember.nn.functional.cross_entropy(e(x), y)
        loss.backward()
        opt_e.step()
        return loss

    step = ember.compile(step_e)
    xe, ye, xt, yt = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    for _ in range(3):
        opt_t.zero_grad()
        lt = torch.nn.functional.cross_entropy(t(xt), yt)
        lt.backward()
        opt_t.step()
        le = step(xe, ye)
        np.testing.assert_allclose(float(le.item()), float(lt.item()), rtol=1e-5)
        for pe, pt in zip(e.params(), t.params()):
            np.testing.assert_allclose(
                pe.detach().numpy(), pt.detach().numpy(), rtol=1e-5, atol=1e-6
            )
    g = step.optimized_graph
    pooled_conv = [
        n
        for n in g.nodes
        if type(n.op) is MaxPool2d and n.inputs[0].kind == "node"
        and type(n.inputs[0].node.op) is Conv2d
    ]  # fmt: skip
    assert bool(pooled_conv) == CASES[block], g


def test_bias_gradient_sums_the_pooled_map():
    g = Graph("f")
    h = g.add_input((2, 3, 2, 2), np.float32, "h")
    x = g.add_input((2, 3, 4, 4), np.float32, "x")
    s = g.add_node(MaxPoolScatter((2, 2), (2, 2)), [h, x], (2, 3, 4, 4), np.float32)

    g.outputs.append(g.add_node(SumTo((1, 3, 1, 1)), [s], (1, 3, 1, 1), np.float32))
    g.outputs.append(g.add_node(SumTo((1, 3, 1, 4)), [s], (1, 3, 1, 4), np.float32))  # keeps W
    opt = passes.algebraic_simplification(g)
    assert [type(n.inputs[0].node.op) if n.inputs[0].kind == "node" else "input"
            for n in opt.nodes if type(n.op) is SumTo] == ["input", MaxPoolScatter]  # fmt: skip
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(v.shape).astype(np.float32) for v in (h, x)]
    want = Plan(g, g.outputs).run(feeds, [])[0]
    got = Plan(opt, opt.outputs).run(feeds, [])[0]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
