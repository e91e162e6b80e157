"""ember's CUDA kernels and their glue, checked on the CPU.

The kernel sources in ``ember.backend.kernels`` run here through ``_emulator`` (g++ compiles
the very strings ember gives CuPy) and must match the bodies they override (the ops' ``forward``,
the optimizers' NumPy ``update``), which are the CPU's own computations: optimizer updates bit
for bit, row kernels to rounding. cuDNN graphs run with a stand-in frontend (``_fakecudnn``)
that convolves with PyTorch. Every source also has to compile for sm_90 with NVIDIA's NVRTC
(``_nvrtc``, no GPU needed). ``test_overrides.py`` checks every registered override against its
reference and the one place that picks them; real-GPU comparisons are in ``test_gpu.py``.
"""

from __future__ import annotations

import re
import types

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.backend import kernels
from ember.backend.arrays import cupy_surface
from ember.backend.kernels import conv as kconv
from ember.backend.kernels import matmul as kmatmul
from ember.backend.kernels import optim as koptim
from ember.backend.kernels import optim_many as koptim_many
from ember.backend.kernels import rows
from ember.backend.overrides import run
from ember.ops import conv as C
from ember.ops.linalg import MatMul
from ember.ops.norm import LayerNormalize
from ember.ops.softmax import LogSoftmax, Softmax

from . import _emulator, _nvrtc

pytestmark = pytest.mark.skipif(not _emulator.available(), reason="needs g++ to emulate kernels")

BF16 = np.dtype(ml_dtypes.bfloat16)


# -- optimizers (each kernel against the rule: tests/backend/test_overrides.py) ----------------


def test_optimizer_overrides_take_the_kernels(xp):
    """The registered overrides build and launch the kernels on a kernel-building module and
    decline where they do not serve (no kernels, SGD's first momentum step, float16 grads)."""
    w = ember.nn.Parameter(ember.ones(4))
    p, g = np.ones(4, np.float32), np.full(4, 0.5, np.float32)
    for opt, fn in (
        (ember.optim.Adam([w], lr=0.1), koptim.adam_update),
        (ember.optim.AdamW([w], lr=0.1), koptim.adam_update),
        (ember.optim.RMSprop([w], lr=0.1, momentum=0.5), koptim.rmsprop_update),
        (ember.optim.SGD([w], lr=0.1), koptim.sgd_update),
    ):
        group = opt.param_groups[0]
        state = opt.init_state(w, group)
        if "step" in state:
            state["step"]._data += 1  # as Optimizer.step does before the override
        assert fn(opt, xp, p, g, state, group) is None
        assert fn(opt, np, p, g, state, group) is NotImplemented
        assert fn(opt, xp, p, g.astype(np.float16), state, group) is NotImplemented
    sgd = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    state = sgd.init_state(w, sgd.param_groups[0])
    assert koptim.sgd_update(sgd, xp, p, g, state, sgd.param_groups[0]) is NotImplemented
    built = {key[1] for key in kernels._cache if key[0] == "optim"}
    assert built == {"adam", "rmsprop", "sgd"}
    assert np.isfinite(p).all()


def test_elementwise_sources_specialize_the_accumulation_type():
    ins, outs, op = koptim.specialize(koptim.adam_source(True, False), np.float64)
    assert ins.startswith("G g, float64 b1, float64 omb1")
    assert outs == "T p, T m, T v, T vmax"
    assert op.startswith("typedef double A;")
    _, _, op32 = koptim.specialize(koptim.sgd_source(True, True), np.float32)
    assert "typedef float A;" in op32 and "momentum * bb" in op32


# -- row kernels: softmax, log-softmax, layer norm --------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((5, 70), -1), ((3, 4, 9), 1), ((2, 3), 0), ((1, 1), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_kernel(xp, dtype, shape, dim, log):
    x = (np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype)
    got = rows.softmax(xp, x, dim, log)
    want = (LogSoftmax if log else Softmax)(dim).forward(np, x)
    assert got.dtype == x.dtype and got.shape == x.shape
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_softmax_kernel_non_contiguous_and_extremes(xp):
    x = np.random.default_rng(0).standard_normal((6, 40)).astype(np.float32)[:, ::2]
    x[0, 0] = 1e30  # one huge logit: the max subtraction keeps exp finite
    x[1, :] = -np.inf  # all -inf: NaN, as NumPy gives
    x[2, 3] = np.nan  # a NaN spreads over its row
    got = rows.softmax(xp, x, -1, False)
    with np.errstate(invalid="ignore"):
        want = Softmax(-1).forward(np, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all() and got[0, 0] == 1.0


def test_softmax_kernel_bfloat16(xp):
    x = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float32)
    xb = x.astype(BF16)
    got = rows.softmax(xp, xb, -1, True)
    assert got.dtype == BF16
    want = LogSoftmax(-1).forward(np, xb.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))  # float32 inside


