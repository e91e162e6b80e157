"""Algebraic simplification: rewrite nodes into cheaper equal ones.

- identities: ``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0``, ``x / 1`` (when the
  constant does not broadcast ``x`` to a larger shape); ``neg(neg(x))``; reshape, expand,
  ``sum_to`` or permute to the shape ``x`` already has; a cast to the dtype ``x`` already has;
  a sum over no axes;
- chains: ``permute(permute(x))`` becomes one permute (or ``x``), ``reshape(reshape(x))``
  one reshape;
- a constant whose elements are all equal (a folded ``expand`` of a scalar) in an elementwise
  op that does not need its shape becomes a 0-d constant;
- the sum of a max-pool gradient over its spatial axes (a bias gradient), ``sum_to(scatter(h))``,
  becomes ``sum_to(h)``: the same values summed on the pooled map;
- the transpose of a 2-D matrix product, ``(a @ b).T``, becomes ``b.T @ a.T`` when nothing else
  reads the product (BLAS reads transposed operands for free, and the result is contiguous).

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import MUL, Exp
>>> from ember.ops.movement import Permute
>>> g = Graph("f")
>>> x = g.add_input((2, 3), np.float32, "x")
>>> one = g.add_constant(np.ones((), np.float32))
>>> t = g.add_node(Permute((1, 0)), [x], (3, 2), np.float32)
>>> tt = g.add_node(Permute((1, 0)), [t], (2, 3), np.float32)
>>> y = g.add_node(MUL, [tt, one], (2, 3), np.float32)
>>> g.outputs.append(g.add_node(Exp(), [y], (2, 3), np.float32))
>>> print(algebraic_simplification(g))
graph f(%0: f32[2,3] "x") {
  %5: f32[2,3] = Exp(%0)
  return %5
}
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops.broadcast import Expand, SumTo
from ...ops.linalg import MatMul
from ...ops.movement import Permute, Reshape
from ...ops.pool import MaxPoolScatter
from ...ops.reduce import Sum
from ..ir import Graph
from ._util import (
    clone,
    consumers,
    drop_unused,
    make_node,
    replace_all_uses,
    roots,
    scalar_constant,
    uniform_value,
)
from .dce import dead_code_elimination

TRANSPOSE_MATMUL = True  # rewrite (a @ b).T as b.T @ a.T (see the module docstring)
_SCALARIZE = (ew.Add, ew.Sub, ew.Mul, ew.Div, ew.Maximum, ew.Minimum)


def algebraic_simplification(graph: Graph) -> Graph:
    """A copy of ``graph`` with the rewrites above applied until none applies (then the
    nodes nobody reads any more are dropped)."""
    g = clone(graph)
    cache: dict = {}
    for _ in range(8):
        if not _one_round(g, cache):
            break
    drop_unused(g)
    return dead_code_elimination(g)


def _same_type(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _sums_windows(x, out) -> bool:
    """Whether ``out = sum_to(x)`` with ``x = max_pool_scatter(h, ...)`` sums over the last two
    axes: each value of ``h`` lands once in its (N, C) plane, so ``sum_to(h)`` is the same sum
    over a map a pooling window smaller."""
    if x.kind != "node" or type(x.node.op) is not MaxPoolScatter:
        return False
    shape = (1,) * (len(x.shape) - len(out.shape)) + tuple(out.shape)
    return shape[-2:] == (1, 1)


def _one_round(g: Graph, cache: dict) -> bool:
    uses = consumers(g)
    keep_ids = roots(g)
    returned = {v.id for v in g.outputs}
    mapping: dict = {}
    new_nodes = []
    changed = False

    def resolve(v):
        while v.id in mapping:
            v = mapping[v.id]
        return v

    for n in g.nodes:
        if mapping:
            n.inputs = tuple(resolve(x) for x in n.inputs)
        op, ins, out = n.op, n.inputs, n.output
        t = type(op)
        repl = None  # a value equal to ``out``
        extra = []  # new nodes replacing ``n``
        if t in (ew.Add, ew.Sub, ew.Mul, ew.Div):
            a, b = ins
            ua, ub = uniform_value(a), uniform_value(b)
            if t is ew.Add:
                if ub is not None and ub == 0 and _same_type(a, out):
                    repl = a
                elif ua is not None and ua == 0 and _same_type(b, out):
                    repl = b
            elif t is ew.Sub:
                if ub is not None and ub == 0 and _same_type(a, out):
                    repl = a
            elif t is ew.Mul:
                if ub is not None and ub == 1 and _same_type(a, out):
                    repl = a
                elif ua is not None and ua == 1 and _same_type(b, out):
                    repl = b
            elif ub is not None and ub == 1 and _same_type(a, out):
                repl = a
        elif t is ew.Neg:
            x = ins[0]
            if x.kind == "node" and type(x.node.op) is ew.Neg:
                repl = x.node.inputs[0]
        elif t in (Reshape, Expand, SumTo):
            x = ins[0]
            if _same_type(x, out):
                repl = x
            elif t is Reshape and x.kind == "node" and type(x.node.op) is Reshape:
                extra = [make_node(g, op, [x.node.inputs[0]], out)]
            elif t is SumTo and _sums_windows(x, out):
                extra = [make_node(g, op, [x.node.inputs[0]], out)]
        elif t is ew.Cast:
            if _same_type(ins[0], out):
                repl = ins[0]
        elif t is Sum:
            if op.axis == () and _same_type(ins[0], out):
                repl = ins[0]
        elif t is Permute:
            x = ins[0]
            dims = tuple(op.dims)
            if dims == tuple(range(len(dims))):
                repl = x
            elif x.kind == "node" and type(x.node.op) is Permute:
                inner = tuple(x.node.op.dims)
                comp = tuple(inner[d] for d in dims)
                src = x.node.inputs[0]
                if comp == tuple(range(len(comp))):
                    repl = src
                else:
                    extra = [make_node(g, Permute(comp), [src], out)]
            elif (
                TRANSPOSE_MATMUL
                and dims == (1, 0)
                and x.kind == "node"
                and type(x.node.op) is MatMul
                and len(uses.get(x.id, ())) == 1
                and x.id not in keep_ids
                and all(len(v.shape) == 2 for v in x.node.inputs)
            ):
                a, b = x.node.inputs
                tb = make_node(g, Permute((1, 0)), [b], (b.shape[::-1], b.dtype))
                ta = make_node(g, Permute((1, 0)), [a], (a.shape[::-1], a.dtype))
                extra = [tb, ta, make_node(g, MatMul(), [tb.output, ta.output], out)]
        if repl is None and not extra and t in _SCALARIZE:
            a, b = ins
            for i, (c, other) in enumerate(((a, b), (b, a))):
                if c.kind == "const" and c.data.ndim > 0 and _same_type(other, out):
                    u = uniform_value(c)
                    if u is not None:
                        s = scalar_constant(g, u, c.dtype, cache)
                        n.inputs = (s, other) if i == 0 else (other, s)
                        changed = True
                        break
        if repl is not None and repl.kind != "node" and out.id in returned:
            repl = None  # a result must not alias an argument or the state
        if repl is not None and _same_type(repl, out):
            mapping[out.id] = repl
            changed = True
            continue
        if extra:
            last = extra[-1]
            mapping[out.id] = last.output
            new_nodes.extend(extra)
            changed = True
            continue
        new_nodes.append(n)
    g.nodes = new_nodes
    replace_all_uses(g, mapping)
    return changed


__all__ = ["algebraic_simplification"]
