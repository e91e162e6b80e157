"""Each optimizer pass alone on small hand-built graphs: what it removes, merges, folds, fuses;
the memory plan; and the passes inside ``ember.compile``."""

from dataclasses import dataclass

import numpy as np
import pytest

import ember
from ember.backend import jit as _jit
from ember.backend import overrides
from ember.ops import elementwise as ew
from ember.ops.base import Op, Spec
from ember.ops.broadcast import Expand
from ember.ops.linalg import MatMul
from ember.ops.movement import Permute, Reshape
from ember.ops.random import DropoutMask
from ember.ops.reduce import Sum
from ember.static import Graph, passes
from ember.static.executor import Plan
from ember.static.ir import Assign

F32 = np.float32
F64 = np.float64


@dataclass(frozen=True)
class Bump(Op):
    """A test side effect: adds 1 to its input array in place while the graph runs."""

    has_side_effects = True
    differentiable = False

    def forward(self, xp, p):
        p += 1
        return p

    def infer(self, p):
        return Spec(tuple(p.shape), p.dtype)


def run(g, feeds, state=()):
    effects = [n.output for n in g.nodes if getattr(n.op, "has_side_effects", False)]
    outs, _ = Plan(g, g.outputs + effects).run(list(feeds), list(state))
    return outs[: len(g.outputs)]


def ops(g):
    return [type(n.op).__name__ for n in g.nodes]


@pytest.fixture
def no_jit():
    prev = _jit.set_mode("off")
    yield
    _jit.set_mode(prev)


# -- dead-code elimination ---------------------------------------------------------------------


def test_dce_drops_unused_nodes_and_constants():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    c = g.add_constant(np.ones(3, F32))
    dead = g.add_node(ew.ADD, [x, c], (3,), F32)
    g.add_node(ew.EXP, [dead], (3,), F32)
    g.outputs.append(g.add_node(ew.NEG, [x], (3,), F32))
    out = passes.dead_code_elimination(g)
    assert ops(out) == ["Neg"] and out.constants == []
    assert ops(g) == ["Add", "Exp", "Neg"]  # the input graph is not changed
    out.validate()


def test_dce_keeps_side_effects_and_what_they_read():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    s = g.add_state((3,), F32, name="s")
    e = g.add_node(ew.EXP, [x], (3,), F32)
    g.add_node(Assign(), [s, e], (3,), F32)
    g.add_node(DropoutMask((3,), 0.5), [x], (3,), F32)
    g.add_node(Bump(), [s], (3,), F32)
    g.add_node(ew.SIN, [x], (3,), F32)  # dead
    out = passes.dead_code_elimination(g)
    assert ops(out) == ["Exp", "Assign", "DropoutMask", "Bump"]


# -- common subexpressions ---------------------------------------------------------------------


def test_cse_merges_equal_op_and_inputs():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    a = g.add_node(Permute((0,)), [x], (3,), F32)
    b = g.add_node(Permute((0,)), [x], (3,), F32)
    c = g.add_node(Permute((0,)), [a], (3,), F32)  # another input: kept
    g.outputs += [g.add_node(ew.ADD, [a, b], (3,), F32), c]
    out = passes.common_subexpression_elimination(g)
    assert ops(out) == ["Permute", "Permute", "Add"]
    assert out.nodes[-1].inputs[0] is out.nodes[-1].inputs[1]
    xv = np.arange(3, dtype=F32)
    for got, want in zip(run(out, [xv]), run(g, [xv])):
        np.testing.assert_array_equal(got, want)


def test_cse_merges_equal_small_constants_first():
    """Each parameter's optimizer rule traces its own ``1.0``: one value, so ``1 - beta`` is
    computed once. Other dtypes, ``-0.0``, named and large constants stay apart."""
    g = Graph("f")
    b = g.add_input((), F64, "beta")
    ones = [g.add_constant(np.array(1.0)) for _ in range(2)]
    others = [
        g.add_constant(np.array(1.0, F32)),
        g.add_constant(np.array(-0.0)),
        g.add_constant(np.array(0.0)),
        g.add_constant(np.array(1.0), name="w"),
        g.add_constant(np.ones(17)),
        g.add_constant(np.ones(17)),
    ]
    g.outputs += [g.add_node(ew.SUB, [c, b], (), F64) for c in ones]
    out = passes.common_subexpression_elimination(g)
    assert ops(out) == ["Sub"] and out.outputs[0] is out.outputs[1]
    assert len(out.constants) == 1 + len(others)
    np.testing.assert_array_equal(run(out, [np.array(0.25)]), [0.75, 0.75])


