"""Every op case of tests/ops/*.py's tables, built with placeholders and run in a Session,
equals eager mode (values, dtypes, shapes), and so do its symbolic gradients."""

import importlib

import numpy as np
import pytest

import ember
from ember import static
from tests.ops.harness import _first, ember_inputs

_MODULES = [
    "test_core_example",
    "test_elementwise",
    "test_elementwise_logical",
    "test_compare",
    "test_reduce",
    "test_linalg",
    "test_shape",
    "test_indexing",
]
CASES = []
for _name in _MODULES:
    try:
        _mod = importlib.import_module(f"tests.ops.{_name}")
    except ImportError:  # a family not written yet
        continue
    CASES += getattr(_mod, "CASES", [])

# Ops whose output shape depends on the data: a graph can't be built for them.
DATA_DEPENDENT = {"nonzero", "masked_select", "unique", "bool_mask"}


def _build(case, arrays, grad: bool):
    g = static.Graph(case.name)
    with g.as_default():
        phs = []
        for i, a in enumerate(arrays):
            p = static.placeholder(a.shape, ember.tensor(a).dtype, name=f"in{i}")
            p._requires_grad = grad and i not in case.nondiff and p.dtype.is_floating_point
            phs.append(p)
        out = _first(case.fn(ember, *phs))
    return g, phs, out


def _close(got, want, case):
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, atol=case.atol, rtol=case.rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_static_equals_eager(case):
    arrays = case.arrays()
    want = _first(case.fn(ember, *ember_inputs(case, arrays, False)))
    try:
        g, phs, out = _build(case, arrays, grad=False)
    except static.TraceError:
        assert any(k in case.name for k in DATA_DEPENDENT), case.name
        return
    got = static.Session(g).run(out, dict(zip(phs, arrays)))
    _close(np.asarray(got), want.numpy(), case)
    g.validate(check_types=True)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.grad])
def test_static_gradients_equal_eager(case):
    arrays = case.arrays()
    xs = ember_inputs(case, arrays, True)
    out = _first(case.fn(ember, *xs))
    if not out.requires_grad:
        return
    w = (
        np.random.default_rng(1)
        .standard_normal(tuple(out.shape))
        .astype(out.numpy(force=True).dtype)
    )
    diff = [x for x in xs if x.requires_grad]
    want = ember.autograd.grad((out * ember.tensor(w)).sum(), diff, allow_unused=True)
    try:
        g, phs, sout = _build(case, arrays, grad=True)
    except static.TraceError:
        assert any(k in case.name for k in DATA_DEPENDENT), case.name
        return
    with g.as_default():
        loss = (sout * ember.tensor(w)).sum()
    sph = [p for p in phs if p.requires_grad]
    grads = static.gradients(loss, sph)
    fetch = [gr for gr in grads if gr is not None]
    got = iter(static.Session(g).run(fetch, dict(zip(phs, arrays))))
    for gr, wt in zip(grads, want):
        if gr is None:
            assert wt is None or not np.any(wt.numpy())
            continue
        res = np.asarray(next(got))
        if wt is None:
            assert not np.any(res)
            continue
        np.testing.assert_allclose(res, wt.numpy(), atol=case.grad_atol, rtol=case.grad_rtol)
