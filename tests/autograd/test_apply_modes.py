"""Eager and traced ``apply`` wrap results the same way: view metadata and autograd history.

``apply`` has one wrapping step for both modes (the eager processor returns an array, the
tracer's a ``Symbol``); this table holds that in place. The one intended difference is the view
rule for a "view" op whose eager result had to be a copy (``reshape`` of a transposed array):
eager mode gives a new tensor (writes into it must not reach or bump the input), while a traced
view op is always a view (the graph makes a write into it reach the base when it runs).
"""

from __future__ import annotations

import pytest

import ember
from ember._config import tracing
from ember.static import Graph
from ember.static.symbol import Symbol
from ember.static.trace import Tracer


def _meta(y, x) -> dict:
    """What ``apply`` decided about ``y``, relative to the leaf ``x`` it was computed from."""
    node = y._node
    return {
        "is_view": y._base is not None,
        "base_is_x": y._base is x,
        "shares_version": y._version is x._version,
        "view_ops": y._view_ops,
        "readonly": y._readonly,
        "requires_grad": y._requires_grad,
        "node": None if node is None else (node.op, tuple(id(t) for t in node.inputs)),
        "shape": tuple(y.shape),
        "dtype": str(y.dtype),
    }


def _run(fn, grad: bool, traced: bool):
    x = ember.randn(2, 3, requires_grad=grad)
    if not traced:
        y = fn(x)
        return _meta(y, x), y
    tracer = Tracer(Graph("modes"), define=False)
    try:
        with tracing(tracer):
            y = fn(x)
        assert type(y._data) is Symbol
        return _meta(y, x), y
    finally:
        tracer.restore()


CASES = {
    "reshape": lambda x: x.reshape(3, 2),
    "flatten": lambda x: x.reshape(-1),
    "transpose": lambda x: x.t(),
    "permute": lambda x: x.permute(1, 0),
    "unsqueeze-index": lambda x: x[None],
    "expand": lambda x: x[:1].expand(4, 3),
    "basic-index-row": lambda x: x[0],
    "basic-index-slice": lambda x: x[:, 1:],
    "basic-index-0d": lambda x: x[1, 2],
    "chained-views": lambda x: x.t()[1:].reshape(2, 2),
    "view-of-non-view": lambda x: (x * 2)[0],
    "non-view": lambda x: x.exp(),
    "binary": lambda x: x + x,
    "integer-output": lambda x: x.argmax(dim=1),
    "bool-output": lambda x: x > 0,
    "no-grad-view": lambda x: _no_grad(lambda: x.t()),
    "no-grad-op": lambda x: _no_grad(lambda: x.exp()),
}


def _no_grad(f):
    with ember.no_grad():
        return f()


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "nograd"])
@pytest.mark.parametrize("name", list(CASES))
def test_eager_and_traced_wrap_alike(name, grad):
    eager, ye = _run(CASES[name], grad, traced=False)
    traced, yt = _run(CASES[name], grad, traced=True)
    assert traced == {**eager, "node": traced["node"]}
    # the node's op and inputs: same op, inputs are the same positions of the same tensors
    assert (eager["node"] is None) == (traced["node"] is None)
    if eager["node"] is not None:
        assert eager["node"][0] == traced["node"][0]
        assert len(eager["node"][1]) == len(traced["node"][1])


def test_expected_metadata():
    meta, _ = _run(CASES["expand"], True, traced=False)
    assert meta["is_view"] and meta["base_is_x"] and meta["shares_version"] and meta["readonly"]
    assert [op.name for op in meta["view_ops"]] == ["BasicIndex", "Expand"]
    meta, _ = _run(CASES["integer-output"], True, traced=False)
    assert not meta["requires_grad"] and meta["node"] is None
    meta, _ = _run(CASES["no-grad-view"], True, traced=False)
    assert meta["is_view"] and meta["shares_version"] and not meta["requires_grad"]
    meta, _ = _run(CASES["non-view"], True, traced=False)
    assert not meta["is_view"] and not meta["shares_version"] and meta["requires_grad"]


def test_view_rule_for_a_view_op_that_copies():
    """Eager: reshape of a transposed array is a copy, so a new tensor; traced: always a view."""
    fn = lambda x: x.t().reshape(6)  # noqa: E731
    eager, ye = _run(fn, True, traced=False)
    assert not eager["is_view"] and not eager["shares_version"] and eager["view_ops"] is None
    assert eager["requires_grad"]
    traced, _ = _run(fn, True, traced=True)
    assert traced["is_view"] and traced["base_is_x"] and traced["shares_version"]
    assert [op.name for op in traced["view_ops"]] == ["Permute", "Reshape"]
    # the eager copy: writing into it leaves the input (and its version) alone
    x = ember.randn(2, 3)
    y = x.t().reshape(6)
    before = x.numpy().copy()
    y.add_(1)
    assert (x.numpy() == before).all() and x._version[0] == 0


def test_traced_view_write_reaches_the_base_when_run():
    """A traced view aliases when the graph runs: the write comes back into the input."""

    def step(x):
        x.t()[0].add_(1)
        return x.sum()

    x = ember.zeros(2, 3)
    ember.compile(step)(x)
    eager = ember.zeros(2, 3)
    step(eager)
    assert (x.numpy() == eager.numpy()).all() and x.numpy()[:, 0].tolist() == [1.0, 1.0]