def test_cse_never_merges_side_effects_nor_across_state_writes():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    p = g.add_state((3,), F32, name="p")
    m1 = g.add_node(DropoutMask((3,), 0.5), [x], (3,), F32)
    m2 = g.add_node(DropoutMask((3,), 0.5), [x], (3,), F32)
    before = g.add_node(ew.EXP, [p], (3,), F32)
    g.add_node(Bump(), [p], (3,), F32)
    after = g.add_node(ew.EXP, [p], (3,), F32)  # reads p after the update: not the same value
    g.outputs += [m1, m2, before, after]
    out = passes.common_subexpression_elimination(g)
    assert ops(out) == ["DropoutMask", "DropoutMask", "Exp", "Bump", "Exp"]
    pv = np.zeros(3, F32)
    got = run(out, [np.ones(3, F32)], [pv])
    np.testing.assert_allclose(got[2], 1.0)
    np.testing.assert_allclose(got[3], np.e, rtol=1e-6)


# -- constant folding --------------------------------------------------------------------------


def test_constant_folding_evaluates_constant_subgraphs():
    g = Graph("f")
    x = g.add_input((2, 3), F32, "x")
    c = g.add_constant(np.full((), 4.0, F32))
    r = g.add_node(ew.SQRT, [c], (), F32)
    e = g.add_node(Reshape((1, 1)), [r], (1, 1), F32)
    big = g.add_constant(np.ones(300_000, F32))
    b2 = g.add_node(ew.NEG, [big], (300_000,), F32)  # over the 1 MiB limit: not folded
    rnd = g.add_node(DropoutMask((2, 3), 0.5), [c], (2, 3), F32)  # random: not folded
    g.outputs += [g.add_node(ew.MUL, [x, e], (2, 3), F32), b2, rnd]
    out = passes.constant_folding(g)
    assert ops(out) == ["Neg", "DropoutMask", "Mul"]
    folded = out.nodes[-1].inputs[1]
    assert folded.kind == "const" and folded.id == e.id
    np.testing.assert_array_equal(folded.data, [[2.0]])
    assert folded.data.dtype == F32 and not folded.data.flags.writeable
    xv = np.ones((2, 3), F32)
    np.testing.assert_array_equal(run(out, [xv])[0], 2 * xv)


# -- algebraic simplification ------------------------------------------------------------------


def _simplified(build, shape=(2, 3), dtype=F32):
    g = Graph("f")
    x = g.add_input(shape, dtype, "x")
    y = build(g, x)
    g.outputs.append(g.add_node(ew.EXP, [y], y.shape, y.dtype))
    return g, passes.algebraic_simplification(g)


@pytest.mark.parametrize(
    "op, value, const_first",
    [(ew.MUL, 1, False), (ew.MUL, 1, True), (ew.ADD, 0, False), (ew.ADD, 0, True),
     (ew.SUB, 0, False), (ew.DIV, 1, False)],
)  # fmt: skip
def test_simplify_identities(op, value, const_first):
    def build(g, x):
        c = g.add_constant(np.full((), value, F32))
        return g.add_node(op, [c, x] if const_first else [x, c], x.shape, F32)

    g, out = _simplified(build)
    assert ops(out) == ["Exp"] and out.nodes[0].inputs[0] is out.inputs[0]


def test_simplify_keeps_identities_that_broadcast():
    def build(g, x):
        c = g.add_constant(np.ones((4, 2, 3), F32))
        return g.add_node(ew.MUL, [x, c], (4, 2, 3), F32)

    _, out = _simplified(build)
    assert ops(out) == ["Mul", "Exp"]


