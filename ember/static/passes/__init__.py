"""Graph optimizer passes: each a function ``Graph -> Graph`` returning an optimized copy.

- ``dead_code_elimination``: drop nodes no output or side effect needs;
- ``common_subexpression_elimination``: compute each ``(op, inputs)`` once;
- ``constant_folding``: evaluate nodes whose inputs are all constants;
- ``pool_before_relu``: ``max_pool(relu(c + b))`` as ``relu(max_pool(c) + b)``, its gradient
  masked on the pooled map;
- ``algebraic_simplification``: ``x * 1``, ``x + 0``, double transposes, no-op reshapes and
  casts, ``(a @ b).T``, a bias gradient summed on the pooled map...;
- ``elementwise_fusion``: chains of elementwise ops as one node (numba when installed);
- ``reuse_buffers``: fused nodes write into inputs that die there;
- ``merge_state_updates``: a parameter's fused state updates (Adam's moments) computed by the
  fused node that reads them, written in place: one kernel per parameter;
- ``start_collectives_early``: nodes that start asynchronous work (DDP's ``AllReduceStart``,
  ``op.schedule_early``) moved up with the pure nodes they need, so the rest of backward
  overlaps them;
- ``memory_plan(graph)``: lifetimes and buffer reuse; ``.peak_bytes``.

``optimize(graph)`` runs ``PIPELINE`` (the default list) and returns the result; the input graph
is never changed, so both can be printed. ``ember.compile`` runs it on every trace (turn it off
with ``ember.compile(fn, optimize=False)``). Passes keep every node with ``has_side_effects``
(``Assign``, random draws), in order. An optimizer step is ember ops like any other code:
elementwise fusion fuses its chains.

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

from ...backend import jit as _jit
from ..ir import Graph
from .cse import common_subexpression_elimination
from .dce import dead_code_elimination
from .fold import constant_folding
from .fuse import FusedElementwise, elementwise_fusion
from .memory import InPlace, MemoryPlan, memory_plan, reuse_buffers
from .pool_first import pool_before_relu
from .schedule import start_collectives_early
from .simplify import algebraic_simplification
from .state_updates import merge_state_updates

PIPELINE = [
    common_subexpression_elimination,
    constant_folding,
    pool_before_relu,
    algebraic_simplification,
    common_subexpression_elimination,
    dead_code_elimination,
    elementwise_fusion,
    reuse_buffers,
    merge_state_updates,
    start_collectives_early,
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
    "MemoryPlan",
    "algebraic_simplification",
    "common_subexpression_elimination",
    "constant_folding",
    "dead_code_elimination",
    "elementwise_fusion",
    "memory_plan",
    "InPlace",
    "merge_state_updates",
    "optimize",
    "pool_before_relu",
    "reuse_buffers",
    "start_collectives_early",
    "wait_for_kernels",
]