def test_bfloat16_store_rounds_to_nearest_even(xp):
    """The kernels' float -> bfloat16 store rounds as ml_dtypes does (ties to even, inf, NaN,
    subnormals) and the load is exact."""
    _, io = rows._IO["bf16"]
    src = (
        "typedef float A;\n" + io + 'extern "C" __global__ void rt(const float* x, ST* y, '
        "float* back, long long n) {\n"
        "  for (long long i = threadIdx.x; i < n; i += blockDim.x) {\n"
        "    y[i] = st(x[i]);\n    back[i] = ld(y[i]);\n  }\n}\n"
    )
    bits = np.random.default_rng(0).integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    special = [1.0, 1.00390625, 1.01171875, 1.0078125, -3.3e38, 3.4e38, np.inf, -np.inf, 1e-40]
    x = np.concatenate([bits.view(np.float32), np.array(special, np.float32)])
    x = x[~np.isnan(x)]
    y, back = np.empty(x.shape, np.uint16), np.empty(x.shape, np.float32)
    xp.RawKernel(src, "rt")((1,), (8,), (x, y, back, np.int64(x.size)))
    np.testing.assert_array_equal(y, x.astype(BF16).view(np.uint16))
    np.testing.assert_array_equal(back, x.astype(BF16).astype(np.float32))
    nan = np.array([np.nan], np.float32)
    xp.RawKernel(src, "rt")((1,), (1,), (nan, y[:1], back[:1], np.int64(1)))
    assert np.isnan(back[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((4, 33), 1), ((2, 3, 5, 7), 2), ((3, 1), 1)])
def test_layer_norm_kernel(xp, dtype, shape, axes):
    x = (np.random.default_rng(0).standard_normal(shape) * 3 + 1).astype(dtype)
    got = rows.layer_norm(xp, x, axes, 1e-5)
    want = LayerNormalize(axes, 1e-5).forward(np, x)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_layer_norm_primitive_is_f_layer_norm():
    x = ember.randn(3, 4, 5)
    want = ember.nn.functional.layer_norm(x, (4, 5)).numpy()
    got = LayerNormalize(2, 1e-5).forward(np, x.numpy())
    np.testing.assert_allclose(got, want, 1e-6, 1e-6)


def test_row_kernels_decline_what_they_do_not_serve(xp):
    empty = np.zeros((0, 5), np.float32)
    assert rows.softmax(xp, empty, -1, False) is NotImplemented
    assert rows.layer_norm(xp, empty, 1, 1e-5) is NotImplemented
    ints = np.ones((2, 3), np.int64)
    assert rows.softmax(xp, ints, -1, True) is NotImplemented
    x = np.ones((2, 3), np.float32)
    assert rows.softmax(np, x, -1, False) is NotImplemented  # NumPy builds no kernels
    assert not kernels._cache


def test_ops_take_the_kernels_on_a_gpu_module(xp):
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(run(Softmax(1), xp, x), Softmax(1).forward(np, x), 1e-6, 1e-7)
    np.testing.assert_allclose(run(LogSoftmax(0), xp, x), LogSoftmax(0).forward(np, x), 1e-6)
    ln = LayerNormalize(1, 1e-5)
    np.testing.assert_allclose(run(ln, xp, x), ln.forward(np, x), 2e-6, 2e-6)
    names = {(key[1], key[3]) for key in kernels._cache if key[0] == "rows"}
    assert names == {("softmax", False), ("softmax", True), ("layer_norm", False)}


def test_sources_fill_in_block_and_storage():
    src = rows.source("softmax", "f16", block=128, log=True)
    assert "#define BLOCK 128" in src and "#define LOG 1" in src and "cvt.rn.f16.f32" in src
    assert "typedef double A;" in rows.source("layer_norm", "f64")


# -- matmul: TF32 policy and the folded N-D @ 2-D product -------------------------------------


