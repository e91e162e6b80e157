"""The one expression table of elementwise fusion: each fusable op's ``scalar`` expression
(beside its forward in ``ember.ops.elementwise``) rendered as numba Python, as CUDA C and as
the NumPy ``out=`` steps, each equal to the op's own forward on inputs with NaN, infinities
and signed zeros. A new op with a ``scalar`` fails ``test_every_fusable_op_has_a_case`` until
it gets a case here.
"""

import shutil

import ml_dtypes
import numpy as np
import pytest

from ember import dtypes
from ember.backend import jit as _jit
from ember.ops import elementwise as ew
from ember.static.passes.fuse import FUSABLE, FusedElementwise
from ember.static.passes.fused_renderers import cuda_source, text
from tests.static.test_fused_cuda import _host_library

SHAPE = (4, 16)
B = np.dtype(bool)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)

# (op, input dtypes: "f" = the output's float dtype, "b" = bool)
CASES = [
    (ew.ADD, "ff"),
    (ew.SUB, "ff"),
    (ew.MUL, "ff"),
    (ew.DIV, "ff"),
    (ew.NEG, "f"),
    (ew.Abs(), "f"),
    (ew.Reciprocal(), "f"),
    (ew.EXP, "f"),
    (ew.LOG, "f"),
    (ew.SQRT, "f"),
    (ew.Rsqrt(), "f"),
    (ew.Tanh(), "f"),
    (ew.Sigmoid(), "f"),
    (ew.Relu(), "f"),
    (ew.ReluGrad(), "ff"),
    (ew.Maximum(), "ff"),
    (ew.Minimum(), "ff"),
    (ew.Where(), "bff"),
    (ew.Clamp(lo=-1.5, hi=2.0), "f"),
    (ew.Clamp(lo=0.0), "f"),
    (ew.Clamp(hi=float("inf")), "f"),
    (ew.Clamp(lo=float("-inf"), hi=float("nan")), "f"),
    (ew.ClampGrad(lo=0.0), "ff"),
    (ew.ClampGrad(lo=-1.5, hi=2.0), "ff"),
    (ew.ClampGrad(hi=0.5), "ff"),
    (ew.PowScalar(2), "f"),
    (ew.PowScalar(0.5), "f"),
    (ew.PowScalar(-1), "f"),
    (ew.PowScalar(3), "f"),
    (ew.POW, "ff"),
    (ew.Cast(dtypes.float32), "b"),
    (ew.Cast(dtypes.float64), "f"),
    (ew.Cast(dtypes.bfloat16), "f"),
    (ew.Cast(dtypes.float16), "b"),
]
# ops whose rendering calls a libm function that numba / the C library may round differently
# from NumPy's vectorized loops (within a few ulp); everything else is bit for bit
_TRANSCENDENTAL = ("exp", "log", "tanh", "**")
# max(0.0, -0.0) may be either zero (NumPy's own loops differ too)
_EITHER_ZERO = (ew.Maximum, ew.Minimum, ew.Clamp)
# forwards that round a 16-bit intermediate (exp(-x), then 1 + e, ...; sqrt, then 1 / s), where a
# CUDA kernel rounds once at the store: equal within a unit in the last place
_ROUNDS_TWICE = (ew.Sigmoid, ew.Rsqrt)
_IDS = [f"{type(op).__name__}-{i}" for i, (op, _) in enumerate(CASES)]


def _dtype(op, float_dtype):
    return op.dtype.np if isinstance(op, ew.Cast) else float_dtype


def _inputs(kinds, dtype, rng):
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-30])
    out = []
    for k in kinds:
        if k == "b":
            out.append(rng.random(SHAPE) < 0.5)
            continue
        x = rng.standard_normal(SHAPE) * 3
        x.flat[: len(special)] = rng.permutation(special)
        out.append(x.astype(dtype))
    return out


def _program(op, kinds, dtype):
    n = len(kinds)
    names = [f"x{i}" for i in range(n)]
    return FusedElementwise.make(text(op, names), ((op, tuple(range(n))),), n, SHAPE, dtype.name)


def _same(got, want, exact, op):
    got, want, name = np.asarray(got), np.asarray(want), str(op)
    assert got.dtype == want.dtype and got.shape == want.shape, name
    half = got.dtype in (BF16, F16)
    if half:  # compared as float64 (NumPy's NaN test misses bfloat16's)
        got, want = got.astype(np.float64), want.astype(np.float64)
    if exact:
        np.testing.assert_array_equal(got, want, err_msg=name)
        zeros = want == 0
        # relu(-0.0): float16's and bfloat16's maximum(x, 0) keep -0.0, float32's loops give 0.0
        either = isinstance(op, _EITHER_ZERO) or (half and isinstance(op, ew.Relu))
        assert either or np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), name
    else:
        rtol = 2**-7 if half else 4e-7 if got.dtype == np.float64 else 4e-6
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=name)


def _exact(op):
    return not any(f in op.scalar for f in _TRANSCENDENTAL)


