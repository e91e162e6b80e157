"""Elementwise fusion of float16 / bfloat16 chains: which nodes fuse, the CUDA C made for them
(16-bit values as uint16 bits, float arithmetic, one rounding at the store), the CPU path
(NumPy steps, op by op: equal to the unfused graph) and the GPU path on the fake CuPy, whose
``ElementwiseKernel`` compiles the generated source with g++ (``tests/_fakecupy/_kernels.py``).
The single-op table of every renderer over these dtypes is in ``test_fusion_table.py``.
"""

import ml_dtypes
import numpy as np
import pytest

import ember
from ember import dtypes
from ember.backend import jit as _jit
from ember.backend import overrides
from ember.ops import elementwise as ew
from ember.static import Graph, passes
from ember.static.executor import Plan
from ember.static.passes import fuse
from ember.static.passes.fuse import FusedElementwise, fusable
from ember.static.passes.fused_renderers import cuda_preamble, cuda_source

BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
F32, F64, B = np.dtype(np.float32), np.dtype(np.float64), np.dtype(bool)
HALVES = [pytest.param(BF16, id="bfloat16"), pytest.param(F16, id="float16")]
SHAPE = (6, 5)
ULP = {BF16: 2.0**-8, F16: 2.0**-11}  # half a unit in the last place, relative


def _chain(g, x, b, y, d):
    """``(sigmoid(relu(x + b) * cast(y)) * 2 - x) / (exp(h) + 1)``, with a broadcast bias and
    a float32 input cast to ``d``."""
    c2, c1 = g.add_constant(np.asarray(2.0, d)), g.add_constant(np.asarray(1.0, d))

    def node(op, *xs):
        return g.add_node(op, list(xs), SHAPE, d)

    h = node(ew.MUL, node(ew.Relu(), node(ew.ADD, x, b)), node(ew.Cast(dtypes.to_dtype(d)), y))
    top = node(ew.SUB, node(ew.MUL, node(ew.Sigmoid(), h), c2), x)
    return node(ew.DIV, top, node(ew.ADD, node(ew.EXP, h), c1))


def _graph(d):
    g = Graph("f")
    x, b = g.add_input(SHAPE, d, "x"), g.add_input(SHAPE[1:], d, "b")
    y = g.add_input(SHAPE, F32, "y")
    g.outputs.append(_chain(g, x, b, y, d))
    return g


def _feeds(d, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (rng.standard_normal(SHAPE) * 2).astype(d),
        rng.standard_normal(SHAPE[1:]).astype(d),
        rng.standard_normal(SHAPE).astype(F32),
    ]


def _run(g, feeds):
    return Plan(g, g.outputs).run(list(feeds), [])[0][0]


# -- which nodes fuse --------------------------------------------------------------------------


def _one(op, in_dtypes, out_dtype):
    g = Graph("f")
    xs = [g.add_input(SHAPE, d, f"x{i}") for i, d in enumerate(in_dtypes)]
    return g.add_node(op, xs, SHAPE, out_dtype).node


@pytest.mark.parametrize("d", HALVES)
def test_fusable_takes_16_bit_floats_and_casts_between_floats(d):
    half = dtypes.to_dtype(d)
    assert fusable(_one(ew.ADD, [d, d], d)) and fusable(_one(ew.Sigmoid(), [d], d))
    assert fusable(_one(ew.Where(), [B, d, d], d)) and fusable(_one(ew.ReluGrad(), [d, d], d))
    assert fusable(_one(ew.Cast(half), [F32], d))  # float32 -> 16-bit
    assert fusable(_one(ew.Cast(half), [B], d))  # bool -> 16-bit
    assert fusable(_one(ew.Cast(dtypes.float32), [d], F32))  # 16-bit -> float32
    assert fusable(_one(ew.Cast(dtypes.float64), [d], F64))
    other = BF16 if d == F16 else F16
    assert fusable(_one(ew.Cast(half), [other], d))  # float16 <-> bfloat16
    assert fusable(_one(ew.Cast(half), [F64], d))  # through float32, as Cast and PyTorch round
    assert not fusable(_one(ew.Cast(half), [np.dtype(np.int32)], d))  # as for float32
    assert not fusable(_one(ew.SIN, [d], d))  # no scalar expression


