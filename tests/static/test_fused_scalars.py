"""Elementwise fusion of 0-d values (``passes.fuse``): a 0-d chain a kernel reads (Adam's
hyperparameter casts and bias corrections, ``1 - beta2 ** step``) is recomputed inside every
kernel that reads it, in its own dtype (float64 stays double), so a compiled Adam step keeps
no standalone 0-d elementwise node but the step counters it stores. Values equal the unfused
graph, eager ember and ``torch.optim.Adam``; the CUDA kernels run on the fake CuPy's g++
(``test_state_updates``).
"""

import collections

import numpy as np
import pytest

import ember
from ember import dtypes
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

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
SHAPE = (8, 5)


def _bias_corrected(g, with_bump=False):
    """``p - m * cast(lr / (1 - beta ** (t + 1)))`` and ``v * cast(1 - beta)``, with ``t + 1``
    stored back into ``t`` (Adam's shape): 0-d float64 state read by two float32 kernels."""
    p = g.add_input(SHAPE, F32, "p")
    m = g.add_input(SHAPE, F32, "m")
    t = g.add_state((), F64, ArrayRef(np.asarray(3.0)), "t")
    beta = g.add_state((), F64, ArrayRef(np.asarray(0.9)), "beta")
    lr = g.add_state((), F64, ArrayRef(np.asarray(0.01)), "lr")
    one = g.add_constant(np.asarray(1.0))

    def scalar(op, *xs, d=F64):
        return g.add_node(op, list(xs), (), d)

    t1 = scalar(ew.ADD, t, one)
    if with_bump:  # a state write between the 0-d chain and its readers
        g.add_node(Bump(), [m], SHAPE, F32)
    om = scalar(ew.SUB, one, beta)
    bias = scalar(ew.SUB, one, scalar(ew.POW, beta, t1))
    corr = scalar(ew.Cast(dtypes.float32), scalar(ew.DIV, lr, bias), d=F32)
    step = g.add_node(ew.MUL, [m, corr], SHAPE, F32)
    new_p = g.add_node(ew.SUB, [p, step], SHAPE, F32)
    new_m = g.add_node(ew.MUL, [m, scalar(ew.Cast(dtypes.float32), om, d=F32)], SHAPE, F32)
    g.add_node(Assign(), [t, t1], (), F64)
    g.outputs += [new_p, new_m]
    return g


def _feeds():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(SHAPE).astype(F32) for _ in range(2)]


def _run(g, feeds):
    effects = [n.output for n in g.nodes if type(n.op) is Assign]
    state = [v.ref.array for v in g.state]
    outs, stores = Plan(g, g.outputs + effects).run(list(feeds), state)
    return outs[: len(g.outputs)], {v.name: a for v, a in stores}


def _scalar_elementwise(g):
    """Type names of the 0-d elementwise nodes left in ``g`` (fused or not; an op written into
    its state array, ``InPlace``, by its own name)."""
    scalars = [n.op for n in g.nodes if n.output.shape == ()]
    ops = [op.op if type(op) is passes.InPlace else op for op in scalars]
    return sorted(
        type(op).__name__ for op in ops if type(op) in fuse.FUSABLE or type(op) is FusedElementwise
    )


def test_0d_chains_are_recomputed_in_each_kernel_that_reads_them(jit):
    g = _bias_corrected(Graph("adam_like"))
    out = passes.elementwise_fusion(g)
    # two kernels; the stored step counter stays (the Assign reads it), nothing else 0-d does
    assert _scalar_elementwise(out) == ["Add"], str(out)
    kernels = [n for n in out.nodes if type(n.op) is FusedElementwise]
    assert len(kernels) == 2 and len(out.nodes) == 4
    (upd,) = [k for k in kernels if "**" in k.op.expr]
    assert upd.op.expr == "x5 - x4 * cast(x3 / (x1 - x2 ** (x0 + x1)))"
    assert ("float64", ()) in upd.op.types and upd.op.types[-1] == ("float32", SHAPE)
    feeds = _feeds()
    want, want_stores = _run(g, feeds)
    got, got_stores = _run(out, feeds)
    if jit == "sync":
        assert all(k.op._kernel and k.op._kernel.fn is not None for k in kernels)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert got_stores["t"] == want_stores["t"] == 4.0


def test_a_0d_chain_is_not_moved_across_a_state_write():
    g = _bias_corrected(Graph("bumped"), with_bump=True)
    out = passes.elementwise_fusion(g)
    # ``t + 1`` is computed before the Bump: the kernels read it, they do not recompute it
    for n in out.nodes:
        if type(n.op) is FusedElementwise and n.output.shape:
            assert "t" not in [v.name for v in n.inputs], str(out)
    assert "Add" in [type(n.op).__name__ for n in out.nodes]


def test_the_0d_prologue_runs_before_the_loops_in_double():
    g = _bias_corrected(Graph("adam_like"))
    (upd,) = [n for n in passes.elementwise_fusion(g).nodes if "**" in getattr(n.op, "expr", "")]
    op, names = upd.op, [v.dtype.name for v in upd.inputs]
    ins, _, src = cuda_source(op.program, names, op.dtype, op.types)
    assert "double t" in src and "float t" in src and "pow(" in src
    assert ins.count("float64") == 4
    if _jit.available():
        py, _ = numba_source(op.program, op.shape, op.dtype, names, [v.shape for v in upd.inputs])
        loop = py.index("for i0")
        assert py.index(" ** ") < loop  # the 0-d values: once, before the loop


# -- compiled Adam steps -------------------------------------------------------------------------


ADAMS = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.05)),
]


@pytest.mark.parametrize("name,kwargs", ADAMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ADAMS)])
def test_a_compiled_adam_step_keeps_no_0d_prologue_and_equals_eager(name, kwargs, jit):
    _, _, step = compiled_equals_eager(name, kwargs)
    g = step.optimized_graph
    # 0-d elementwise nodes left: per parameter the step counter's ``t + 1`` (stored: written
    # in place after the kernels, which recompute it from the old count), and the loss's mean
    counts = collections.Counter(_scalar_elementwise(g))
    assert counts == {"Add": 4, "Div": 1}, str(g)
    assert step.traces == 1


def test_a_compiled_adam_step_equals_the_unfused_graph_and_torch(jit):
    torch = pytest.importorskip("torch")
    m1, m2 = mlp_pair()
    opt = ember.optim.Adam(m1.parameters(), lr=0.01)
    o2 = ember.optim.Adam(m2.parameters(), lr=0.01)
    fused, plain = ember.compile(train_step), ember.compile(train_step, optimize=False)
    tm = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    with torch.no_grad():
        for p, (_, v) in zip(tm.parameters(), m1.state_dict().items()):
            p.copy_(torch.from_numpy(v.numpy().copy()))
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    for x, y in batches(n=6):
        a = fused(m1, opt, x, y)
        b = plain(m2, o2, x, y)
        passes.wait_for_kernels()
        topt.zero_grad()
        tl = torch.nn.functional.mse_loss(
            tm(torch.from_numpy(x.numpy())), torch.from_numpy(y.numpy())
        )
        tl.backward()
        topt.step()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(a.detach().numpy(), tl.item(), rtol=1e-5)
    for (k, p), q, t in zip(m1.state_dict().items(), m2.state_dict().values(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-7, err_msg=k)
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