def test_every_fusable_op_has_a_case():
    assert {type(op) for op, _ in CASES} == FUSABLE
    for op, _ in CASES:
        assert isinstance(op.scalar, str) and op.writes_out in (True, False)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64), BF16, F16])
@pytest.mark.parametrize(("op", "kinds"), CASES, ids=_IDS)
def test_numpy_out_steps_equal_the_forward(op, kinds, dtype):
    xs = _inputs(kinds, dtype, np.random.default_rng(0))
    out_dtype = _dtype(op, dtype)
    with np.errstate(all="ignore"):
        want = op.forward(np, *xs)
        got = _program(op, kinds, out_dtype)._run_numpy(xs)
    _same(got, want, True, op)


@pytest.mark.skipif(not _jit.available(), reason="numba is not installed")
@pytest.mark.parametrize(("op", "kinds"), CASES, ids=_IDS)
def test_numba_rendering_equals_the_forward(op, kinds):
    dtype = np.dtype(np.float32)
    if _dtype(op, dtype).name not in _jit.NUMBA_TYPES:
        pytest.skip("numba has no 16-bit floats (the NumPy steps run those programs)")
    xs = _inputs(kinds, dtype, np.random.default_rng(1))
    fused = _program(op, kinds, _dtype(op, dtype))
    prev = _jit.set_mode("sync")
    try:
        k = fused._request_kernel(xs)
        assert k and k.fn is not None, getattr(k, "error", None)
        with np.errstate(all="ignore"):
            got = fused._run_kernel(k.fn, xs)
            want = op.forward(np, *xs)
    finally:
        _jit.set_mode(prev)
    _same(got, want, _exact(op), op)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_cuda_rendering_equals_the_forward(tmp_path):
    rng = np.random.default_rng(2)
    kernels, runs = {}, {}
    for i, (op, kinds) in enumerate(CASES):
        for dtype in (np.dtype(np.float32), np.dtype(np.float64), BF16, F16):
            xs = _inputs(kinds, dtype, rng)
            out_dtype = _dtype(op, dtype)
            name = f"k{i}_{dtype.name}"
            kernels[name] = cuda_source(
                ((op, tuple(range(len(kinds)))),),
                [x.dtype.name for x in xs],
                np.dtype(out_dtype).name,
            )
            runs[name] = (op, xs, np.dtype(out_dtype))
    lib = _host_library(tmp_path, kernels)
    import ctypes

    for name, (op, xs, out_dtype) in runs.items():
        got = np.empty(SHAPE, out_dtype)
        ptrs = [ctypes.c_void_p(a.ctypes.data) for a in xs + [got]]
        getattr(lib, name)(*ptrs, ctypes.c_long(got.size))
        with np.errstate(all="ignore"):
            want = op.forward(np, *xs)
        half = BF16 in (got.dtype, xs[0].dtype) or F16 in (got.dtype, xs[0].dtype)
        _same(got, want, _exact(op) and not (half and isinstance(op, _ROUNDS_TWICE)), op)


def test_text_of_a_program():
    assert text(ew.ADD, ["x0", "x1"]) == "x0 + x1"
    assert text(ew.Reciprocal(), ["x0"]) == "1 / x0"
    assert text(ew.Rsqrt(), ["x0"]) == "rsqrt(x0)"
    assert text(ew.ReluGrad(), ["x0", "x1"]) == "relu_grad(x0, x1)"
    assert text(ew.Clamp(lo=0.0), ["x0"]) == "clamp(x0)"
    assert text(ew.Cast(dtypes.float64), ["x0"]) == "cast(x0)"


def _near_ties(half) -> np.ndarray:
    """float64 values just past a tie of ``half``'s rounding, which float32 cannot hold: one
    rounding goes away from the tie, rounding through float32 first lands on it (to even)."""
    bits = 11 if half == F16 else 8  # 2 ** -bits: half a unit in the last place at 1.0
    base = [1 + 2.0**-bits, -(1 + 3 * 2.0**-bits), 3 + 2.0 ** (1 - bits), 1.5 - 2.0 ** (-1 - bits)]
    vals = [v + np.sign(v) * 2.0**-40 for v in base] + base  # and exact ties
    return np.resize(np.array(vals, np.float64), SHAPE)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
@pytest.mark.parametrize("half", [F16, BF16])
def test_float64_into_16_bits_rounds_through_float32_as_pytorch_in_every_form(tmp_path, half):
    import ctypes

    import torch

    x = _near_ties(half)
    name = "bfloat16" if half == BF16 else "float16"
    want = torch.from_numpy(x).to(getattr(torch, name)).float().numpy()
    op = ew.Cast(dtypes.to_dtype(half))
    lib = _host_library(tmp_path, {"k": cuda_source(((op, (0,)),), ["float64"], half.name)})
    got = np.empty(SHAPE, half)
    lib.k(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(got.ctypes.data), ctypes.c_long(x.size))
    for form in (got, op.forward(np, x), op.forward(np, x, out=np.empty(SHAPE, half))):
        assert np.array_equal(form.astype(np.float32), want)
    if half == F16:  # NumPy's own conversion rounds once
        assert not np.array_equal(x.astype(half).astype(np.float32), want)