def test_simplify_no_op_shape_and_dtype_ops():
    def build(g, x):
        y = g.add_node(Reshape((2, 3)), [x], (2, 3), F32)
        y = g.add_node(Expand((2, 3)), [y], (2, 3), F32)
        y = g.add_node(ew.Cast(ember.float32), [y], (2, 3), F32)
        y = g.add_node(Sum(axis=()), [y], (2, 3), F32)
        y = g.add_node(ew.NEG, [y], (2, 3), F32)
        return g.add_node(ew.NEG, [y], (2, 3), F32)

    _, out = _simplified(build)
    assert ops(out) == ["Exp"] and out.nodes[0].inputs[0] is out.inputs[0]


def test_simplify_permute_and_reshape_chains():
    def build(g, x):
        y = g.add_node(Permute((2, 0, 1)), [x], (4, 2, 3), F32)
        y = g.add_node(Permute((1, 0, 2)), [y], (2, 4, 3), F32)
        y = g.add_node(Reshape((8, 3)), [y], (8, 3), F32)
        return g.add_node(Reshape((24,)), [y], (24,), F32)

    g, out = _simplified(build, shape=(2, 3, 4))
    assert ops(out) == ["Permute", "Reshape", "Exp"]
    assert out.nodes[0].op == Permute((0, 2, 1)) and out.nodes[0].inputs[0] is out.inputs[0]
    xv = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(F32)
    np.testing.assert_array_equal(run(out, [xv])[0], run(g, [xv])[0])


def test_simplify_transposed_matmul_and_uniform_constants():
    g = Graph("f")
    a = g.add_input((4, 5), F32, "a")
    b = g.add_input((5, 3), F32, "b")
    m = g.add_node(MatMul(), [a, b], (4, 3), F32)
    t = g.add_node(Permute((1, 0)), [m], (3, 4), F32)
    c = g.add_constant(np.full((3, 4), 0.5, F32))  # all elements equal: becomes 0-d
    g.outputs.append(g.add_node(ew.MUL, [t, c], (3, 4), F32))
    out = passes.algebraic_simplification(g)
    assert ops(out) == ["Permute", "Permute", "MatMul", "Mul"]
    assert out.nodes[-1].inputs[1].shape == ()
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal((4, 5)).astype(F32), rng.standard_normal((5, 3)).astype(F32)
    got = run(out, [av, bv])[0]
    np.testing.assert_allclose(got, run(g, [av, bv])[0], rtol=1e-6, atol=1e-6)
    assert got.flags.c_contiguous


def test_simplify_never_returns_an_argument_as_a_result():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    one = g.add_constant(np.ones((), F32))
    g.outputs.append(g.add_node(ew.MUL, [x, one], (3,), F32))
    out = passes.algebraic_simplification(g)
    assert ops(out) == ["Mul"]


# -- elementwise fusion ------------------------------------------------------------------------


def _chain(g, x, b):
    h = g.add_node(ew.ADD, [x, b], x.shape, F32)
    h = g.add_node(ew.Relu(), [h], x.shape, F32)
    c = g.add_constant(np.full((), 2.0, F32))
    h = g.add_node(ew.MUL, [h, c], x.shape, F32)
    return g.add_node(ew.Sigmoid(), [h], x.shape, F32)


def test_fusion_groups_a_chain_into_one_node(no_jit):
    g = Graph("f")
    x = g.add_input((4, 3, 5), F32, "x")
    b = g.add_input((3, 1), F32, "b")
    g.outputs.append(_chain(g, x, b))
    out = passes.elementwise_fusion(g)
    assert ops(out) == ["FusedElementwise"]
    assert out.nodes[0].op.expr == "sigmoid(relu(x0 + x1) * x2)"
    assert out.nodes[0].output.id == g.outputs[0].id
    rng = np.random.default_rng(0)
    xv, bv = rng.standard_normal((4, 3, 5)).astype(F32), rng.standard_normal((3, 1)).astype(F32)
    np.testing.assert_array_equal(run(out, [xv, bv])[0], run(g, [xv, bv])[0])
    assert "FusedElementwise(%0, %1, %" in str(out)


