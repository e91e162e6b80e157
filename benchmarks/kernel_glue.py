"""The Python around ember's GPU elementwise launches, timed without a GPU.

Eager GPU steps are bound by the host: every op's Python runs before its kernel is queued.
This times the glue of the 16-byte-access kernels (``ember/backend/kernels/vectorized.py``,
``half_elementwise.py``, ``relu.py``, ``row_copy.py``, ``cast.py``) on NumPy arrays with a
``RawKernel`` whose launch does nothing, so only ember's own Python counts; the address read
is made free, as CuPy's ``a.data.ptr`` is an attribute read. For scale, on an H200 CuPy's own
bfloat16 add costs about 12 us of host time a call and a ``RawKernel`` launch about 6 us.

    python benchmarks/kernel_glue.py
"""

from __future__ import annotations

import types

import ml_dtypes
import numpy as np
from _timing import best_of

from ember.backend.kernels import cast, half_elementwise, relu, row_copy, vectorized


class _NoLaunch:
    def __init__(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs) -> None:
        pass


def main() -> None:
    xp = types.SimpleNamespace(
        RawKernel=_NoLaunch,
        ElementwiseKernel=_NoLaunch,
        empty=np.empty,
        empty_like=np.empty_like,
        uint16=np.uint16,
    )
    vectorized.address = row_copy.address = lambda a: 0
    bf16 = ml_dtypes.bfloat16
    a, b = np.ones((256, 768), bf16), np.ones((256, 768), bf16)
    bias = np.ones(768, bf16)
    wide = np.ones((256, 768), np.float32)
    heads = np.ones((2, 16, 8, 64), bf16).transpose(0, 2, 1, 3)
    cases = {
        "bfloat16 add, same shapes": lambda: half_elementwise.binary(xp, "add", a, b),
        "bfloat16 add, a bias": lambda: half_elementwise.binary(xp, "add", a, bias),
        "relu": lambda: relu.relu(xp, a),
        "relu gradient": lambda: relu.relu_grad(xp, a, b),
        "head merge (row copy)": lambda: row_copy.c_order(xp, heads, (2, 8, 1024)),
        "cast float32 -> bfloat16": lambda: cast.cast(xp, wide, bf16),
    }
    for fn in cases.values():
        fn()  # plans and kernels built
    best = best_of(cases, repeats=5, steps=20000)
    print("Python host time a call, launch excluded (best of 5 x 20000 calls):")
    for name, seconds in best.items():
        print(f"  {name:28s} {seconds * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
