"""The IR: building by hand, text form, validation, and the executor's plan."""

import numpy as np
import pytest

import ember
from ember.backend import overrides
from ember.ops.elementwise import ADD, MUL, Exp
from ember.ops.reduce import Sum
from ember.static import Graph, GraphError, executor
from ember.static.executor import Plan
from ember.static.ir import Assign


def _graph():
    g = Graph("f")
    x = g.add_input((2, 3), np.float32, "x")
    s = g.add_state((2, 3), "float32", ref=None, name="w")
    c = g.add_constant(np.asarray(2.0, np.float32))
    a = g.add_node(MUL, [x, c], (2, 3), np.float32)
    b = g.add_node(ADD, [a, s], (2, 3), np.float32)
    e = g.add_node(Exp(), [b], (2, 3), np.float32)
    t = g.add_node(Sum(), [e], (), np.float32)
    g.add_node(Assign(), [s, b], (2, 3), np.float32)
    g.outputs.append(t)
    return g, (x, s, c, a, b, e, t)


def test_text_form():
    g, _ = _graph()
    assert str(g) == "\n".join(
        [
            'graph f(%0: f32[2,3] "x") {',
            '  state %1: f32[2,3] "w"',
            "  const %2: f32[] = 2.0",
            "  %3: f32[2,3] = Mul(%0, %2)",
            "  %4: f32[2,3] = Add(%3, %1)",
            "  %5: f32[2,3] = Exp(%4)",
            "  %6: f32[] = Sum(%5)",
            "  %7: f32[2,3] = Assign(%1, %4)",
            "  return %6",
            "}",
        ]
    )
    g.validate(check_types=True)


def test_validate_names_the_problem():
    g, (x, s, c, a, b, e, t) = _graph()
    g.nodes[0], g.nodes[1] = g.nodes[1], g.nodes[0]
    with pytest.raises(GraphError, match="node 0 .* input %3 is used before it is defined"):
        g.validate()
    g, (x, s, c, a, b, e, t) = _graph()
    g.add_node(Assign(), [a, b], (2, 3), np.float32)
    with pytest.raises(GraphError, match="Assign target must be an input or state value"):
        g.validate()
    g, (x, s, c, a, b, e, t) = _graph()
    g.nodes[2].output.shape = (3, 2)
    with pytest.raises(GraphError, match=r"infer gives f32\[2,3\] but the value is f32\[3,2\]"):
        g.validate(check_types=True)
    other = Graph("other")
    y = other.add_input((1,), np.float32)
    g.outputs.append(y)
    with pytest.raises(GraphError, match="output %0 is not defined"):
        g.validate()


def test_plan_runs_defers_stores_and_frees():
    g, (x, s, c, a, b, e, t) = _graph()
    plan = Plan(g, [t, g.nodes[-1].output])
    xs = np.ones((2, 3), np.float32)
    w = np.zeros((2, 3), np.float32)
    (total, stored), stores = plan.run([xs], [w])
    assert total == pytest.approx(6 * np.exp(2.0))
    assert len(stores) == 1 and stores[0][0] is s
    np.testing.assert_array_equal(stores[0][1], np.full((2, 3), 2.0))
    assert w.sum() == 0  # the executor never writes state itself
    freed = {i for step in plan.steps for i in step[3]}
    assert plan.steps[-1][2] not in freed  # outputs stay


def test_plan_feeds_cut_the_graph():
    g, (x, s, c, a, b, e, t) = _graph()
    plan = Plan(g, [t], feeds=[b])
    assert plan.missing == [] and plan.state == []
    (total,), _ = plan.run([np.zeros((2, 3), np.float32)], [])
    assert total == pytest.approx(6.0)


def test_failures_name_the_node():
    g = Graph("bad")
    x = g.add_input((2,), np.float32)
    y = g.add_node(Sum(axis=(3,)), [x], (), np.float32)
    with pytest.raises(GraphError, match=r"bad: running node %1: f32\[\] = Sum\(%0, axis=\(3,\)\)"):
        Plan(g, [y]).run([np.ones(2, np.float32)], [])
    assert ember.ones(1).tolist() == [1.0]


@pytest.mark.parametrize("runs", [1, executor.GENERATE_AFTER + 1], ids=["interpreted", "generated"])
def test_both_loops_give_the_same_results_scalars_and_errors(runs):
    """A plan interprets its steps for its first runs and then runs a loop generated for them:
    both give the same outputs and stores, a 0-d array for a scalar result, and name the node
    that failed."""
    g, (x, s, c, a, b, e, t) = _graph()
    plan = Plan(g, [t, a, g.nodes[-1].output])
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.full((2, 3), -1.0, np.float32)
    for _ in range(runs):
        (total, doubled, _), stores = plan.run([xs], [w])
    assert (plan._loops[id(plan.steps_for(np, [xs]))][2] is not None) == (
        runs >= executor.GENERATE_AFTER
    )
    want = 2 * xs - 1
    assert type(total) is np.ndarray and total.shape == ()
    np.testing.assert_allclose(total, np.exp(want).sum(), rtol=1e-6)
    np.testing.assert_array_equal(doubled, 2 * xs)
    assert stores[0][0] is s
    np.testing.assert_array_equal(stores[0][1], want)
    bad = Graph("bad")
    y = bad.add_input((2,), np.float32)
    z = bad.add_node(Sum(axis=(3,)), [bad.add_node(Exp(), [y], (2,), np.float32)], (), np.float32)
    plan = Plan(bad, [z])
    for _ in range(runs):  # the generated loop runs from the ``GENERATE_AFTER``-th run on
        with pytest.raises(GraphError, match=r"bad: running node %2: f32\[\] = Sum\(%1, axis"):
            plan.run([np.ones(2, np.float32)], [])
    assert (plan._loops[id(plan.steps_for(np, []))][2] is not None) == (
        runs >= executor.GENERATE_AFTER
    )


@pytest.mark.parametrize("runs", [1, executor.GENERATE_AFTER + 1], ids=["interpreted", "generated"])
def test_both_loops_call_an_override_and_the_forward_where_it_declines(runs):
    """A step bound to a device override calls it, and the op's forward when it answers
    NotImplemented; the generated loop calls the two itself (``overrides.unbind``)."""
    calls = []

    def exp_cpu(op, xp, x):
        calls.append(x.size)
        return NotImplemented if x.size < 3 else np.exp(x) + 1  # marked: not the forward's

    overrides.register(Exp, "cpu")(exp_cpu)
    try:
        g = Graph("f")
        big, small = g.add_input((4,), np.float32), g.add_input((2,), np.float32)
        outs = [g.add_node(Exp(), [v], v.shape, np.float32) for v in (big, small)]
        plan = Plan(g, outs)
        for _ in range(runs):
            got_big, got_small = plan.run([np.zeros(4, np.float32), np.zeros(2, np.float32)], [])[0]
        assert overrides.unbind(plan.steps_for(np, [])[0][0])[0] is exp_cpu
    finally:
        overrides.unregister(Exp, "cpu")
    np.testing.assert_array_equal(got_big, np.full(4, 2.0, np.float32))
    np.testing.assert_array_equal(got_small, np.ones(2, np.float32))
    assert calls == [4, 2] * runs
