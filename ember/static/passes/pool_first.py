"""Max pooling before the ReLU (and per-channel bias) that feeds it: the same values, on the
pooled map.

A convnet's ``max_pool(relu(c + b))``, with ``b`` constant over each window (a bias per
channel), equals ``relu(max_pool(c) + b)``: adding a window's constant and ReLU never change
which value is largest, and rounding is monotonic, so even the floats are equal. The pass
rewrites the forward that way, and the gradient with it: ``relu_grad(scatter(g, r), r)`` (the
pool's gradient scattered to each window's maximum of ``r``, then masked where ``r <= 0``)
becomes ``scatter(relu_grad(g, p), c)``, the mask applied on the pooled map ``p`` before the
scatter to the maxima of ``c``. The bias add, the ReLU and its gradient then run on a quarter of
the elements for a 2x2 pool (LeNet-5: 64x6x28x28 -> 64x6x14x14).

Where a window's maximum is positive, both scatter to the first maximum of the window, except
where ``c + b`` rounds two different values of ``c`` to one float (the old graph took the first
of them, the new one the larger); where it is not positive the gradient is zero either way.

The pass applies where the ReLU's output is read only by the pool, its gradient's scatters and
their ReLU gradients (no skip connection reads it), and the bias add only by the ReLU.

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import Relu
>>> from ember.ops.pool import MaxPool2d
>>> g = Graph("f")
>>> c = g.add_input((1, 2, 4, 4), np.float32, "c")
>>> r = g.add_node(Relu(), [c], (1, 2, 4, 4), np.float32)
>>> g.outputs.append(g.add_node(MaxPool2d((2, 2), (2, 2)), [r], (1, 2, 2, 2), np.float32))
>>> print(pool_before_relu(g))
graph f(%0: f32[1,2,4,4] "c") {
  %3: f32[1,2,2,2] = MaxPool2d(%0, kernel=(2, 2), stride=(2, 2))
  %4: f32[1,2,2,2] = Relu(%3)
  return %4
}
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops.pool import MaxPool2d, MaxPoolScatter, _fields
from ..ir import Graph
from ._util import clone, consumers, make_node, replace_all_uses, roots
from .dce import dead_code_elimination


def pool_before_relu(graph: Graph) -> Graph:
    """A copy of ``graph`` with each ``max_pool(relu(c [+ b]))`` computed as
    ``relu(max_pool(c) [+ b])`` and its gradient to match (the module's notes)."""
    g = clone(graph)
    uses = consumers(g)
    keep = roots(g)
    instead: dict = {}  # id(node) -> the nodes that take its place
    mapping: dict = {}
    for n in g.nodes:
        if type(n.op) is MaxPool2d:
            _rewrite(g, n, uses, keep, instead, mapping)
    if not mapping:
        return g
    nodes = []
    for n in g.nodes:
        nodes.extend(instead.get(id(n), (n,)))
    g.nodes = nodes
    replace_all_uses(g, mapping)
    return dead_code_elimination(g)


def _rewrite(g: Graph, pool, uses: dict, keep: set, instead: dict, mapping: dict) -> None:
    r = pool.inputs[0]
    if r.kind != "node" or type(r.node.op) is not ew.Relu or r.id in keep:
        return
    c, bias = _source(r, uses, keep)
    pairs = _gradients(pool, r, uses)
    if pairs is None:
        return
    out = pool.output
    p = make_node(g, MaxPool2d(*_fields(pool.op)), [c], out)
    new = [p]
    x = p.output
    if bias is not None:
        add = r.node.inputs[0].node
        ins = [x if v is c else v for v in add.inputs]
        new.append(make_node(g, ew.Add(), ins, out))
        x = new[-1].output
    new.append(make_node(g, ew.Relu(), [x], out))
    instead[id(pool)] = new
    mapping[out.id] = new[-1].output
    for scatter, mask in pairs:
        h = make_node(g, ew.ReluGrad(), [scatter.inputs[0], new[-1].output], scatter.inputs[0])
        s = make_node(g, MaxPoolScatter(*_fields(pool.op)), [h.output, c], mask.output)
        instead[id(mask)] = [h, s]
        mapping[mask.output.id] = s.output


def _source(r, uses: dict, keep: set):
    """``(c, b)`` for ``r = relu(c + b)`` whose bias add only the ReLU reads and whose ``b`` is
    constant over each window (it does not vary along the last two axes), else ``(x, None)``
    for ``r = relu(x)``."""
    a = r.node.inputs[0]
    if a.kind != "node" or type(a.node.op) is not ew.Add:
        return a, None
    if a.id in keep or len(uses.get(a.id, ())) != 1:
        return a, None
    for c, b in (a.node.inputs, a.node.inputs[::-1]):
        shape = (1,) * (len(a.shape) - len(b.shape)) + tuple(b.shape)
        if c.shape == a.shape and c.dtype == a.dtype == b.dtype and shape[-2:] == (1, 1):
            return c, b
    return a, None


def _gradients(pool, r, uses: dict):
    """``[(scatter, mask)]``: the gradient pairs ``mask = relu_grad(scatter(g, r), r)`` of
    the pool and the ReLU, when they and the pool are all that read ``r``; else None."""
    pairs = []
    readers = uses.get(r.id, ())
    for u in readers:
        if u is pool:
            continue
        if type(u.op) is MaxPoolScatter:
            if _fields(u.op) != _fields(pool.op) or u.inputs[1] is not r:
                return None
            after = uses.get(u.output.id, ())
            if len(after) != 1:
                return None
            mask = after[0]
            ins = mask.inputs
            if type(mask.op) is not ew.ReluGrad or ins[0] is not u.output or ins[1] is not r:
                return None
            pairs.append((u, mask))
        elif type(u.op) is not ew.ReluGrad:
            return None
    if len(readers) != 1 + 2 * len(pairs):
        return None
    return pairs


__all__ = ["pool_before_relu"]