def test_fusion_stops_at_values_read_elsewhere():
    g = Graph("f")
    x = g.add_input((3,), F32, "x")
    a = g.add_node(ew.EXP, [x], (3,), F32)
    b = g.add_node(ew.NEG, [a], (3,), F32)
    c = g.add_node(ew.SIN, [b], (3,), F32)  # Sin is not fusable
    d = g.add_node(ew.Tanh(), [b], (3,), F32)
    e = g.add_node(ew.Sqrt(), [d], (3,), F32)
    g.outputs += [c, e, a]  # ``a`` is a result: must stay a value of its own
    out = passes.elementwise_fusion(g)
    assert ops(out) == ["Exp", "Neg", "Sin", "FusedElementwise"]
    assert out.nodes[-1].op.expr == "sqrt(tanh(x0))"


def test_fusion_does_not_move_reads_across_state_writes():
    g = Graph("f")
    p = g.add_state((3,), F32, name="p")
    a = g.add_node(ew.EXP, [p], (3,), F32)
    g.add_node(Bump(), [p], (3,), F32)
    b = g.add_node(ew.NEG, [a], (3,), F32)
    g.outputs.append(b)
    out = passes.elementwise_fusion(g)
    assert ops(out) == ["Exp", "Bump", "Neg"]


def test_fusion_numpy_path_reuses_buffers(no_jit):
    g = Graph("f")
    x = g.add_input((1000,), F32, "x")
    v = x
    for op in (ew.EXP, ew.NEG, ew.EXP, ew.NEG, ew.Tanh()):
        v = g.add_node(op, [v], (1000,), F32)
    g.outputs.append(v)
    out = passes.elementwise_fusion(g)
    op = out.nodes[0].op
    xv = np.linspace(-1, 1, 1000, dtype=F32)
    np.testing.assert_array_equal(overrides.run(op, np, xv), run(g, [xv])[0])
    writes = [s for s in op._np_steps if s[3]]  # (op, args, frees, writes into a buffer)
    assert len(writes) == 5 and sum(1 for s in op._np_steps if s[2]) == 4  # one buffer, reused


def test_fused_node_writes_into_a_dead_intermediate(no_jit):
    g = Graph("f")
    x = g.add_input((2, 3), F32, "x")
    w = g.add_input((3, 4), F32, "w")
    m = g.add_node(MatMul(), [x, w], (2, 4), F32)  # a fresh intermediate read once
    h = g.add_node(ew.EXP, [m], (2, 4), F32)
    h = g.add_node(ew.NEG, [h], (2, 4), F32)
    g.outputs.append(g.add_node(ew.ADD, [h, h], (2, 4), F32))
    out = passes.reuse_buffers(passes.elementwise_fusion(g))
    node = out.nodes[-1]
    ids = [v.id for v in node.inputs]
    assert node.op.reuse == ids.index(m.id) and "reuse=0" in str(out)
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((3, 4)).astype(F32)
    mv = xv @ wv
    want = -np.exp(mv) * 2
    res = overrides.run(node.op, np, mv)
    assert res is mv  # the dead intermediate's buffer holds the result
    np.testing.assert_allclose(res, want, rtol=1e-6)
    ro = (xv @ wv)[:, :]  # a view (not an array of its own): never written
    res = overrides.run(node.op, np, ro)
    assert res is not ro and res.base is None
    np.testing.assert_allclose(res, want, rtol=1e-6)
    np.testing.assert_allclose(run(out, [xv, wv])[0], want, rtol=1e-6)