@pytest.mark.parametrize("d", HALVES)
def test_a_16_bit_chain_becomes_one_node_and_a_lone_op_stays(d):
    out = passes.elementwise_fusion(_graph(d))
    (node,) = [n for n in out.nodes if type(n.op) is FusedElementwise]
    assert node.op.dtype == d.name and len(node.op.program) == 10
    assert [v.dtype for v in node.inputs][:3] == [d, d, F32]
    prev = _jit.set_mode("sync")  # with numba, one large float32 op alone is a kernel too...
    try:
        for dt, fused in ((F32, True), (d, False)):  # ...not a 16-bit one (numba has none)
            g = Graph("f")
            x = g.add_input((fuse.SINGLE_MIN,), dt, "x")
            g.outputs.append(g.add_node(ew.EXP, [x], x.shape, dt))
            ops = [type(n.op).__name__ for n in passes.elementwise_fusion(g).nodes]
            assert ops == (["FusedElementwise"] if fused and _jit.available() else ["Exp"])
    finally:
        _jit.set_mode(prev)


# -- the CUDA C ------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", HALVES)
def test_cuda_source_loads_to_float_and_rounds_once_at_the_store(d):
    (node,) = passes.elementwise_fusion(_graph(d)).nodes[-1:]
    names = [v.dtype.name for v in node.inputs]
    ins, outs, src = cuda_source(node.op.program, names, node.op.dtype)
    k = {BF16: "bf16", F16: "f16"}[d]
    assert ins == "uint16 x0, uint16 x1, float32 x2, uint16 x3, uint16 x4" and outs == "uint16 out"
    lines = src.splitlines()
    loads = [f"float a{i} = ember_ld_{k}(x{i});" for i in (0, 1, 3, 4)]
    assert lines[:4] == loads  # each 16-bit input widened once, first
    body = lines[4:-1]
    assert all(s.startswith("float t") for s in body)  # every step in float
    assert f"ember_ld_{k}(ember_st_{k}(x2))" in src  # the cast rounds to the 16-bit dtype
    assert "ember_st" not in "".join(s for s in body if "(x2)" not in s)  # no other rounding
    assert lines[-1] == f"out = ember_st_{k}(t{len(body) - 1});"
    pre = cuda_preamble(names, node.op.dtype)
    assert f"float ember_ld_{k}(unsigned short v)" in pre
    assert f"unsigned short ember_st_{k}(float v)" in pre
    assert ("ember_ld_bf16" in pre) == (d == BF16) and ("ember_ld_f16" in pre) == (d == F16)


def test_cuda_source_of_mixed_inputs_names_each_kinds_conversions():
    g = Graph("f")
    named = ((F16, "h"), (BF16, "bf"), (F32, "f"), (B, "m"))
    h, bf, f, m = (g.add_input(SHAPE, t, n) for t, n in named)
    c = g.add_node(ew.Cast(dtypes.float32), [h], SHAPE, F32)
    c2 = g.add_node(ew.Cast(dtypes.float32), [bf], SHAPE, F32)
    w = g.add_node(ew.Where(), [m, c, f], SHAPE, F32)
    g.outputs.append(g.add_node(ew.MUL, [w, c2], SHAPE, F32))
    (node,) = passes.elementwise_fusion(g).nodes
    names = [v.dtype.name for v in node.inputs]
    ins, outs, src = cuda_source(node.op.program, names, node.op.dtype)
    assert sorted(ins.split(", ")) == sorted(
        f"{'uint16' if n in ('float16', 'bfloat16') else n} x{i}" for i, n in enumerate(names)
    )
    assert outs == "float32 out" and src.splitlines()[-1].startswith("out = t")  # no rounding
    i16, ib = names.index("float16"), names.index("bfloat16")
    assert f"float a{i16} = ember_ld_f16(x{i16});" in src
    assert f"float a{ib} = ember_ld_bf16(x{ib});" in src
    pre = cuda_preamble(names, node.op.dtype)
    assert pre.count("__device__") == 4  # both kinds' load and store, each once
    assert cuda_preamble(["float32", "bool"], "float32") == ""


