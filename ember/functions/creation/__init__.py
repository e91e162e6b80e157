"""Creating tensors: from data, filled, ranges and random.

Every function takes ``dtype=``, ``device=`` and ``requires_grad=`` as PyTorch's does, and
infers dtypes by PyTorch's rules: Python floats give the default dtype (float32), ints int64,
bools bool, NumPy arrays and scalars and tensors keep theirs, and mixed data promotes with
``promote_types``.

>>> import ember
>>> ember.zeros(2, 3).shape, ember.arange(5).dtype, ember.tensor([1.5]).dtype
(ember.Size([2, 3]), ember.int64, ember.float32)
"""

from ._arguments import _device, _dtype, _finish, _Number, _size
from .filled import empty, empty_like, full, full_like, ones, ones_like, zeros, zeros_like
from .from_data import _host_array, as_tensor, from_numpy, scalar_tensor, tensor
from .new_methods import new, new_empty, new_full, new_ones, new_tensor, new_zeros
from .random_tensors import (
    _anchor,
    _drawn,
    _random_float,
    _random_op,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from .ranges import arange, eye, linspace, logspace

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "scalar_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "rand_like",
    "randn_like",
    "randint_like",
    "randperm",
]
TENSOR_METHODS = {
    "new_tensor": new_tensor,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "new_full": new_full,
    "new": new,
}
