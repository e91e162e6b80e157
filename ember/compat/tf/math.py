"""``tf.math``: the elementwise and reduction ops under their ``tf.math`` names.

>>> import ember.compat.tf as tf
>>> tf.math.reduce_sum(tf.math.square([1, 2]))
tensor(5, dtype=ember.int32)
"""

from .nn import softplus  # noqa: F401
from .ops import (  # noqa: F401
    abs,
    add,
    add_n,
    argmax,
    argmin,
    ceil,
    cos,
    divide,
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tanh,
    truediv,
)