# -- the CPU: NumPy steps, op by op ------------------------------------------------------------


@pytest.mark.parametrize("d", HALVES)
def test_fused_16_bit_graph_on_the_cpu_equals_the_unfused_one(d):
    g = _graph(d)
    fused = passes.elementwise_fusion(g)
    feeds = _feeds(d)
    got, want = _run(fused, feeds), _run(g, feeds)
    assert got.dtype == d and got.shape == SHAPE
    np.testing.assert_array_equal(got.astype(F32), want.astype(F32))


@pytest.mark.parametrize("d", HALVES)
def test_compiled_16_bit_chain_on_the_cpu_equals_eager(d):
    half = dtypes.to_dtype(d)

    def f(x, b, y):
        h = (x + b).relu() * y.to(half)
        return (h.sigmoid() * 2.0 - x) / (h.exp() + 1.0)

    xs, bs, ys = _feeds(d, seed=1)
    x, b, y = ember.tensor(xs), ember.tensor(bs), ember.tensor(ys)
    assert x.dtype is half
    cf = ember.compile(f)
    got = cf(x, b, y)
    got = cf(x, b, y)  # a replay
    assert "FusedElementwise" in str(cf.optimized_graph)
    want = f(x, b, y)
    assert got.dtype is half  # op by op, as eager: the same roundings, the same values
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("d", HALVES)
def test_16_bit_numpy_steps_use_a_reused_input(d):
    g = _graph(d)
    op = passes.elementwise_fusion(g).nodes[-1].op.with_reuse(0)
    feeds = _feeds(d)
    want = _run(g, feeds)
    x = feeds[0].copy()
    got = overrides.run(op, np, x, *feeds[1:], np.asarray(2.0, d), np.asarray(1.0, d))
    assert not np.array_equal(x.astype(F32), feeds[0].astype(F32))  # x's buffer was used
    np.testing.assert_array_equal(got.astype(F32), want.astype(F32))


# -- the GPU path: real CuPy on a GPU, else the fake CuPy (g++-compiled ElementwiseKernel) --------


def _fused_op(d):
    (node,) = passes.elementwise_fusion(_graph(d)).nodes[-1:]
    return node.op


def _close_to_float32(got, feeds, d):
    """The kernel rounds once: within half an ulp (and a little) of the float32 result of the
    same 16-bit inputs."""
    x, b, y = feeds
    ref = _run(_graph(F32), [x.astype(F32), b.astype(F32), y.astype(d).astype(F32)])  # cast(y)
    np.testing.assert_allclose(got.astype(F32), ref, rtol=1.01 * ULP[d], atol=1e-6)


def _args(cp, d, seed):
    feeds = _feeds(d, seed)
    return feeds, [cp.asarray(a) for a in feeds + [np.asarray(2.0, d), np.asarray(1.0, d)]]


@pytest.mark.gpu
@pytest.mark.fake_kernels
@pytest.mark.parametrize("d", HALVES)
def test_gpu_kernel_takes_raw_bits_and_rounds_once(gpu, d):
    op = _fused_op(d)
    fuse._CUPY_KERNELS.clear()
    feeds, args = _args(gpu, d, seed=2)
    got = overrides.run(op, gpu, *args)
    assert type(got) is gpu.ndarray and got.dtype == d and got.shape == SHAPE
    ((key, (vectorized, kernel)),) = fuse._CUPY_KERNELS.items()
    assert key[2] == (d.name, d.name, "float32", d.name, d.name) and key[3] == d.name
    u16 = np.dtype(np.uint16)  # 16-bit parameters are uint16: the arrays' raw bits
    assert [p.dtype for p in kernel.in_params] == [u16, u16, F32, u16, u16]
    assert [p.dtype for p in kernel.out_params] == [u16]
    assert [t for t, _ in vectorized.ins] == [u16, u16, F32, u16, u16]
    assert vectorized._kernels  # contiguous operands: the 16-byte-access kernel ran
    _close_to_float32(gpu.asnumpy(got), feeds, d)


