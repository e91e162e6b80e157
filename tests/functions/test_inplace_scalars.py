"""In-place arithmetic with a Python scalar (``add_``, ``sub_``, ``mul_``, ``div_``) against
PyTorch: values, dtype, the refusal where the result would change the tensor's dtype, and one
version bump. Integer counters (BatchNorm's ``num_batches_tracked.add_(1)``) take the same
no-autograd path as floats (``ember.functions.inplace._fast``): the table checks both paths give
PyTorch's answers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

DTYPES = ("int64", "int32", "uint8", "float32", "float64")
SCALARS = (3, -2, 2.5, 2**62)
METHODS = ("add_", "sub_", "mul_", "div_")


def _torch(dtype: str, method: str, scalar):
    t = torch.tensor([7, 1, 250], dtype=getattr(torch, dtype))
    try:
        getattr(t, method)(scalar)
    except RuntimeError as e:
        return None, str(e)
    return t.numpy(), None


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_scalar_matches_torch(dtype, method, scalar):
    want, refusal = _torch(dtype, method, scalar)
    if dtype == "uint8" and isinstance(scalar, int) and not 0 <= scalar < 256:
        pytest.skip("PyTorch wraps an out-of-range scalar into uint8 silently")
    if dtype == "int32" and scalar == 2**62:
        pytest.skip("PyTorch wraps an out-of-range scalar into int32 silently")
    x = ember.tensor([7, 1, 250], dtype=getattr(ember, dtype))
    version = x._version[0]
    if refusal is not None:
        with pytest.raises(ember.EmberError, match="can't be cast to the desired output type"):
            getattr(x, method)(scalar)
        return
    assert getattr(x, method)(scalar) is x
    assert x.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(x.numpy(), want)
    assert x._version[0] == version + 1