def test_matmul_applies_the_tf32_setting_once_per_change(xp, monkeypatch):
    calls = xp._core._routines_linalg.calls
    monkeypatch.setattr(kmatmul, "_setter", [])
    monkeypatch.setattr(kmatmul, "_applied", [None])
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    mm = MatMul()
    run(mm, xp, a, b)
    run(mm, xp, a, b)
    assert calls == [(np.dtype(np.float32), 1)]  # DEFAULT: PyTorch's default, no TF32
    try:
        ember.backends.cuda.matmul.allow_tf32 = True
        run(mm, xp, a, b)
        ember.set_float32_matmul_precision("medium")
        run(mm, xp, a, b)
        assert calls[1:] == [(np.dtype(np.float32), 7)] * 2
    finally:
        ember.set_float32_matmul_precision("highest")
    run(mm, xp, a, b)
    assert calls[-1] == (np.dtype(np.float32), 1) and len(calls) == 4


@pytest.mark.parametrize(
    "sa,sb", [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (4, 2)), ((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
              ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((2, 3, 0), (0, 4)), ((2, 0, 4), (4, 3))],
)  # fmt: skip
def test_matmul_gpu_branch_keeps_numpy_semantics(xp, sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    got = kmatmul.matmul(xp, a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-6, atol=1e-6)
    assert got.shape == np.matmul(a, b).shape


def _cupy_14_2(xp):
    """``xp`` whose ``matmul`` refuses bfloat16 batches as CuPy 14.2's does (seen on an H200)."""
    mod = types.ModuleType("cupy_14_2")
    mod.__getattr__ = lambda name: getattr(xp, name)

    def matmul(a, b, **kwargs):
        if (a.ndim > 2 or b.ndim > 2) and BF16 in (a.dtype, b.dtype):
            raise TypeError("data type 'E' not understood")
        return xp.matmul(a, b, **kwargs)

    mod.matmul = matmul
    return mod


@pytest.mark.parametrize(
    "sa,sb", [((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 3)),
              ((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 4), (4,)), ((2, 3, 0), (2, 0, 4))],
)  # fmt: skip
def test_matmul_serves_bfloat16_batches(xp, sa, sb):
    """CuPy 14.2 has no bfloat16 batched GEMM: ember's CuPy surface computes those in float32
    and rounds once, which is the reference's result (NumPy's bfloat16 matmul also sums in
    float32)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(BF16)
    b = rng.standard_normal(sb).astype(BF16)
    raw = _cupy_14_2(xp)
    with pytest.raises(TypeError, match="'E'"):
        MatMul().forward(raw, a, b)
    got = run(MatMul(), cupy_surface(raw), a, b)
    want = MatMul().forward(np, a, b)
    assert got.dtype == BF16 and got.shape == want.shape
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


# -- backends switches ------------------------------------------------------------------------


def test_backend_switch_defaults_follow_pytorch():
    assert ember.get_float32_matmul_precision() == "highest"
    assert ember.backends.cuda.matmul.allow_tf32 is False
    assert ember.backends.cudnn.allow_tf32 is True
    assert ember.backends.cudnn.enabled is True
    assert ember.backends.cudnn.benchmark is False
    assert ember.backends.cudnn.deterministic is False


def test_matmul_precision_names():
    try:
        for name, tf32 in (("high", True), ("medium", True), ("highest", False)):
            ember.set_float32_matmul_precision(name)
            assert ember.backends.cuda.matmul.allow_tf32 is tf32
        ember.backends.cuda.matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == "high"
        with pytest.raises(ValueError, match="expected one of 'highest', 'high', 'medium'"):
            ember.set_float32_matmul_precision("tf32")
    finally:
        ember.set_float32_matmul_precision("highest")


def test_cudnn_flags_context_restores():
    with ember.backends.cudnn.flags(enabled=False, allow_tf32=False, deterministic=True):
        assert not ember.backends.cudnn.enabled and not ember.backends.cudnn.allow_tf32
        assert ember.backends.cudnn.deterministic
    assert ember.backends.cudnn.enabled and ember.backends.cudnn.allow_tf32
    assert not ember.backends.cudnn.deterministic


# -- convolution: cuDNN frontend graphs (stand-in frontend) and the im2col fallback ----------

CONV_CONFIGS = [
    ((2, 3, 6, 6), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 9, 8), (6, 2, 3, 3), (2, 1), (2, 1), (2, 1), 2),
    ((1, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4),
    ((2, 4, 5, 5), (3, 4, 1, 1), (2, 2), (0, 0), (1, 1), 1),
]


def _conv_arrays(xs, ws, p):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    y = C.Conv2d(*p).forward(np, x, w)
    g = rng.standard_normal(y.shape).astype(np.float32)
    return x, w, np.ascontiguousarray(y), g


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONV_CONFIGS)
def test_cudnn_graphs_compute_the_three_convolutions(xp, fake_cudnn, xs, ws, stride, padding,
                                                     dilation, groups):  # fmt: skip
    p = (stride, padding, dilation, groups)
    x, w, y, g = _conv_arrays(xs, ws, p)
    got = run(C.Conv2d(*p), xp, x, w)
    np.testing.assert_allclose(got, y, rtol=1e-4, atol=1e-4)
    dx = run(C.Conv2dGradInput(xs, *p), xp, g, w)
    np.testing.assert_allclose(dx, C.Conv2dGradInput(xs, *p).forward(np, g, w), 1e-4, 1e-4)
    dw = run(C.Conv2dGradWeight(ws, *p), xp, x, g)
    np.testing.assert_allclose(dw, C.Conv2dGradWeight(ws, *p).forward(np, x, g), 1e-4, 1e-4)
    kinds = [d for e, d in fake_cudnn.log if e == "execute"]
    assert kinds == ["fprop", "dgrad", "wgrad"]
    assert [d for e, d in fake_cudnn.log if e == "direct"] == kinds  # the backend's raw entry
    assert ("deselect", ("TENSOR_CORE",)) not in fake_cudnn.log  # TF32 allowed by default


def test_cudnn_graphs_fall_back_to_the_frontends_execute(xp, fake_cudnn, monkeypatch):
    """A frontend whose backend graph refuses the raw-pointer call (another version): its
    ordered execute serves from then on, with the same results."""

    def refuse(self, *args):
        raise TypeError("incompatible function arguments")

    monkeypatch.setattr(fake_cudnn._Lowered, "_execute_with_raw_ptrs", refuse)
    p = ((1, 1), (1, 1), (1, 1), 1)
    x, w, y, _ = _conv_arrays((2, 3, 5, 5), (4, 3, 3, 3), p)
    for _ in range(2):
        np.testing.assert_allclose(run(C.Conv2d(*p), xp, x, w), y, rtol=1e-4, atol=1e-4)
    assert not kconv._direct[0]
    assert [e for e, _ in fake_cudnn.log if e in ("direct", "ordered")] == ["ordered"] * 2


def test_cudnn_graph_is_cached_and_channels_last_is_described(xp, fake_cudnn):
    p = ((1, 1), (1, 1), (1, 1), 1)
    x, w, y, _ = _conv_arrays((2, 3, 5, 5), (4, 3, 3, 3), p)
    x_cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # NHWC memory
    for arr in (x, x, x_cl):
        np.testing.assert_allclose(run(C.Conv2d(*p), xp, arr, w), y, rtol=1e-4, atol=1e-4)
    graphs = [e for e, _ in fake_cudnn.log if e == "graph"]
    assert len(graphs) == 2  # one per layout, reused for the repeat


def test_cudnn_switches_filter_plans(xp, fake_cudnn):
    p = ((1, 1), (0, 0), (1, 1), 1)
    x, w, y, _ = _conv_arrays((1, 2, 4, 4), (2, 2, 3, 3), p)
    with ember.backends.cudnn.flags(allow_tf32=False, deterministic=True):
        run(C.Conv2d(*p), xp, x, w)
    assert ("deselect", ("TENSOR_CORE", "NONDET")) in fake_cudnn.log
    fake_cudnn.log.clear()
    with ember.backends.cudnn.flags(enabled=False):  # off: the override declines, im2col runs
        assert kconv.fprop(xp, x, w, *p) is NotImplemented
        np.testing.assert_allclose(run(C.Conv2d(*p), xp, x, w), y, rtol=1e-5, atol=1e-5)
    assert not fake_cudnn.log


def test_cudnn_without_a_plan_falls_back_once_with_a_warning(xp, fake_cudnn):
    fake_cudnn.fail_build[0] = True
    p = ((1, 1), (1, 1), (1, 1), 1)
    x, w, y, _ = _conv_arrays((1, 2, 4, 4), (3, 2, 3, 3), p)
    with pytest.warns(RuntimeWarning, match="cuDNN has no plan for conv fprop"):
        got = run(C.Conv2d(*p), xp, x, w)
    np.testing.assert_allclose(got, y, rtol=1e-5, atol=1e-5)
    run(C.Conv2d(*p), xp, x, w)  # remembered: no second build, no second warning
    assert sum(e == "graph" for e, _ in fake_cudnn.log) == 1


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONV_CONFIGS)
def test_im2col_path_runs_on_a_non_numpy_module(xp, xs, ws, stride, padding, dilation, groups):
    """Without cuDNN the GPU runs ember's im2col code on CuPy: same results as on NumPy."""
    p = (stride, padding, dilation, groups)
    x, w, y, g = _conv_arrays(xs, ws, p)
    np.testing.assert_allclose(run(C.Conv2d(*p), xp, x, w), y, rtol=1e-5, atol=1e-5)
    dx = run(C.Conv2dGradInput(xs, *p), xp, g, w)
    np.testing.assert_allclose(dx, C.Conv2dGradInput(xs, *p).forward(np, g, w), 1e-5, 1e-5)
    dw = run(C.Conv2dGradWeight(ws, *p), xp, x, g)
    np.testing.assert_allclose(dw, C.Conv2dGradWeight(ws, *p).forward(np, x, g), 1e-4, 1e-4)


# -- every variant compiles for a GPU (NVRTC, no device needed) -------------------------------
# Each kernel the tests launch is compiled by NVRTC on its first launch (``_nvrtc``); these are
# the row and optimizer variants spelt out, whether a test launches them or not.

ADAM_SGD = [("adam", (a, d)) for a in (False, True) for d in (False, True)]  # kernel variants
ADAM_SGD += [("sgd", v) for v in ((False, False), (True, False), (True, True))]
STORAGES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


@pytest.mark.skipif(not _nvrtc.available(), reason="needs CuPy, NVRTC and CUDA's headers")
@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_row_and_optimizer_variants_compile_with_nvrtc(storage):
    for kind, (_, name) in rows._BODIES.items():
        for log in (False, True) if kind == "softmax" else (False,):
            _nvrtc.check_raw(rows.source(kind, storage, rows.BLOCK, log), name)
    sources = [{"adam": koptim.adam_source, "sgd": koptim.sgd_source}[k](*v) for k, v in ADAM_SGD]
    sources += [koptim.rmsprop_source(c, m) for c in (False, True) for m in (False, True)]
    dtype = np.dtype(STORAGES[storage])
    for i, src in enumerate(sources):
        ins, outs, op = koptim.specialize(src, kernels.acc_dtype(dtype))
        params = [p.split() for p in f"{ins}, {outs}".split(", ")]
        types = tuple(dtype if len(t) == 1 else np.dtype(t) for t, _ in params)
        layouts = tuple((1, True) if len(t) == 1 else None for t, _ in params)
        _nvrtc.check_elementwise((ins, outs, op, f"ember_opt{i}", ""), types, layouts, 1, {})


@pytest.mark.skipif(not _nvrtc.available(), reason="needs CuPy, NVRTC and CUDA's headers")
@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_register_rows_and_many_parameter_updates_use_no_local_memory(storage):
    """ptxas's report: a row held in registers stays there (no stack frame, no spills) for every
    piece count, read and written as 16-byte pieces (``ld/st.global.v4`` in the PTX), and the
    many-parameter updates pick their slot's arguments without copying them to a local array
    (which had cost 640-896 bytes of stack a thread)."""
    for kind in ("softmax_registers", "layer_norm_registers", "layer_norm_grad_registers"):
        for rv in range(1, rows.REGISTER_PIECES + 1):
            vec = 16 // np.dtype(STORAGES[storage]).itemsize
            src = rows.source(kind, storage, rows.BLOCK, kind == "softmax_registers", vec, rv)
            report = _nvrtc.check_raw(src, rows._BODIES[kind][1])
            assert (report.stack, report.spills) == (0, 0), (kind, rv, report)
        text = _nvrtc.ptx(src)  # and it is read and written as 16-byte pieces
        for access in ("ld", "st"):
            assert re.search(access + _nvrtc.SIXTEEN_BYTES, text), (kind, access)
    if storage == "f16":
        return  # the many-parameter updates serve float32, float64 and bfloat16
    dtype = np.dtype(STORAGES[storage]).name
    for kind, variant in ADAM_SGD:
        report = _nvrtc.check_raw(koptim_many._source(kind, variant, dtype), f"ember_{kind}_many")
        assert (report.stack, report.spills) == (0, 0), (kind, variant, report)
