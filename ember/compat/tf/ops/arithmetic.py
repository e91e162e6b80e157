"""Math ops with TensorFlow's spellings: matmul, arithmetic (``divide`` of integers gives
floats), the unary functions, comparisons, add_n, clip_by_value, where, cast, identity and
stop_gradient; Python operands take the other operand's dtype.

>>> import ember.compat.tf as tf
>>> tf.divide(tf.constant(3), 2)
tensor(1.5000, dtype=ember.float64)
"""

from __future__ import annotations

import builtins

import ember
from ember._errors import EmberError
from ember._tensor import Tensor

from .conversion import _binary, convert_to_tensor
from .dtypes import as_dtype, float32, float64


def matmul(
    a,
    b,
    transpose_a: builtins.bool = False,
    transpose_b: builtins.bool = False,
    name: str | None = None,
) -> Tensor:
    """Matrix product (batched over leading dimensions), optionally transposing an operand.

    >>> import ember.compat.tf as tf
    >>> tf.matmul(tf.ones((2, 3)), tf.ones((2, 3)), transpose_b=True)
    tensor([[3., 3.],
            [3., 3.]])
    """
    a = convert_to_tensor(a)
    b = convert_to_tensor(b)
    if transpose_a:
        a = a.transpose(-2, -1)
    if transpose_b:
        b = b.transpose(-2, -1)
    return ember.matmul(a, b)


def maximum(x, y, name: str | None = None) -> Tensor:
    """Elementwise maximum; a Python operand takes the other's dtype.

    >>> import ember.compat.tf as tf
    >>> tf.maximum(tf.constant([-1.0, 2.0]), 0)
    tensor([0., 2.])
    """
    return ember.maximum(*_binary(x, y))


def minimum(x, y, name: str | None = None) -> Tensor:
    """Elementwise minimum; a Python operand takes the other's dtype.

    >>> import ember.compat.tf as tf
    >>> tf.minimum(tf.constant([-1, 2]), 0)
    tensor([-1,  0], dtype=ember.int32)
    """
    return ember.minimum(*_binary(x, y))


def add(x, y, name: str | None = None) -> Tensor:
    """``x + y``.

    >>> import ember.compat.tf as tf
    >>> tf.add(tf.constant([1, 2]), 1)
    tensor([2, 3], dtype=ember.int32)
    """
    x, y = _binary(x, y)
    return x + y


def subtract(x, y, name: str | None = None) -> Tensor:
    """``x - y``.

    >>> import ember.compat.tf as tf
    >>> tf.subtract(3.0, tf.constant([1.0]))
    tensor([2.])
    """
    x, y = _binary(x, y)
    return x - y


