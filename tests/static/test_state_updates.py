"""``passes.merge_state_updates``: a parameter's fused moment updates are computed by the fused
node that reads them and written into their state in place (one kernel per parameter).

Compiled optimizer steps equal the graph without the pass and eager steps (numba and NumPy
paths, a strided state that the kernel can't write, and the fake CuPy's g++ kernels); graphs
where folding would change a result are left alone.
"""

import numpy as np
import pytest

import ember
from ember.backend import jit as _jit
from ember.ops import elementwise as ew
from ember.static import Graph, passes
from ember.static.executor import Plan
from ember.static.ir import Assign
from ember.static.passes import fuse
from ember.static.passes.fuse import FusedElementwise
from ember.static.passes.fused_renderers import cuda_source, numba_source
from ember.static.trace import ArrayRef
from tests.static._steps import batches, compiled_equals_eager, mlp_pair, train_step
from tests.static.test_passes import Bump

F32 = np.dtype(np.float32)
SHAPE = (6, 4)
WITHOUT = [p for p in passes.PIPELINE if p is not passes.merge_state_updates]


# -- graphs: m' = m * b + g stored into m, p' = p - m' stored into p ------------------------------


def _moment_graph(between=None, m_array=None, m_out=False, second_reader=False):
    g = Graph("moment")
    rng = np.random.default_rng(0)
    grad = g.add_input(SHAPE, F32, "g")
    m_arr = rng.standard_normal(SHAPE).astype(F32) if m_array is None else m_array
    m = g.add_state(SHAPE, F32, ArrayRef(m_arr), "m")
    p = g.add_state(SHAPE, F32, ArrayRef(rng.standard_normal(SHAPE).astype(F32)), "p")
    b = g.add_constant(np.asarray(0.9, F32))
    new_m = g.add_node(ew.ADD, [g.add_node(ew.MUL, [m, b], SHAPE, F32), grad], SHAPE, F32)
    if between == "bump":
        g.add_node(Bump(), [grad], SHAPE, F32)
    half = g.add_node(ew.MUL, [new_m, b], SHAPE, F32)
    new_p = g.add_node(ew.SUB, [p, half], SHAPE, F32)
    if second_reader:
        g.outputs.append(g.add_node(ew.ADD, [new_m, b], SHAPE, F32))
    if m_out:
        g.outputs.append(new_m)
    g.add_node(Assign(), [m, new_m], SHAPE, F32)
    g.add_node(Assign(), [p, new_p], SHAPE, F32)
    return g


def _run(g):
    """The state arrays after one run, on copies (the graph's own arrays stay as they are)."""
    state = [v.ref.array.copy() for v in g.state]
    if any(not v.ref.array.flags.c_contiguous for v in g.state):  # keep a strided state strided
        state = [_strided_copy(v.ref.array) for v in g.state]
    effects = [n.output for n in g.nodes if type(n.op) is Assign]
    feed = np.linspace(-1, 1, np.prod(SHAPE), dtype=F32).reshape(SHAPE)
    _, stores = Plan(g, effects).run([feed], state)
    arrays = dict(zip((v.id for v in g.state), state))
    for v, a in stores:
        if arrays[v.id] is not a:
            arrays[v.id][...] = a
    return {v.name: arrays[v.id] for v in g.state}


def _strided_copy(a):
    if a.flags.c_contiguous:
        return a.copy()
    out = np.empty((a.shape[0], 2 * a.shape[1]), a.dtype)[:, ::2]
    out[...] = a
    return out


def _fused(g):
    return [n for n in g.nodes if type(n.op) is FusedElementwise]


def test_a_moment_update_folds_into_the_parameter_update(jit):
    g = _moment_graph()
    out = passes.optimize(g)
    (k,) = _fused(out)
    ((_, i),) = k.op.extra
    assert k.inputs[i].name == "m" and k.op.expr.startswith(f"x{i}' = "), str(out)
    assert [type(n.op).__name__ for n in out.nodes] == ["FusedElementwise", "Assign"]
    want = _run(passes.optimize(g, WITHOUT))
    got = _run(out)
    if jit == "sync":
        passes.wait_for_kernels()
        assert k.op._kernel and k.op._kernel.fn is not None
        assert_same(_run(out), want)
    assert_same(got, want)