@pytest.mark.gpu
@pytest.mark.fake_kernels
@pytest.mark.parametrize("d", HALVES)
def test_gpu_kernel_writes_a_reused_input_in_place(gpu, d):
    feeds, args = _args(gpu, d, seed=3)
    fuse._CUPY_KERNELS.clear()
    fresh = overrides.run(_fused_op(d), gpu, *args)
    x = args[0]
    got = overrides.run(_fused_op(d).with_reuse(0), gpu, *args)
    assert got is x and len(fuse._CUPY_KERNELS) == 1  # the input's own memory, one kernel
    np.testing.assert_array_equal(gpu.asnumpy(x).astype(F32), gpu.asnumpy(fresh).astype(F32))
    _close_to_float32(gpu.asnumpy(x), feeds, d)


@pytest.mark.gpu
@pytest.mark.fake_kernels
@pytest.mark.parametrize("d", [F32, *HALVES])
def test_gpu_kernel_of_float16_bfloat16_float32_and_bool_inputs(gpu, d):
    """``where(m, cast(h) * cast(bf), f) + 1`` into ``d``: both 16-bit kinds in one kernel."""
    g = Graph("f")
    named = ((F16, "h"), (BF16, "bf"), (F32, "f"), (B, "m"))
    h, bf, f, m = (g.add_input(SHAPE, t, n) for t, n in named)
    dt = dtypes.to_dtype(d)

    def node(op, *xs):
        return g.add_node(op, list(xs), SHAPE, d)

    prod = node(ew.MUL, node(ew.Cast(dt), h), node(ew.Cast(dt), bf))
    w = node(ew.Where(), m, prod, node(ew.Cast(dt), f) if d != F32 else f)
    g.outputs.append(node(ew.ADD, w, g.add_constant(np.asarray(1.0, d))))
    fused = passes.elementwise_fusion(g)
    (node_,) = [n for n in fused.nodes if type(n.op) is FusedElementwise]
    rng = np.random.default_rng(6)
    feeds = [rng.standard_normal(SHAPE).astype(t) for t in (F16, BF16, F32)]
    feeds.append(rng.random(SHAPE) < 0.5)
    want = _run(g, feeds)  # op by op on the CPU
    by_id = dict(zip([v.id for v in g.inputs], feeds))
    ins = [gpu.asarray(by_id[v.id] if v.id in by_id else v.data) for v in node_.inputs]
    fuse._CUPY_KERNELS.clear()
    got = gpu.asnumpy(overrides.run(node_.op, gpu, *ins))
    assert got.dtype == d and len(fuse._CUPY_KERNELS) == 1  # the kernel ran
    tol = {F32: 1e-6}.get(d, 4 * ULP.get(d, 0))
    np.testing.assert_allclose(got.astype(F32), want.astype(F32), rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.fake_kernels
@pytest.mark.parametrize("d", HALVES)
def test_compiled_16_bit_chain_on_the_gpu_is_one_kernel(gpu, d):
    half = dtypes.to_dtype(d)

    def f(x, b, y):
        h = (x + b).relu() * y.to(half)
        return (h.sigmoid() * 2.0 - x) / (h.exp() + 1.0)

    xs, bs, ys = _feeds(d, seed=4)
    x, b, y = (ember.tensor(a).to("cuda") for a in (xs, bs, ys))
    fuse._CUPY_KERNELS.clear()
    cf = ember.compile(f)
    for _ in range(3):
        got = cf(x, b, y)
    assert got.dtype is half and got.device == ember.device("cuda")
    assert [k[3] for k in fuse._CUPY_KERNELS] == [d.name]
    want = f(x, b, y)  # eager: op by op, each rounding to the 16-bit dtype
    np.testing.assert_allclose(
        got.float().cpu().numpy(), want.float().cpu().numpy(), rtol=4 * ULP[d], atol=4 * ULP[d]
    )
