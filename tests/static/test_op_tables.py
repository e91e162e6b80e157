"""The op tables' cases, for tests/static's checks over whole graphs
(tests/static/test_passes_tables.py: optimized graphs == unoptimized ones).

The per-case define-and-run checks that lived here (placeholders + ``Session.run`` == eager,
``static.gradients`` == eager gradients) are generated for every case of every table by
``tests/ops/harness.py``'s ``generate()`` (``test_define_and_run``), with ember.compile and ONNX.
"""

from tests.ops.harness import XFAIL, _first, all_cases
from tests.ops.harness import _build as _build_all

# Every case a graph can be built for: not data-dependent (declared on the case) and not a
# known failure of the define-and-run check (harness.XFAIL).
CASES = [c for c in all_cases() if not c.data_dependent and ("static", c.id) not in XFAIL]

# Kept for tests that matched data-dependent cases by name: CASES holds none of them now.
DATA_DEPENDENT: frozenset = frozenset()


def _build(case, arrays, grad: bool):
    """(graph, placeholders, first output) of ``case`` built on placeholders."""
    g, phs, out = _build_all(case, arrays, grad)
    return g, phs, _first(out)
