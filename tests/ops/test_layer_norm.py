"""Layer and group normalization (``ember.ops.norm``: ``LayerNormalize`` forward,
``LayerNormGradInput`` backward) through ``F.layer_norm`` / ``F.group_norm``: the op table
(NumPy reference, float64 gradcheck and gradgrad, PyTorch parity, compiled, define-and-run,
ONNX) with and without the affine part, normalized shapes of one and two dims, groups 1, C and
between; then values and gradients against PyTorch per dtype, the op count of a step, the numba
CPU kernels against the NumPy bodies, and the CUDA kernels on the fake CuPy against the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.backend import overrides
from ember.ops import norm as Nm
from ember.ops.base import apply
from tests.ops.harness import OpCase, generate

needs_numba = pytest.mark.skipif(not _jit.available(), reason="numba is not installed")


def _ln_ref(k, eps=1e-5):
    def ref(x, w=None, b=None):
        dims = tuple(range(x.ndim - k, x.ndim))
        y = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
        return y * (1 if w is None else w) + (0 if b is None else b)

    return ref


def _gn_ref(groups, eps=1e-5):
    def ref(x, w=None, b=None):
        n, c = x.shape[:2]
        y = _ln_ref(1, eps)(x.reshape(n, groups, -1)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.ndim - 2)
        y = y * (1 if w is None else w.reshape(shape))
        return y + (0 if b is None else b.reshape(shape))

    return ref


def _affine_make(shape, params):
    def make(rng):
        x = rng.standard_normal(shape) * 2 + 1
        return [x] + [rng.standard_normal(params) + (1.5 if i == 0 else 0) for i in range(2)]

    return make


CASES = []
for shape, ns in [((4, 6), (6,)), ((2, 3, 5), (5,)), ((2, 3, 4, 5), (4, 5)), ((3, 7), (3, 7))]:
    tag = "x".join(map(str, ns))
    k = len(ns)
    CASES += [
        OpCase(
            f"layer_norm_{tag}",
            lambda m, x, ns=ns: m.nn.functional.layer_norm(x, ns),
            [shape],
            ref=_ln_ref(k),
        ),
        OpCase(
            f"layer_norm_affine_{tag}",
            lambda m, x, w, b, ns=ns: m.nn.functional.layer_norm(x, ns, w, b, eps=1e-3),
            [shape, ns, ns],
            ref=_ln_ref(k, 1e-3),
            make=_affine_make(shape, ns),
        ),
    ]
CASES += [
    OpCase(
        "layer_norm_transposed",
        lambda m, x: m.nn.functional.layer_norm(x, (4,)),
        [(3, 4)],
        ref=_ln_ref(1),
        transpose=True,
    ),
    OpCase(
        "layer_norm_weight_only",
        lambda m, x, w: m.nn.functional.layer_norm(x, (5,), w),
        [(3, 5), (5,)],
        ref=_ln_ref(1),
    ),
]
for shape, groups in [((2, 6, 4), 1), ((2, 6, 4), 6), ((2, 6, 2, 3), 3), ((3, 4), 2)]:
    tag = f"{len(shape)}d_g{groups}"
    c = shape[1]
    CASES += [
        OpCase(
            f"group_norm_{tag}",
            lambda m, x, g=groups: m.nn.functional.group_norm(x, g),
            [shape],
            ref=_gn_ref(groups),
        ),
        OpCase(
            f"group_norm_affine_{tag}",
            lambda m, x, w, b, g=groups: m.nn.functional.group_norm(x, g, w, b, eps=1e-3),
            [shape, (c,), (c,)],
            ref=_gn_ref(groups, 1e-3),
            make=_affine_make(shape, (c,)),
        ),
    ]

generate(globals(), CASES)


# -- values and gradients against PyTorch, per dtype ------------------------------------------

_TORCH_CASES = [
    ("layer_norm", (4, 3, 16), (16,)),
    ("layer_norm", (2, 3, 4, 5), (4, 5)),
    ("group_norm", (4, 6, 5), 3),
    ("group_norm", (2, 8, 3, 3), 8),
    ("group_norm", (2, 8, 3, 3), 1),
]


def _run(lib, fn, arg, x, w, b, g, dtype, affine):
    dt = getattr(lib, dtype)
    xt = lib.tensor(x).to(dt).requires_grad_()
    wt = lib.tensor(w).to(dt).requires_grad_() if affine else None
    bt = lib.tensor(b).to(dt).requires_grad_() if affine else None
    y = getattr(lib.nn.functional, fn)(xt, arg, wt, bt, eps=1e-5)
    y.backward(lib.tensor(g).to(dt))
    outs = [y, xt.grad] + ([wt.grad, bt.grad] if affine else [])
    return [str(o.dtype).split(".")[-1] for o in outs], [o.detach().double().numpy() for o in outs]


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("fn,shape,arg", _TORCH_CASES, ids=str)
def test_values_and_gradients_match_pytorch(fn, shape, arg, dtype, affine):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    pshape = arg if fn == "layer_norm" else (shape[1],)
    w = (rng.random(pshape) + 0.5).astype(np.float32)
    b = rng.standard_normal(pshape).astype(np.float32)
    (edt, evals), (tdt, tvals) = (
        _run(lib, fn, arg, x, w, b, g, dtype, affine) for lib in (ember, torch)
    )
    assert edt == tdt
    tol = {"float32": 1e-4, "float64": 1e-10, "bfloat16": 3e-2}[dtype]
    for e, t in zip(evals, tvals):
        scale = max(1.0, np.abs(t).max())
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * scale * 2)


def test_layer_norm_grad_input_gradcheck_and_gradgradcheck():
    """The backward op itself: its vjp (second order) against numerical differences, over one
    and two dims, eps large enough to matter."""
    rng = np.random.default_rng(3)
    for shape, axes in (((3, 7), 1), ((2, 3, 4), 2)):
        x = ember.tensor(rng.standard_normal(shape) * 2, requires_grad=True)
        g = ember.tensor(rng.standard_normal(shape), requires_grad=True)

        def f(g, x, axes=axes):
            return apply(Nm.LayerNormGradInput(axes, 0.1), g, x)

        assert ember.autograd.gradcheck(f, (g, x))
        assert ember.autograd.gradgradcheck(f, (g, x))


@pytest.mark.parametrize(
    "shape,start,span", [((3, 5), 1, 1), ((2, 3, 4), 1, 1), ((2, 3, 4, 2), 2, 2), ((4, 2, 3), 1, 2)]
)
def test_affine_ops_gradcheck_and_gradgradcheck(shape, start, span):
    """Affine (weight / bias, each optional) and AffineSums, whose vjps are each other."""
    rng = np.random.default_rng(6)
    pshape = shape[start : start + span]
    y, g = (ember.tensor(rng.standard_normal(shape), requires_grad=True) for _ in range(2))
    w, b = (ember.tensor(rng.standard_normal(pshape), requires_grad=True) for _ in range(2))
    for weight, bias in ((True, True), (True, False), (False, True)):
        params = [t for t, on in ((w, weight), (b, bias)) if on]

        def f(y, *p, weight=weight, bias=bias):
            return apply(Nm.Affine(start, weight, bias), y, *p)

        assert ember.autograd.gradcheck(f, (y, *params))
        if weight:  # bias only: y's gradient is g itself, which gradgradcheck's numerical
            # Jacobian cannot perturb apart (the same holds for y + b: ember's Add)
            assert ember.autograd.gradgradcheck(f, (y, *params))

    def sums(g, y):
        return apply(Nm.AffineSums(start, span), g, y)

    assert ember.autograd.gradcheck(sums, (g, y))
    assert ember.autograd.gradgradcheck(sums, (g, y))
    dims = tuple(i for i in range(len(shape)) if not start <= i < start + span)
    want = [(g * y).sum(dims), g.sum(dims)]
    for got, ref in zip(sums(g, y), want):
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), atol=1e-12)


def test_mixed_dtypes_and_broadcast_parameters_keep_the_composite():
    """Parameters of another dtype or shape than the fused op takes: the multiply / add
    composite, with its promotion and broadcasting, as before."""
    x = ember.randn(2, 3, 4)
    y = ember.nn.functional.layer_norm(x, (4,), ember.ones(4, dtype=ember.float64))
    assert y.dtype is ember.float64
    w = ember.ones(3, requires_grad=True)
    y = ember.nn.functional.group_norm(x.double(), 3, w, ember.zeros(3))
    assert y.dtype is ember.float64 and type(y.grad_fn).__name__ == "NativeGroupNormBackward0"
    assert not isinstance(y._node.op, Nm.Affine)
    y = ember.nn.functional.layer_norm(
        x.requires_grad_(), (4,), ember.full((4,), 2.0), ember.ones(4)
    )
    assert isinstance(y._node.op, Nm.Affine)


def test_group_norm_weight_within_a_group_gradgrad_matches_pytorch():
    """A per-channel weight varying within a group: second derivatives against PyTorch."""
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((2, 4, 3)), rng.random(4) + 0.5, rng.standard_normal(4)
    v = rng.standard_normal((2, 4, 3))
    outs = []
    for lib in (ember, torch):
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.group_norm(xt, 2, wt, bt)
        gx, gw = lib.autograd.grad([(y * y * y).sum()], [xt, wt], create_graph=True)
        hx, hw = lib.autograd.grad([(gx * lib.tensor(v)).sum()], [xt, wt])
        outs.append([t.detach().numpy() for t in (y, gx, gw, hx, hw)])
    for e, t in zip(*outs):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-9)


def test_a_step_is_one_normalization_op_each_way():
    """layer_norm and group_norm: LayerNormalize forward, LayerNormGradInput backward, the
    node names PyTorch shows."""
    x = ember.randn(4, 6, 5, requires_grad=True)
    w, b = ember.ones(5, requires_grad=True), ember.zeros(5, requires_grad=True)
    gn = ember.nn.functional.group_norm(x, 3, ember.ones(6), ember.zeros(6))
    ln = ember.nn.functional.layer_norm(x, (5,), w, b)
    for y, name, before in (
        (ln, "NativeLayerNormBackward0", []),
        (gn, "NativeGroupNormBackward0", ["Reshape"]),
    ):
        assert type(y.grad_fn).__name__ == name
        (gx,) = ember.autograd.grad([(y * y).sum()], [x], create_graph=True)
        node, ops = gx.grad_fn, []
        while node is not None:  # the chain that produced gx
            ops.append(type(node.op).__name__)
            node = next((t._node for t in node.inputs if t._node is not None), None)
        assert ops[: len(before) + 1] == before + ["LayerNormGradInput"]
        assert ops.count("LayerNormalize") == 1


# -- the CPU kernels (numba) against the NumPy bodies -----------------------------------------


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axes", [((4, 33), 1), ((2, 3, 5, 7), 2), ((64, 256), 1), ((1, 1), 1), ((3, 4096), 1)]
)
def test_numba_matches_the_numpy_body(shape, axes, dtype, monkeypatch):
    monkeypatch.setattr(_jit, "_mode", "sync")
    _jit.wait()  # a compile an earlier test started in the background
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 5).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    rows = g.reshape((-1,) + shape[len(shape) - axes :])
    for op, args in (
        (Nm.LayerNormalize(axes, 1e-5), (x,)),
        (Nm.LayerNormGradInput(axes, 1e-5), (g, x)),
        (Nm.LayerNormGradInput(axes, 1e-3), (g.T.copy().T, x)),  # g in another layout
        (Nm.LayerNormGradInput(axes, 1e-3), (np.broadcast_to(g[:1], shape), x)),  # g broadcast
        (Nm.Affine(x.ndim - axes, True, True), (x, rows[0], rows[-1])),  # layer norm's
        (Nm.Affine(1, True, False), (x, g.reshape(-1)[: shape[1]].copy())),  # group norm's
        (Nm.AffineSums(x.ndim - axes, axes), (g, x)),
        (Nm.AffineSums(1, 1), (g, x)),  # group norm's: per channel
    ):
        want = op.forward(np, *args)
        got = overrides.table("cpu")[type(op)](op, np, *args)
        assert got is not NotImplemented, type(op).__name__
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@needs_numba
def test_numba_declines_half_types_mixed_dtypes_and_empty_arrays(monkeypatch):
    monkeypatch.setattr(_jit, "_mode", "sync")
    _jit.wait()
    table = overrides.table("cpu")
    h = np.ones((2, 3), np.float16)
    assert table[Nm.LayerNormalize](Nm.LayerNormalize(), np, h) is NotImplemented
    f = np.ones((2, 3), np.float32)
    op = Nm.LayerNormGradInput()
    assert table[Nm.LayerNormGradInput](op, np, f.astype(np.float64), f) is NotImplemented
    assert table[Nm.LayerNormalize](Nm.LayerNormalize(), np, np.ones((0, 3))) is NotImplemented


@pytest.mark.parametrize("mode", ["off", "sync"])
def test_transformer_block_step_matches_pytorch(mode, monkeypatch):
    """LayerNorm -> Linear -> GroupNorm over features, forward and backward, with the numba
    kernels and without, against PyTorch."""
    if mode == "sync" and not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", mode)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 32)).astype(np.float32)
    lin = rng.standard_normal((32, 32)).astype(np.float32) * 0.2
    outs = {}
    for lib in (ember, torch):
        xt, lt = lib.tensor(x, requires_grad=True), lib.tensor(lin, requires_grad=True)
        ln, gn = lib.nn.LayerNorm(32), lib.nn.GroupNorm(2, 6)
        y = gn(ln(xt) @ lt)
        (y * y).sum().backward()
        outs[lib.__name__] = [
            a.detach().numpy() for a in (y, xt.grad, lt.grad, ln.weight.grad, gn.weight.grad)
        ]
    for e, t in zip(outs["ember"], outs["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)


# -- the CUDA kernels on the fake CuPy ---------------------------------------------------------


@pytest.mark.fake_kernels
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("fn", ["layer_norm", "group_norm"])
def test_cuda_kernels_match_the_cpu(fake_cuda, fn, dtype):
    """On the fake CuPy with g++-emulated kernels: forward and backward run the row kernels
    (ember.backend.kernels.rows) and give the CPU's values."""
    from ember.backend import kernels

    kernels.clear()
    rng = np.random.default_rng(4)
    shape, arg = ((3, 4, 37), (4, 37)) if fn == "layer_norm" else ((3, 4, 5, 2), 2)
    pshape = arg if fn == "layer_norm" else (4,)
    arrays = [rng.standard_normal(shape) * 2 + 1, rng.random(pshape) + 0.5]
    arrays += [rng.standard_normal(pshape), rng.standard_normal(shape)]
    results = []
    for device in ("cpu", "cuda"):
        x, w, b, g = (ember.tensor(a, device=device).to(getattr(ember, dtype)) for a in arrays)
        x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
        y = getattr(ember.nn.functional, fn)(x, arg, w, b)
        y.backward(g)
        results.append([t.detach().cpu().float().numpy() for t in (y, x.grad, w.grad, b.grad)])
    kinds = {k[1].removesuffix("_registers") for k in kernels._cache if k[0] == "rows"}
    assert {"layer_norm", "layer_norm_grad"} <= kinds  # either form (rows in registers or not)
    tol = {"bfloat16": 2e-2, "float16": 2e-3}.get(dtype, 1e-5)
    for got, want in zip(*results[::-1]):
        np.testing.assert_allclose(got, want, atol=tol * 4, rtol=tol)
