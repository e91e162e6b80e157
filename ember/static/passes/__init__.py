"""Graph optimizer passes: each a function ``Graph -> Graph`` returning an optimized copy.

- ``dead_code_elimination``: drop nodes no output or side effect needs;
- ``common_subexpression_elimination``: compute each ``(op, inputs)`` once;
- ``constant_folding``: evaluate nodes whose inputs are all constants;
- ``algebraic_simplification``: ``x * 1``, ``x + 0``, double transposes, no-op reshapes and
  casts, ``(a @ b).T``...;
- ``elementwise_fusion``: chains of elementwise ops as one node (numba when installed);
- ``fuse_optimizer_updates``: Adam/SGD updates as one kernel (numba when installed);
- ``reuse_buffers``: fused nodes write into inputs that die there;
- ``memory_plan(graph)``: lifetimes and buffer reuse; ``.peak_bytes``.

``optimize(graph)`` runs ``PIPELINE`` (the default list) and returns the result; the input graph
is never changed, so both can be printed. ``ember.compile`` runs it on every trace (turn it off
with ``ember.compile(fn, optimize=False)``). Passes keep every node with ``has_side_effects``
(``Assign``, optimizer updates, random draws), in order.

>>> import ember
>>> from ember import static
>>> from ember.static import passes
>>> @ember.compile
... def f(x):
...     return ((x * 1.0 + 0.0).exp() * 2.0).relu()
>>> _ = f(ember.ones(3))
>>> len(f.graph.nodes), len(passes.optimize(f.graph).nodes)
(5, 1)
"""

from __future__ import annotations

from ..ir import Graph
from . import _jit
from .cse import common_subexpression_elimination
from .dce import dead_code_elimination
from .fold import constant_folding
from .fuse import FusedElementwise, elementwise_fusion
from .memory import MemoryPlan, memory_plan, reuse_buffers
from .optimizer import FusedOptimizerUpdate, fuse_optimizer_updates
from .simplify import algebraic_simplification

PIPELINE = [
    common_subexpression_elimination,
    constant_folding,
    algebraic_simplification,
    common_subexpression_elimination,
    dead_code_elimination,
    elementwise_fusion,
    fuse_optimizer_updates,
    reuse_buffers,
]


def optimize(graph: Graph, passes=None, verbose: bool = False) -> Graph:
    """``graph`` after each of ``passes`` (default ``PIPELINE``) in turn; with ``verbose``,
    prints the node count after each pass."""
    g = graph
    for p in PIPELINE if passes is None else passes:
        g = p(g)
        if verbose:
            print(f"{p.__name__}: {len(g.nodes)} nodes")
    return g


def wait_for_kernels(timeout: float | None = None) -> bool:
    """Block until the numba kernels requested so far are compiled (benchmarks, tests);
    True at once without numba."""
    return _jit.wait(timeout)


__all__ = [
    "PIPELINE",
    "FusedElementwise",
    "FusedOptimizerUpdate",
    "MemoryPlan",
    "algebraic_simplification",
    "common_subexpression_elimination",
    "constant_folding",
    "dead_code_elimination",
    "elementwise_fusion",
    "fuse_optimizer_updates",
    "memory_plan",
    "optimize",
    "reuse_buffers",
    "wait_for_kernels",
]