def multiply(x, y, name: str | None = None) -> Tensor:
    """``x * y``.

    >>> import ember.compat.tf as tf
    >>> tf.multiply(tf.constant([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    x, y = _binary(x, y)
    return x * y


def divide(x, y, name: str | None = None) -> Tensor:
    """True division; integer operands give floats (float64 for 32- and 64-bit integers).

    >>> import ember.compat.tf as tf
    >>> tf.divide(tf.constant([1, 3]), 2)
    tensor([0.5000, 1.5000], dtype=ember.float64)
    """
    x, y = _binary(x, y)
    if not x.dtype.is_floating_point and not y.dtype.is_floating_point:
        wide = max(x.dtype.itemsize, y.dtype.itemsize) >= 4
        d = float64 if wide else float32
        x, y = x.to(d), y.to(d)
    return x / y


truediv = divide


def pow(x, y, name: str | None = None) -> Tensor:  # noqa: A001
    """``x ** y``.

    >>> import ember.compat.tf as tf
    >>> tf.pow(tf.constant([2.0, 3.0]), 2)
    tensor([4., 9.])
    """
    x, y = _binary(x, y)
    return x**y


def square(x, name: str | None = None) -> Tensor:
    """``x * x``.

    >>> import ember.compat.tf as tf
    >>> tf.square(tf.constant([3]))
    tensor([9], dtype=ember.int32)
    """
    x = convert_to_tensor(x)
    return x * x


def _unary(fn, doc_name: str):
    def op(x, name: str | None = None) -> Tensor:
        return fn(convert_to_tensor(x))

    op.__name__ = op.__qualname__ = doc_name
    op.__doc__ = f"Elementwise ``{doc_name}`` (TensorFlow spelling of ``ember.{fn.__name__}``)."
    return op


sqrt = _unary(ember.sqrt, "sqrt")
rsqrt = _unary(ember.rsqrt, "rsqrt")
exp = _unary(ember.exp, "exp")
log = _unary(ember.log, "log")
abs = _unary(ember.abs, "abs")  # noqa: A001
negative = _unary(ember.neg, "negative")
sign = _unary(ember.sign, "sign")
floor = _unary(ember.floor, "floor")
ceil = _unary(ember.ceil, "ceil")
round = _unary(ember.round, "round")  # noqa: A001  (half to even, as TensorFlow)
tanh = _unary(ember.tanh, "tanh")
sigmoid = _unary(ember.sigmoid, "sigmoid")
sin = _unary(ember.sin, "sin")
cos = _unary(ember.cos, "cos")


def _compare(fn, doc_name: str):
    def op(x, y, name: str | None = None) -> Tensor:
        return fn(*_binary(x, y))

    op.__name__ = op.__qualname__ = doc_name
    op.__doc__ = f"Elementwise ``{doc_name}`` comparison (bool result)."
    return op


equal = _compare(ember.eq, "equal")
not_equal = _compare(ember.ne, "not_equal")
greater = _compare(ember.gt, "greater")
greater_equal = _compare(ember.ge, "greater_equal")
less = _compare(ember.lt, "less")
less_equal = _compare(ember.le, "less_equal")


def add_n(inputs, name: str | None = None) -> Tensor:
    """The sum of a list of tensors.

    >>> import ember.compat.tf as tf
    >>> tf.add_n([tf.ones(2), tf.ones(2), tf.ones(2)])
    tensor([3., 3.])
    """
    inputs = [convert_to_tensor(t) for t in inputs]
    out = inputs[0]
    for t in inputs[1:]:
        out = out + t
    return out


def clip_by_value(t, clip_value_min, clip_value_max, name: str | None = None) -> Tensor:
    """``t`` clipped into ``[clip_value_min, clip_value_max]``.

    >>> import ember.compat.tf as tf
    >>> tf.clip_by_value(tf.constant([-2.0, 0.5, 3.0]), 0.0, 1.0)
    tensor([0.0000, 0.5000, 1.0000])
    """
    return ember.clamp(convert_to_tensor(t), clip_value_min, clip_value_max)


def where(condition, x=None, y=None, name: str | None = None) -> Tensor:
    """Elements of ``x`` where ``condition`` holds, else of ``y``.

    >>> import ember.compat.tf as tf
    >>> tf.where(tf.constant([True, False]), tf.constant([1.0, 2.0]), 0.0)
    tensor([1., 0.])
    """
    if x is None or y is None:
        raise EmberError("where: give both x and y (the one-argument form is not supported)")
    x, y = _binary(x, y)
    return ember.where(convert_to_tensor(condition), x, y)


def cast(x, dtype, name: str | None = None) -> Tensor:
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero).

    >>> import ember.compat.tf as tf
    >>> tf.cast(tf.constant([1.7, -1.7]), tf.int32)
    tensor([ 1, -1], dtype=ember.int32)
    """
    return convert_to_tensor(x).to(as_dtype(dtype))


def identity(input, name: str | None = None) -> Tensor:  # noqa: A002
    """A copy of ``input`` (gradients pass through).

    >>> import ember.compat.tf as tf
    >>> tf.identity(tf.constant([1.0]))
    tensor([1.])
    """
    return convert_to_tensor(input).clone()


def stop_gradient(input, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` with no gradient flowing back through it.

    >>> import ember.compat.tf as tf
    >>> tf.stop_gradient(tf.constant([1.0])).requires_grad
    False
    """
    return convert_to_tensor(input).detach()