@pytest.mark.parametrize("jit", ["off"] + (["sync"] if _jit.available() else []))
def test_a_stored_update_writes_its_state_array_in_place(jit):
    """``m = 0.9 m + 0.1 g``; ``p = p - 0.1 m``, each stored back: the fused nodes write the state
    arrays themselves (no copy at the store), with numba reading the reused input from ``out``
    (one array, so the loop stays vectorized); a later reader of the old value forbids it."""
    from ember.static.trace import ArrayRef

    prev = _jit.set_mode(jit)
    try:
        for later_read in (False, True):
            g = Graph("step")
            grad = g.add_input((64, 33), F32, "g")
            mv, pv = np.zeros((64, 33), F32), np.ones((64, 33), F32)
            m = g.add_state((64, 33), F32, ArrayRef(mv), "m")
            p = g.add_state((64, 33), F32, ArrayRef(pv), "p")
            c9, c1 = g.add_constant(np.asarray(0.9, F32)), g.add_constant(np.asarray(0.1, F32))
            a = g.add_node(ew.MUL, [m, c9], (64, 33), F32)
            b = g.add_node(ew.MUL, [grad, c1], (64, 33), F32)
            m2 = g.add_node(ew.ADD, [a, b], (64, 33), F32)
            step = g.add_node(ew.MUL, [m2, c1], (64, 33), F32)
            p2 = g.add_node(ew.SUB, [p, step], (64, 33), F32)
            last = g.add_node(ew.NEG, [p], (64, 33), F32) if later_read else p2
            g.add_node(Assign(), [m, m2], (64, 33), F32)
            g.add_node(Assign(), [p, p2], (64, 33), F32)
            g.outputs.append(last)
            out = passes.reuse_buffers(passes.elementwise_fusion(g))
            fused = [n for n in out.nodes if type(n.op).__name__ == "FusedElementwise"]
            reused = [n for n in fused if n.op.reuse >= 0]
            assert len(reused) == (1 if later_read else 2), str(out)  # m's always; p's unless read
            gv = np.random.default_rng(0).standard_normal((64, 33)).astype(F32)
            effects = [n.output for n in out.nodes if type(n.op) is Assign]
            outs, stores = Plan(out, out.outputs + effects).run([gv], [mv, pv])
            want_m = np.float32(0.9) * 0 + np.float32(0.1) * gv
            for v, arr in stores:
                v.ref.store(arr)
            np.testing.assert_allclose(mv, want_m, rtol=1e-6)
            np.testing.assert_allclose(pv, 1 - np.float32(0.1) * want_m, rtol=1e-6)
            if jit == "sync":  # (the NumPy steps may finish in another of their buffers)
                assert all(n.op._kernel for n in fused)
                assert [arr is v.ref.array for v, arr in stores] == [True, not later_read]
    finally:
        _jit.set_mode(prev)


def test_a_stored_running_statistic_and_counter_write_their_state_arrays_in_place(no_jit):
    """Ops that take ``out=`` (batch norm's ``RunningAverage``, a counter's ``Add``) and are
    stored into a state array they read run as ``InPlace``: the run writes the array itself and
    the store copies nothing; a later reader of the old value keeps the copy."""
    from ember.ops.norm import RunningAverage
    from ember.static.trace import ArrayRef

    for later_read in (False, True):
        g = Graph("bn")
        stats = g.add_input((2, 5), F32, "stats")
        rv, nv = np.ones(5, F32), np.zeros((), np.int64)
        r = g.add_state((5,), F32, ArrayRef(rv), "running_mean")
        n = g.add_state((), np.int64, ArrayRef(nv), "num_batches_tracked")
        r2 = g.add_node(RunningAverage(0, 0.1), [r, stats], (5,), F32)
        one = g.add_constant(np.asarray(1, np.int64))
        n2 = g.add_node(ew.ADD, [n, one], (), np.int64)
        g.add_node(Assign(), [r, r2], (5,), F32)
        g.add_node(Assign(), [n, n2], (), np.int64)
        if later_read:
            g.outputs.append(g.add_node(ew.NEG, [r], (5,), F32))
        out = passes.reuse_buffers(g)
        inplace = [nd.op for nd in out.nodes if type(nd.op) is passes.InPlace]
        names = [op.op.name for op in inplace]
        assert names == (["Add"] if later_read else ["RunningAverage", "Add"])
        assert ("op=RunningAverage(" in str(out)) is not later_read
        sv = np.arange(10, dtype=F32).reshape(2, 5)
        effects = [nd.output for nd in out.nodes if type(nd.op) is Assign]
        _, stores = Plan(out, out.outputs + effects).run([sv], [rv, nv])
        assert [arr is v.ref.array for v, arr in stores] == [not later_read, True]
        for v, arr in stores:
            v.ref.store(arr)
        np.testing.assert_allclose(rv, 0.9 + 0.1 * sv[0], rtol=1e-6)
        assert nv == 1
        rv[...], nv[...] = 1, 0
        in_state = passes.memory_plan(out).assignment.get(r2.id) is None  # no buffer of its own
        assert in_state is not later_read


