"""TensorFlow's op names, argument spellings and result dtypes, over ember ops.

Tensors are ember Tensors: in eager code they hold numbers, and on placeholders and graph
Variables the same ops build graph nodes (``ember.static``). What differs from ember's PyTorch
face is TensorFlow's:

- dtype inference: Python floats are float32 and Python ints int32 (NumPy arrays keep their
  dtype, so float64 data stays float64), ``convert_to_tensor`` refuses a tensor of another dtype;
- reductions: ``reduce_sum`` keeps the input's dtype (int32 stays int32), ``reduce_mean`` of
  integers is an integer (truncated) mean, ``axis`` takes an int, a list or None, ``keepdims``;
- ``argmax`` defaults to ``axis=0``; ``divide`` of integers gives floats; ``transpose`` with no
  ``perm`` reverses the dimensions.

>>> import ember.compat.tf as tf
>>> x = tf.constant([[1, 2], [3, 4]])
>>> x.dtype, tf.reduce_mean(x), tf.reduce_sum(x, axis=0, keepdims=True)
(ember.int32, tensor(2, dtype=ember.int32), tensor([[4, 6]], dtype=ember.int32))

The ops are a package, one module per kind: ``dtypes``, ``execution`` (eager or graph),
``conversion``, ``creation``, ``arithmetic``, ``reductions``, ``shapes`` and ``sampling``
(random ops), with the argument helpers they share in ``_arguments``; this module gathers
every name.
"""

from __future__ import annotations

from ._arguments import _dims, _shape
from .arithmetic import (
    _compare,
    _unary,
    abs,
    add,
    add_n,
    cast,
    ceil,
    clip_by_value,
    cos,
    divide,
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tanh,
    truediv,
    where,
)
from .conversion import _INT32, _binary, _infer_dtype, constant, convert_to_tensor
from .creation import fill, one_hot, ones, ones_like, range, zeros, zeros_like
from .dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    newaxis,
    uint8,
)
from .execution import _defining, _graph_mode, executing_eagerly, init_scope
from .reductions import (
    _reduce,
    _refuse_bool,
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from .sampling import (
    random_normal,
    random_shuffle,
    random_uniform,
    set_random_seed,
    truncated_normal,
)
from .shapes import concat, expand_dims, rank, reshape, shape, size, squeeze, stack, transpose

__all__ = [
    "DType",
    "abs",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "as_dtype",
    "bfloat16",
    "bool",
    "cast",
    "ceil",
    "clip_by_value",
    "concat",
    "constant",
    "convert_to_tensor",
    "cos",
    "divide",
    "double",
    "equal",
    "executing_eagerly",
    "exp",
    "expand_dims",
    "fill",
    "float16",
    "float32",
    "float64",
    "floor",
    "greater",
    "greater_equal",
    "half",
    "identity",
    "init_scope",
    "int16",
    "int32",
    "int64",
    "int8",
    "less",
    "less_equal",
    "log",
    "matmul",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "newaxis",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "pow",
    "random_normal",
    "random_shuffle",
    "random_uniform",
    "range",
    "rank",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reshape",
    "round",
    "rsqrt",
    "set_random_seed",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "size",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "stop_gradient",
    "subtract",
    "tanh",
    "transpose",
    "truediv",
    "truncated_normal",
    "uint8",
    "where",
    "zeros",
    "zeros_like",
]