def assert_same(got, want):
    for name in ("m", "p"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize(
    "case", ["bump", "output", "second_reader"], ids=["state_write_between", "m_out", "reader2"]
)
def test_no_fold_where_it_would_change_a_result(case):
    g = _moment_graph(
        between="bump" if case == "bump" else None,
        m_out=case == "output",
        second_reader=case == "second_reader",
    )
    out = passes.optimize(g)
    assert not any(k.op.extra for k in _fused(out)), str(out)


def test_a_strided_state_is_written_by_the_numpy_steps(jit):
    """A moment state the kernel can't write in place (a strided view) takes the NumPy steps."""
    base = np.random.default_rng(3).standard_normal((SHAPE[0], 2 * SHAPE[1])).astype(F32)
    g = _moment_graph(m_array=base[:, ::2])
    out = passes.optimize(g)
    assert any(k.op.extra for k in _fused(out))
    want = _run(passes.optimize(_moment_graph(m_array=base[:, ::2].copy()), WITHOUT))
    _run(out)
    passes.wait_for_kernels()
    got = _run(out)
    assert not got["m"].flags.c_contiguous
    assert_same(got, want)


def test_the_kernels_write_the_folded_state():
    g = _moment_graph()
    (k,) = _fused(passes.optimize(g))
    op, names = k.op, [v.dtype.name for v in k.inputs]
    (j, i), = op.extra  # fmt: skip
    ins, outs, src = cuda_source(op.program, names, op.dtype, op.types, op.extra)
    assert f"x{i}" not in ins and outs == f"float32 out, float32 x{i}"
    assert f"x{i} = t{j};" in src
    if _jit.available():
        shapes = [v.shape for v in k.inputs]
        py, _ = numba_source(op.program, op.shape, op.dtype, names, shapes, -1, (), op.extra)
        rw = f"rw('float32', {len(op.shape)})"  # the kernel takes arrays in their own shapes
        assert f"x{i}[i0] = t{j}" in py and py.count(rw) == 2  # x{i} and out


# -- compiled optimizer steps --------------------------------------------------------------------

OPTIMIZERS = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.05)),
    ("NAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=1.0)),  # its delta feeds two updates: kernels stay separate
    ("SGD", dict(lr=0.1, momentum=0.9)),
]
SEPARATE = {"Adadelta"}


@pytest.mark.parametrize(
    "name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)]
)
def test_a_compiled_step_equals_eager_with_one_kernel_per_parameter(name, kwargs, jit):
    o1, o2, step = compiled_equals_eager(name, kwargs)
    for (_, s1), s2 in zip(o1.state.items(), o2.state.values()):
        for key, v in s1.items():
            if isinstance(v, ember.Tensor):
                np.testing.assert_allclose(s2[key].numpy(), v.numpy(), rtol=1e-5, atol=1e-7)
    if name in SEPARATE:
        return
    # every per-parameter state tensor (moments, buffers) is written by the parameter's
    # kernel: no store of one is left, and one kernel writes each parameter
    g = step.optimized_graph
    stored = [n.inputs[0] for n in g.nodes if type(n.op) is Assign]
    moments = [v for v in stored if v.shape and (v.name or "state.").startswith("state.")]
    assert not moments, str(g)
    params = {v.id for v in stored if v.shape and not (v.name or "").endswith(".grad")}
    writers = [k for k in _fused(g) if k.op.reuse >= 0 and k.inputs[k.op.reuse].id in params]
    assert len(writers) == len(params) == 4, str(g)
    written = sum(len(k.op.extra) for k in writers)
    assert written == sum(
        1 for s in o2.state.values() for v in s.values() if isinstance(v, ember.Tensor) and v.ndim
    )


@pytest.mark.gpu
@pytest.mark.fake_kernels
def test_a_compiled_adam_step_on_cuda_writes_the_moments_from_one_kernel(gpu):
    """Also: the float64 0-d prologue (bias corrections) runs inside the float32 kernels."""
    m1, m2 = mlp_pair()
    m2.to("cuda")
    o1 = ember.optim.Adam(m1.parameters(), lr=0.01)
    o2 = ember.optim.Adam(m2.parameters(), lr=0.01)
    step = ember.compile(train_step)
    fuse._CUPY_KERNELS.clear()
    for x, y in batches(n=3):
        want = train_step(m1, o1, x, y)
        got = step(m2, o2, x.to("cuda"), y.to("cuda"))
        np.testing.assert_allclose(got.cpu().numpy(), want.detach().numpy(), rtol=1e-5)
        for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values()):
            np.testing.assert_allclose(b.cpu().numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    for s1, s2 in zip(o1.state.values(), o2.state.values()):
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(s2[key].cpu().numpy(), s1[key].numpy(), rtol=1e-5, atol=1e-7)
    assert any(key[-1] for key in fuse._CUPY_KERNELS), list(fuse._CUPY_KERNELS)
    mixed = [k for k in fuse._CUPY_KERNELS if "float64" in k[2] and k[3] == "float32"]
    assert mixed, list(fuse._CUPY_KERNELS)