def test_a_stored_counter_read_later_moves_after_its_readers(no_jit):
    """``t + 1`` stored into ``t``, whose old value a later node reads (a fused update
    recomputing the count), runs after that reader, in place; not across a node that writes
    state while the graph runs."""
    from ember.static.trace import ArrayRef

    for bump in (False, True):
        g = Graph("count")
        tv, bv = np.zeros((), F32), np.zeros(3, F32)
        t = g.add_state((), F32, ArrayRef(tv), "t")
        one = g.add_constant(np.asarray(1, F32))
        t2 = g.add_node(ew.ADD, [t, one], (), F32)
        if bump:
            b = g.add_state((3,), F32, ArrayRef(bv), "b")
            g.outputs.append(g.add_node(Bump(), [b], (3,), F32))
        g.outputs.append(g.add_node(ew.NEG, [t], (), F32))
        g.add_node(Assign(), [t, t2], (), F32)
        out = passes.reuse_buffers(g)
        names = ops(out)
        assert ("InPlace" in names) is not bump
        if not bump:
            assert names.index("Neg") < names.index("InPlace") < names.index("Assign")
        effects = [n.output for n in out.nodes if type(n.op) is Assign]
        outs, stores = Plan(out, out.outputs + effects).run([], [tv] + [bv] * bump)
        assert outs[len(out.outputs) - 1] == 0.0  # the old count, read before the update
        assert [arr is v.ref.array for v, arr in stores] == [not bump]


# -- memory plan -------------------------------------------------------------------------------


def test_memory_plan_reuse_lowers_peak_on_a_chain():
    g = Graph("chain")
    v = g.add_input((256,), F32, "x")
    for _ in range(10):
        v = g.add_node(ew.EXP, [v], (256,), F32)
    g.outputs.append(v)
    none, reuse = passes.memory_plan(g, reuse=False), passes.memory_plan(g)
    assert none.peak_bytes == 10 * 1024 and len(none.buffers) == 10
    assert reuse.peak_bytes == 2 * 1024 and len(reuse.buffers) == 2
    assert reuse.live_peak_bytes == 2 * 1024
    fused = passes.optimize(g)
    assert passes.memory_plan(fused).peak_bytes == 1024
    assert "peak 2048 bytes" in repr(reuse)


def test_memory_plan_views_share_buffers_and_results_live_on():
    g = Graph("f")
    x = g.add_input((4, 4), F32, "x")
    a = g.add_node(ew.EXP, [x], (4, 4), F32)
    t = g.add_node(Permute((1, 0)), [a], (4, 4), F32)  # a view: a's buffer lives while t does
    b = g.add_node(ew.NEG, [x], (4, 4), F32)
    c = g.add_node(ew.ADD, [t, b], (4, 4), F32)
    d = g.add_node(ew.EXP, [c], (4, 4), F32)
    g.outputs += [b, d]
    plan = passes.memory_plan(g)
    assert plan.assignment[t.id] == plan.assignment[a.id]
    assert len({plan.assignment[v.id] for v in (a, b, c)}) == 3
    assert plan.assignment[d.id] == plan.assignment[a.id]  # a is dead by then; b is a result


# -- the pipeline and ember.compile ------------------------------------------------------------


def test_optimize_prints_before_and_after(capsys):
    @ember.compile
    def f(x):
        return ((x * 1.0 + 0.0).exp() * 2.0).relu()

    x = ember.randn(5)
    y = f(x)
    np.testing.assert_allclose(y.numpy(), ((x.exp() * 2.0).relu()).numpy(), rtol=1e-6)
    before, after = str(f.graph), str(f.optimized_graph)
    assert "Mul(%0" in before and "FusedElementwise" in after and "Mul" not in after
    passes.optimize(f.graph, verbose=True)
    assert "elementwise_fusion: 1 nodes" in capsys.readouterr().out


def test_compile_optimize_off_runs_the_traced_graph():
    f = ember.compile(lambda x: (x * 1.0).exp(), optimize=False)
    f(ember.ones(2))
    assert f.optimized_graph is f.graph


