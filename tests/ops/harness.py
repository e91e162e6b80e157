"""The op-table harness: one ``OpCase`` per op, checked every way DESIGN.md lists.

A family's test file builds a list of ``OpCase`` and hands it to ``generate(globals(), cases)``,
which adds parametrized tests for: forward against a NumPy reference, float64 random-direction
gradient checks (broadcast, non-contiguous, 0-d and 0-size variants come as separate cases),
second order, infer == forward (shape and dtype), and values, gradients and result dtypes
against PyTorch when it is installed.

Every test also takes the ``device`` fixture (``tests/conftest.py``): ``cpu`` always, ``cuda``
when a GPU is present (skipped otherwise). On cuda the inputs are built on the GPU and results
are compared with the NumPy reference, with PyTorch (on the CPU), and with the same op run on
the CPU (CPU == GPU); gradients on cuda are compared with the CPU's, which gradcheck verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import ember
from tests._peer import newer_feature

try:
    import torch
except ImportError:  # parity tests skip without PyTorch
    torch = None


@dataclass
class OpCase:
    """One op on one set of input shapes.

    ``fn`` takes (module, *tensors) and is called with ``ember`` and with ``torch`` for parity;
    ``ref`` takes NumPy arrays. ``make`` builds each input array from an rng (default: normal
    floats with ``shapes``). Inputs at positions in ``nondiff`` never require grad.
    """

    name: str
    fn: Callable
    shapes: list
    ref: Callable | None = None
    make: Callable | None = None
    dtype: str = "float64"
    nondiff: tuple = ()
    grad: bool = True
    gradgrad: bool = True
    torch: bool = True
    transpose: bool = False  # also feed the first input as a non-contiguous (transposed) view
    atol: float = 1e-6
    rtol: float = 1e-5
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    tags: dict = field(default_factory=dict)

    def arrays(self, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        if self.make is not None:
            return [np.asarray(a) for a in self.make(rng)]
        return [rng.standard_normal(s).astype(self.dtype) for s in self.shapes]

    @property
    def id(self) -> str:
        shapes = ",".join("x".join(map(str, s)) or "0d" for s in self.shapes)
        return f"{self.name}[{shapes}]"


def ember_inputs(case: OpCase, arrays, requires_grad: bool, device: str = "cpu"):
    out = []
    for i, a in enumerate(arrays):
        t = ember.tensor(a, device=device)
        if case.transpose and i == 0 and a.ndim >= 2:
            t = ember.tensor(np.ascontiguousarray(a.swapaxes(-1, -2)), device=device)
            t = t.transpose(-1, -2)
        if requires_grad and i not in case.nondiff and t.dtype.is_floating_point:
            t.requires_grad_()
        out.append(t)
    return out


def torch_inputs(case: OpCase, arrays, requires_grad: bool):
    out = []
    for i, a in enumerate(arrays):
        t = torch.tensor(a)
        if requires_grad and i not in case.nondiff and t.dtype.is_floating_point:
            t.requires_grad_()
        out.append(t)
    return out


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _host(t) -> np.ndarray:
    """A tensor's values as NumPy, from any device."""
    return t.detach().cpu().numpy()


def _on(t, device: str) -> None:
    assert t.device.type == ember.device(device).type, f"result on {t.device}, not {device}"


def check_forward(case: OpCase, device: str = "cpu") -> None:
    arrays = case.arrays()
    got = _first(case.fn(ember, *ember_inputs(case, arrays, False, device)))
    _on(got, device)
    want = np.asarray(case.ref(*arrays))
    host = _host(got)
    np.testing.assert_allclose(
        np.asarray(host, dtype=np.float64) if got.dtype is not ember.bool else host,
        want,
        atol=case.atol,
        rtol=case.rtol,
    )
    assert tuple(got.shape) == want.shape
    if device != "cpu":  # CPU == GPU
        cpu = _first(case.fn(ember, *ember_inputs(case, arrays, False)))
        assert got.dtype == cpu.dtype
        np.testing.assert_allclose(host, cpu.numpy(), atol=case.atol, rtol=case.rtol)


