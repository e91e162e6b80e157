"""Example op-table file: the ops the foundation started with (families add their own)."""

import numpy as np

from .harness import OpCase, generate

CASES = [
    OpCase("add", lambda m, a, b: m.add(a, b), [(3, 4), (4,)], ref=np.add),
    OpCase("mul_bcast", lambda m, a, b: a * b, [(2, 1, 3), (4, 1)], ref=np.multiply),
    OpCase("mm", lambda m, a, b: m.mm(a, b), [(3, 4), (4, 2)], ref=np.matmul, transpose=True),
    OpCase("tanh_0d", lambda m, a: m.tanh(a), [()], ref=np.tanh),
    OpCase("exp_empty", lambda m, a: m.exp(a), [(0, 3)], ref=np.exp),
]
generate(globals(), CASES)