@pytest.mark.skipif(not _jit.available(), reason="numba is not installed")
def test_numba_kernels_equal_numpy_path():
    prev = _jit.set_mode("sync")
    try:
        g = Graph("f")
        x = g.add_input((6, 3, 5), F32, "x")
        b = g.add_input((3, 1), F32, "b")
        g.outputs.append(_chain(g, x, b))
        out = passes.elementwise_fusion(g)
        rng = np.random.default_rng(0)
        xv = rng.standard_normal((6, 3, 5)).astype(F32)
        bv = rng.standard_normal((3, 1)).astype(F32)
        got = run(out, [xv, bv])[0]
        assert out.nodes[0].op._kernel.fn is not None
        np.testing.assert_allclose(got, run(g, [xv, bv])[0], rtol=1e-6, atol=1e-7)
    finally:
        _jit.set_mode(prev)


def test_a_lone_op_whose_numpy_body_makes_several_passes_becomes_a_kernel():
    """With numba, ``ReluGrad`` (three NumPy passes) alone becomes a kernel at any size, with the
    bits of its forward (+0.0 where masked, the gradient where the output is NaN); a lone
    one-pass op of that size stays."""
    prev = _jit.set_mode("sync")
    try:
        fused = {}
        for op, kernel in ((ew.ReluGrad(), True), (ew.MUL, False)):
            g = Graph("f")
            a, b = (g.add_input((64, 100), np.float32, n) for n in "ab")
            g.outputs.append(g.add_node(op, [a, b], (64, 100), np.float32))
            fused[op.name] = out = passes.elementwise_fusion(g)
            names = [type(n.op).__name__ for n in out.nodes]
            assert names == (["FusedElementwise"] if kernel and _jit.available() else [op.name])
        rng = np.random.default_rng(0)
        grad, y = rng.standard_normal((2, 64, 100)).astype(np.float32)
        y[0, :4] = [np.nan, 0.0, -0.0, -1.0]
        grad[0, :4] = -1.0
        want = ew.ReluGrad().forward(np, grad, y)
        out = fused["ReluGrad"]
        (got,), _ = Plan(out, out.outputs).run([grad, y], [])
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    finally:
        _jit.set_mode(prev)


def test_a_kernel_takes_inputs_numba_refuses_as_contiguous_copies():
    """The numba kernel takes C-contiguous arrays in their own shapes; a transposed view, a
    Fortran-ordered array, a broadcast view or a 0-d array goes through too, with the values of
    the NumPy body."""
    prev = _jit.set_mode("sync")
    try:
        g = Graph("f")
        a, b = g.add_input((8, 6), np.float32, "a"), g.add_input((), np.float32, "b")
        s = g.add_node(ew.ADD, [a, b], (8, 6), np.float32)
        g.outputs.append(g.add_node(ew.MUL, [s, a], (8, 6), np.float32))
        out = passes.elementwise_fusion(g)
        plan = Plan(out, out.outputs)
        rng = np.random.default_rng(1)
        for x in (rng.standard_normal((6, 8)).astype(np.float32).T,
                  np.asfortranarray(rng.standard_normal((8, 6)).astype(np.float32)),
                  np.broadcast_to(rng.standard_normal(6).astype(np.float32), (8, 6)),
                  rng.standard_normal((8, 6)).astype(np.float32)):  # fmt: skip
            y = np.asarray(np.float32(0.5))
            (got,), _ = plan.run([x, y], [])
            np.testing.assert_array_equal(got, (x + y) * x)
    finally:
        _jit.set_mode(prev)


def test_a_kernel_keeps_its_inputs_channels_last_layout():
    """Output-shaped inputs in another memory order (a channels-last convolution's output): the
    kernel runs in that order and its result keeps it, as NumPy's ufuncs do; an input in C order
    beside it, and a broadcast bias, give the NumPy body's values."""
    prev = _jit.set_mode("sync")
    try:
        g = Graph("f")
        shape = (4, 3, 5, 6)
        a, b = (g.add_input(shape, np.float32, n) for n in "ab")
        bias = g.add_input((3, 1, 1), np.float32, "bias")
        s = g.add_node(ew.ADD, [a, bias], shape, np.float32)
        g.outputs.append(g.add_node(ew.ReluGrad(), [s, b], shape, np.float32))
        out = passes.elementwise_fusion(g)
        plan = Plan(out, out.outputs)
        rng = np.random.default_rng(2)
        last = rng.standard_normal((4, 5, 6, 3)).astype(np.float32).transpose(0, 3, 1, 2)
        other = rng.standard_normal(shape).astype(np.float32)
        c = rng.standard_normal((3, 1, 1)).astype(np.float32)
        for x, y in ((last, last.copy(order="C")), (last, other), (other, last), (last, last)):
            for _ in range(2):  # the second call takes the way the first found
                (got,), _ = plan.run([x, y, c], [])
                want = ew.ReluGrad().forward(np, x + c, y)
                np.testing.assert_array_equal(got, want)
                if _jit.available() and x is last:
                    assert got.strides == last.strides  # channels-last kept
    finally:
        _jit.set_mode(prev)