def _grads(case: OpCase, device: str, order: int) -> list:
    """Gradients of a random projection of the output (``order`` 2: of a projection of the
    first-order gradients, built with create_graph), as host arrays (None where unused)."""
    xs = ember_inputs(case, case.arrays(), True, device)
    diff = [x for x in xs if x.requires_grad]
    out = _first(case.fn(ember, *xs))
    if not out.requires_grad:  # integer results (argmax...): nothing to compare
        return []
    rng = np.random.default_rng(1)
    w = ember.tensor(rng.standard_normal(tuple(out.shape)).astype(out.dtype.np), device=device)
    gs = ember.autograd.grad([out], diff, [w], create_graph=order > 1, allow_unused=True)
    if order > 1:
        pairs = [
            (g, ember.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype, device=device))
            for g in gs
            if g is not None and g.requires_grad
        ]
        if not pairs:
            return []
        total = sum((g * v).sum() for g, v in pairs)
        gs = ember.autograd.grad([total], diff, allow_unused=True)
    for g in gs:
        if g is not None:
            _on(g, device)
    return [None if g is None else _host(g) for g in gs]


def _same_grads(case: OpCase, device: str, order: int) -> None:
    for got, want in zip(_grads(case, device, order), _grads(case, "cpu", order)):
        if got is None or want is None:
            assert got is None and want is None or not np.any(got if want is None else want)
            continue
        np.testing.assert_allclose(got, want, atol=case.grad_atol, rtol=case.grad_rtol)


def check_grad(case: OpCase, device: str = "cpu") -> None:
    if device != "cpu":
        return _same_grads(case, device, 1)
    xs = ember_inputs(case, case.arrays(), True)
    assert ember.autograd.gradcheck(
        lambda *a: _first(case.fn(ember, *a)),
        xs,
        fast_mode=True,
        atol=case.grad_atol,
        rtol=case.grad_rtol,
    )


def check_gradgrad(case: OpCase, device: str = "cpu") -> None:
    if device != "cpu":
        return _same_grads(case, device, 2)
    xs = ember_inputs(case, case.arrays(), True)
    assert ember.autograd.gradgradcheck(
        lambda *a: _first(case.fn(ember, *a)),
        xs,
        fast_mode=True,
        atol=case.grad_atol,
        rtol=case.grad_rtol,
    )


def check_torch(case: OpCase, device: str = "cpu") -> None:
    if torch is None:
        pytest.skip("PyTorch not installed")
    arrays = case.arrays()
    diff = case.grad
    ex = ember_inputs(case, arrays, diff, device)
    tx = torch_inputs(case, arrays, diff)
    eo = _first(case.fn(ember, *ex))
    with newer_feature():
        to = _first(case.fn(torch, *tx))
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1], (eo.dtype, to.dtype)
    assert tuple(eo.shape) == tuple(to.shape)
    _on(eo, device)
    np.testing.assert_allclose(
        _host(eo).astype(np.float64),
        to.detach().numpy().astype(np.float64),
        atol=case.atol,
        rtol=case.rtol,
    )
    if not diff or not eo.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(eo.shape)).astype(arrays[0].dtype)
    eo.backward(ember.tensor(w, device=device))
    with newer_feature():
        to.backward(torch.tensor(w))
    for e, t in zip(ex, tx):
        if t.grad is None:
            assert e.grad is None or not np.any(_host(e.grad))
            continue
        np.testing.assert_allclose(
            _host(e.grad).astype(np.float64),
            t.grad.numpy().astype(np.float64),
            atol=case.grad_atol,
            rtol=case.grad_rtol,
        )


def generate(namespace: dict, cases: list) -> None:
    """Add the parametrized tests for ``cases`` to a test module's namespace."""

    def params(pred):
        return [pytest.param(c, id=c.id) for c in cases if pred(c)]

    @pytest.mark.parametrize("case", params(lambda c: c.ref is not None))
    def test_forward(case, device):
        check_forward(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.grad))
    def test_grad(case, device):
        check_grad(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.grad and c.gradgrad))
    def test_gradgrad(case, device):
        check_gradgrad(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.torch))
    def test_torch_parity(case, device):
        check_torch(case, device)

    namespace.update(
        test_forward=test_forward,
        test_grad=test_grad,
        test_gradgrad=test_gradgrad,
        test_torch_parity=test_torch_parity,
    )
