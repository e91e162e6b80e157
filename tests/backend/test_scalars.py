"""``backend.scalars.power`` equals what a rule's ``Pow`` of 0-d float64 tensors gives, bit for
bit, on this CPU (NumPy's vectorized power, which on AVX-512 CPUs can differ from Python's)."""

import numpy as np

import ember
from ember.backend.scalars import power


def test_power_equals_the_rules_pow_of_0d_float64_tensors():
    bases = np.linspace(0.5, 0.9999, 60)
    for b in bases:
        for t in range(1, 30):
            base = ember.tensor(float(b), dtype=ember.float64)
            step = ember.tensor(float(t), dtype=ember.float64)
            want = float((base**step).item())
            assert power(float(b), float(t)) == want, (b, t)
            assert float((float(b) ** step).item()) == want, (b, t)  # a Python base: the same