def _bias_relu_graph(shape):
    """``relu(a + bias + 0.5 * s)``: an activation, a per-channel bias and a 0-d input."""
    g = Graph("f")
    a = g.add_input(shape, np.float32, "a")
    bias = g.add_input((shape[1], 1, 1), np.float32, "bias")
    s = g.add_input((), np.float32, "s")
    half = g.add_node(ew.MUL, [s, g.add_constant(np.float32(0.5))], (), np.float32)
    h = g.add_node(ew.ADD, [a, bias], shape, np.float32)
    h = g.add_node(ew.ADD, [h, half], shape, np.float32)
    g.outputs.append(g.add_node(ew.Relu(), [h], shape, np.float32))
    return passes.elementwise_fusion(g)


@pytest.mark.skipif(not _jit.available(), reason="needs numba (the jit extra)")
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize(
    "shape", [(8, 6, 7, 8), (1, 3, 11, 13), (2, 70, 3, 3)], ids=["folded", "prime rows", "long"]
)
def test_a_channels_last_kernel_runs_on_rows_of_repeated_channels(monkeypatch, shape, parallel):
    """A bias over few channels-last channels: the kernel runs over rows of the channels repeated
    (where the rows divide; 6 channels x 16 here), on numba's threads when large; its values are
    the NumPy body's and the result stays channels-last. While the layout's kernel compiles
    (background mode), a call copies its inputs to C order and the next call keeps the layout."""
    from ember.static.passes import fuse

    monkeypatch.setattr(fuse, "_parallel", lambda shape: parallel)
    prev = _jit.set_mode("auto")
    try:
        g = _bias_relu_graph(shape)
        (node,) = g.nodes[-1:]
        plan = Plan(g, g.outputs)
        rng = np.random.default_rng(3)
        n, c, h, w = shape
        x = rng.standard_normal((n, h, w, c)).astype(np.float32).transpose(0, 3, 1, 2)
        bias = rng.standard_normal((c, 1, 1)).astype(np.float32)
        s = np.float32(0.25)
        want = np.maximum(x + bias + s * np.float32(0.5), 0)
        for _ in range(4):
            (got,), _ = plan.run([x, bias, np.asarray(s)], [])
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
            _jit.wait()
        assert got.strides == x.strides
        ((kernel, _, _, rows),) = node.op._layouts.values()
        assert (rows is not None) == (shape == (8, 6, 7, 8))
        assert ("prange(" in kernel.source) == parallel
    finally:
        _jit.set_mode(prev)


def test_rows_of_repeated_channels_apply_to_inputs_that_vary_along_the_fast_axes_only():
    from ember.static.passes.fuse import _rows

    assert _rows((64, 6), [(64, 6), (1, 6)]) == ((4, 96), [(4, 96), (1, 96)], [1, 16])
    assert _rows((64, 6), [(64, 6), (64, 1)]) is None  # varies along the slow axis
    assert _rows((64, 2, 3), [(64, 2, 3), (1, 1, 3)])[0] == (4, 96)
    assert _rows((64, 2, 3), [(64, 2, 3), (1, 2, 1), (1, 1, 3)]) is None  # part of the fast axes
    assert _rows((64, 2, 3), [(64, 2, 3), (1, 2, 3), (1, 1, 1)])[0] == (4, 96)
    assert _rows((64, 80), [(64, 80), (1, 80)]) is None  # rows long already
    assert _rows((13, 6), [(13, 6), (1, 6)]) is None  # 13 rows: no factor to repeat by
    assert _rows((64, 6), [(64, 6), (64, 6)]) is None  # nothing broadcast
