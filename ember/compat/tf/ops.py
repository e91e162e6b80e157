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
"""

from __future__ import annotations

import builtins
import contextlib
import math as _math

import numpy as np

import ember
from ember import dtypes as _dt
from ember._config import state
from ember._errors import DTypeError, EmberError, ShapeError
from ember._tensor import Tensor

float16 = half = _dt.float16
bfloat16 = _dt.bfloat16
float32 = _dt.float32
float64 = double = _dt.float64
int8 = _dt.int8
int16 = _dt.int16
int32 = _dt.int32
int64 = _dt.int64
uint8 = _dt.uint8
bool = _dt.bool_  # noqa: A001  (tf.bool)
DType = _dt.DType
newaxis = None

_INT32 = np.iinfo(np.int32)
# ``tf.compat.v1.disable_eager_execution()`` sets this: Variables then go into graphs even
# before the first placeholder is made.
_graph_mode = [False]


def _defining() -> builtins.bool:
    """Whether TF1 graph building is on (a placeholder, Graph.as_default, or eager disabled)."""
    tr = state.tracer
    return _graph_mode[0] or (tr is not None and getattr(tr, "define", False))


@contextlib.contextmanager
def init_scope():
    """Run the block eagerly even inside ``tf.function`` tracing (where Keras makes weights and
    optimizer slots on the first call, as TensorFlow's ``init_scope``).

    >>> import ember.compat.tf as tf
    >>> with tf.init_scope():
    ...     v = tf.Variable(1.0)
    """
    tr = state.tracer
    if tr is None or getattr(tr, "define", False):
        yield
        return
    state.tracer = None
    try:
        yield
    finally:
        state.tracer = tr


def executing_eagerly() -> builtins.bool:
    """False while TF1 graphs are being built (placeholders exist, a ``Graph.as_default()``
    block is open, or eager execution was disabled), else True.

    >>> import ember.compat.tf as tf
    >>> tf.executing_eagerly()
    True
    """
    return not _defining()


def as_dtype(dtype) -> DType:
    """TensorFlow's reading of a dtype spelling: Python ``float`` is float32, ``int`` int32.

    >>> import ember.compat.tf as tf
    >>> tf.as_dtype(float), tf.as_dtype("int64"), tf.as_dtype(tf.bool)
    (ember.float32, ember.int64, ember.bool)
    """
    if dtype is builtins.float:
        return float32
    if dtype is builtins.int:
        return int32
    return _dt.to_dtype(dtype)


def _infer_dtype(value) -> DType:
    """The dtype TensorFlow gives ``value``: NumPy arrays keep theirs, Python numbers don't."""
    if isinstance(value, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(value.dtype)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise DTypeError(f"convert_to_tensor: can't convert {type(value).__name__}: {e}") from None
    kind = arr.dtype.kind
    if kind == "b":
        return bool
    if kind in "iu":
        if arr.size and (arr.min() < _INT32.min or arr.max() > _INT32.max):
            return int64
        return int32
    if kind == "f":
        return float32
    raise DTypeError(
        f"convert_to_tensor: can't convert {type(value).__name__} of NumPy kind "
        f"{arr.dtype} to a tensor"
    )


def convert_to_tensor(value, dtype=None, dtype_hint=None, name: str | None = None) -> Tensor:
    """``value`` as a tensor: tensors are returned as they are (a different ``dtype`` is an
    error), lists of tensors are stacked, other data get TensorFlow's dtype (Python floats
    float32, ints int32; NumPy arrays keep theirs) unless ``dtype`` says otherwise.

    >>> import numpy as np, ember.compat.tf as tf
    >>> tf.convert_to_tensor(1.5).dtype, tf.convert_to_tensor([1, 2]).dtype
    (ember.float32, ember.int32)
    >>> tf.convert_to_tensor(np.zeros(2)).dtype, tf.convert_to_tensor([1, 2], tf.float32)
    (ember.float64, tensor([1., 2.]))
    """
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise DTypeError(
                f"convert_to_tensor: requested dtype {as_dtype(dtype).name} for a tensor of "
                f"dtype {value.dtype.name}; use tf.cast"
            )
        return value
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, Tensor) for v in value):
        return ember.stack([convert_to_tensor(v, dtype) for v in value])
    if dtype is None:
        d = _infer_dtype(value) if dtype_hint is None else as_dtype(dtype_hint)
        if dtype_hint is not None and _infer_dtype(value).is_floating_point > d.is_floating_point:
            d = _infer_dtype(value)
    else:
        d = as_dtype(dtype)
        if not d.is_floating_point:
            src = value.dtype if isinstance(value, (np.ndarray, np.generic)) else None
            if src is None:
                src = np.asarray(value).dtype
            if src.kind == "f":
                raise DTypeError(
                    f"convert_to_tensor: can't convert floating-point data to {d.name}; use tf.cast"
                )
    return ember.tensor(value, dtype=d)


def constant(value, dtype=None, shape=None, name: str | None = None) -> Tensor:
    """A tensor of ``value`` (TensorFlow's dtype inference); with ``shape``, a scalar is filled
    in and other values are reshaped.

    >>> import ember.compat.tf as tf
    >>> tf.constant(2.0, shape=(2, 2))
    tensor([[2., 2.],
            [2., 2.]])
    >>> tf.constant([1, 2, 3, 4], shape=[2, 2], dtype=tf.float64)
    tensor([[1., 2.],
            [3., 4.]], dtype=ember.float64)
    """
    if isinstance(value, Tensor):
        t = value if dtype is None else value.to(as_dtype(dtype))
    else:
        t = convert_to_tensor(value, dtype)
    if shape is None:
        return t
    shape = _shape(shape, "constant")
    n = _math.prod(shape)
    if t.numel() == 1 and n != 1:
        return t.reshape(()).expand(*shape).clone()
    if t.numel() != n:
        raise ShapeError(f"constant: {t.numel()} values can't fill shape {shape} ({n} elements)")
    return t.reshape(shape)


def _shape(shape, what: str) -> tuple:
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (builtins.int, np.integer)):
        return (builtins.int(shape),)
    try:
        return tuple(builtins.int(s) for s in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"{what}: shape must be ints, got {shape!r}") from None


def _dims(x: Tensor, axis, what: str) -> tuple:
    if axis is None:
        return tuple(builtins.range(x.ndim))
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        dims = tuple(builtins.int(a) for a in axis)
    else:
        dims = (builtins.int(axis),)
    for a in dims:
        if not -x.ndim <= a < max(x.ndim, 1):
            raise ShapeError(
                f"{what}: axis {a} is out of range for a tensor of rank {x.ndim} "
                f"(shape {tuple(x.shape)})"
            )
    return dims


def _binary(x, y) -> tuple[Tensor, Tensor]:
    """Convert Python operands to the other operand's dtype, as TensorFlow does."""
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            y = convert_to_tensor(y, x.dtype)
    elif isinstance(y, Tensor):
        x = convert_to_tensor(x, y.dtype)
    else:
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, x.dtype) if not isinstance(y, Tensor) else y
    return x, y


# -- creation ----------------------------------------------------------------------------------
def zeros(shape, dtype=float32, name: str | None = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.zeros((2,), tf.int32)
    tensor([0, 0], dtype=ember.int32)
    """
    return ember.zeros(_shape(shape, "zeros"), dtype=as_dtype(dtype))


def ones(shape, dtype=float32, name: str | None = None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.ones([2, 1])
    tensor([[1.],
            [1.]])
    """
    return ember.ones(_shape(shape, "ones"), dtype=as_dtype(dtype))


def zeros_like(input, dtype=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Zeros of ``input``'s shape (and dtype unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.zeros_like(tf.constant([1.0, 2.0]))
    tensor([0., 0.])
    """
    x = convert_to_tensor(input)
    return ember.zeros_like(x, dtype=None if dtype is None else as_dtype(dtype))


def ones_like(input, dtype=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Ones of ``input``'s shape (and dtype unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.ones_like(tf.constant([1, 2]))
    tensor([1, 1], dtype=ember.int32)
    """
    x = convert_to_tensor(input)
    return ember.ones_like(x, dtype=None if dtype is None else as_dtype(dtype))


def fill(dims, value, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` filled with ``value`` (its TensorFlow dtype).

    >>> import ember.compat.tf as tf
    >>> tf.fill([2], 7)
    tensor([7, 7], dtype=ember.int32)
    """
    v = convert_to_tensor(value)
    return ember.full(_shape(dims, "fill"), v.item(), dtype=v.dtype)


def range(start, limit=None, delta=1, dtype=None, name: str | None = None) -> Tensor:  # noqa: A001
    """``start, start + delta, ...`` below ``limit`` (int32 for ints, float32 for floats).

    >>> import ember.compat.tf as tf
    >>> tf.range(3), tf.range(0.0, 1.0, 0.5)
    (tensor([0, 1, 2], dtype=ember.int32), tensor([0.0000, 0.5000]))
    """
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        dtype = _infer_dtype([start, limit, delta])
    return ember.arange(start, limit, delta, dtype=as_dtype(dtype))


def one_hot(indices, depth: int, on_value=None, off_value=None, axis=None, dtype=None):
    """One-hot rows (float32 unless ``dtype``) along a new last axis; out-of-range indices give
    all ``off_value``.

    >>> import ember.compat.tf as tf
    >>> tf.one_hot([0, 2], 3)
    tensor([[1., 0., 0.],
            [0., 0., 1.]])
    """
    if axis not in (None, -1):
        raise EmberError("one_hot: only axis=-1 (a new last axis) is supported")
    idx = convert_to_tensor(indices)
    d = as_dtype(dtype) if dtype is not None else float32
    hot = idx.unsqueeze(-1) == ember.arange(depth, dtype=idx.dtype)
    if on_value is None and off_value is None:
        return hot.to(d)
    on = convert_to_tensor(1 if on_value is None else on_value, d)
    off = convert_to_tensor(0 if off_value is None else off_value, d)
    return ember.where(hot, on, off)


# -- math --------------------------------------------------------------------------------------
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


# -- reductions --------------------------------------------------------------------------------
def _refuse_bool(x: Tensor, what: str) -> None:
    if x.dtype is bool:
        raise DTypeError(f"{what}: bool tensors are not supported; cast them first (tf.cast)")


def _reduce(fn, x: Tensor, axis, keepdims, what: str) -> Tensor:
    """``fn(x, dim=..., keepdim=keepdims)`` over TensorFlow's ``axis`` (``x`` itself when empty)."""
    dims = _dims(x, axis, what)
    return fn(x, dim=dims, keepdim=keepdims) if dims else x


def reduce_sum(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Sum over ``axis`` (an int, a list, or None for all); the result keeps the input's dtype.

    >>> import ember.compat.tf as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.reduce_sum(x), tf.reduce_sum(x, axis=1), tf.reduce_sum(x, [0, 1], keepdims=True)
    (tensor(10.), tensor([3., 7.]), tensor([[10.]]))
    """
    x = convert_to_tensor(input_tensor)
    _refuse_bool(x, "reduce_sum")
    dims = _dims(x, axis, "reduce_sum")
    if not dims:
        return x
    out = ember.sum(x, dim=dims, keepdim=keepdims)
    return out if out.dtype == x.dtype else out.to(x.dtype)


def reduce_mean(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Mean over ``axis``; the mean of integers is an integer (truncated toward zero).

    >>> import ember.compat.tf as tf
    >>> tf.reduce_mean(tf.constant([1, 2])), tf.reduce_mean(tf.constant([1.0, 2.0]))
    (tensor(1, dtype=ember.int32), tensor(1.5000))
    """
    x = convert_to_tensor(input_tensor)
    _refuse_bool(x, "reduce_mean")
    dims = _dims(x, axis, "reduce_mean")
    if not dims:
        return x
    if x.dtype.is_floating_point:
        return ember.mean(x, dim=dims, keepdim=keepdims)
    n = 1
    for d in dims:
        n = n * x.shape[d]
    s = ember.sum(x, dim=dims, keepdim=keepdims)
    if isinstance(n, builtins.int):
        n = builtins.max(n, 1)
    return ember.div(s, n, rounding_mode="trunc").to(x.dtype)


def reduce_max(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Maximum over ``axis`` (the gradient is shared among tied maxima).

    >>> import ember.compat.tf as tf
    >>> tf.reduce_max(tf.constant([[1, 5], [3, 4]]), axis=1)
    tensor([5, 4], dtype=ember.int32)
    """
    return _reduce(ember.amax, convert_to_tensor(input_tensor), axis, keepdims, "reduce_max")


def reduce_min(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Minimum over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_min(tf.constant([[1.0, 5.0], [3.0, 4.0]]))
    tensor(1.)
    """
    return _reduce(ember.amin, convert_to_tensor(input_tensor), axis, keepdims, "reduce_min")


def reduce_prod(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Product over ``axis``; keeps the input's dtype.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_prod(tf.constant([[1, 2], [3, 4]]), axis=0)
    tensor([3, 8], dtype=ember.int32)
    """
    x = convert_to_tensor(input_tensor)
    dims = _dims(x, axis, "reduce_prod")
    out = x
    for d in sorted({d % x.ndim for d in dims}, reverse=True):
        out = ember.prod(out, dim=d, keepdim=keepdims)
    return out if out.dtype == x.dtype else out.to(x.dtype)


def reduce_logsumexp(input_tensor, axis=None, keepdims: builtins.bool = False, name=None):
    """``log(sum(exp(x)))`` over ``axis``, computed stably.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_logsumexp(tf.constant([0.0, 0.0]))
    tensor(0.6931)
    """
    return _reduce(
        ember.logsumexp, convert_to_tensor(input_tensor), axis, keepdims, "reduce_logsumexp"
    )


def reduce_any(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Logical or over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_any(tf.constant([[True, False], [False, False]]), axis=1)
    tensor([ True, False])
    """
    return _reduce(
        ember.amax, convert_to_tensor(input_tensor).to(bool), axis, keepdims, "reduce_any"
    )


def reduce_all(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Logical and over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_all(tf.constant([[True, False], [True, True]]), axis=1)
    tensor([False,  True])
    """
    return _reduce(
        ember.amin, convert_to_tensor(input_tensor).to(bool), axis, keepdims, "reduce_all"
    )


def argmax(input, axis=None, output_type=int64, name: str | None = None) -> Tensor:  # noqa: A002
    """Index of the maximum along ``axis`` (default 0, as TensorFlow), int64 unless
    ``output_type``.

    >>> import ember.compat.tf as tf
    >>> tf.argmax(tf.constant([[1, 5], [3, 4]])), tf.argmax([[1, 5], [3, 4]], axis=1)
    (tensor([1, 0]), tensor([1, 1]))
    """
    x = convert_to_tensor(input)
    return ember.argmax(x, dim=0 if axis is None else builtins.int(axis)).to(as_dtype(output_type))


def argmin(input, axis=None, output_type=int64, name: str | None = None) -> Tensor:  # noqa: A002
    """Index of the minimum along ``axis`` (default 0), int64 unless ``output_type``.

    >>> import ember.compat.tf as tf
    >>> tf.argmin(tf.constant([3.0, 1.0, 2.0]))
    tensor(1)
    """
    x = convert_to_tensor(input)
    return ember.argmin(x, dim=0 if axis is None else builtins.int(axis)).to(as_dtype(output_type))


# -- shapes ------------------------------------------------------------------------------------
def shape(input, out_type=int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The shape of ``input`` as a 1-D int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.shape(tf.zeros((2, 3)))
    tensor([2, 3], dtype=ember.int32)
    """
    return ember.tensor(list(convert_to_tensor(input).shape), dtype=as_dtype(out_type))


def size(input, out_type=int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of elements of ``input`` as a 0-d int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.size(tf.zeros((2, 3)))
    tensor(6, dtype=ember.int32)
    """
    return ember.tensor(convert_to_tensor(input).numel(), dtype=as_dtype(out_type))


def rank(input, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of ``input`` as a 0-d int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.rank(tf.zeros((2, 3)))
    tensor(2, dtype=ember.int32)
    """
    return ember.tensor(convert_to_tensor(input).ndim, dtype=int32)


def reshape(tensor, shape, name: str | None = None) -> Tensor:
    """``tensor`` with a new shape (one size may be -1).

    >>> import ember.compat.tf as tf
    >>> tf.reshape(tf.range(6), [2, -1]).shape
    ember.Size([2, 3])
    """
    return convert_to_tensor(tensor).reshape(_shape(shape, "reshape"))


def transpose(a, perm=None, name: str | None = None) -> Tensor:
    """``a`` with its dimensions permuted by ``perm`` (default: reversed).

    >>> import ember.compat.tf as tf
    >>> tf.transpose(tf.zeros((2, 3, 4))).shape
    ember.Size([4, 3, 2])
    """
    x = convert_to_tensor(a)
    perm = tuple(reversed(builtins.range(x.ndim))) if perm is None else _shape(perm, "transpose")
    return x.permute(*perm)


def concat(values, axis: int, name: str | None = None) -> Tensor:
    """Join tensors along an existing ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.concat([tf.zeros((1, 2)), tf.ones((1, 2))], axis=0).shape
    ember.Size([2, 2])
    """
    return ember.cat([convert_to_tensor(v) for v in values], dim=builtins.int(axis))


def stack(values, axis: int = 0, name: str | None = None) -> Tensor:
    """Join tensors along a new ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.stack([tf.zeros(2), tf.ones(2)], axis=1).shape
    ember.Size([2, 2])
    """
    return ember.stack([convert_to_tensor(v) for v in values], dim=builtins.int(axis))


def squeeze(input, axis=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Drop size-1 dimensions (all of them, or those in ``axis``).

    >>> import ember.compat.tf as tf
    >>> tf.squeeze(tf.zeros((1, 2, 1)), axis=[0]).shape
    ember.Size([2, 1])
    """
    x = convert_to_tensor(input)
    if axis is None:
        return ember.squeeze(x)
    for d in sorted({d % x.ndim for d in _dims(x, axis, "squeeze")}, reverse=True):
        if x.shape[d] != 1:
            raise ShapeError(
                f"squeeze: can't squeeze dimension {d} of size {x.shape[d]} "
                f"(shape {tuple(x.shape)})"
            )
        x = x.squeeze(d)
    return x


def expand_dims(input, axis: int, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` with a size-1 dimension inserted at ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.expand_dims(tf.zeros(3), -1).shape
    ember.Size([3, 1])
    """
    return convert_to_tensor(input).unsqueeze(builtins.int(axis))


# -- random ------------------------------------------------------------------------------------
def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None) -> Tensor:
    """Normal samples (float32 unless ``dtype``) from ember's generator: seed it with
    ``tf.random.set_seed``; the op-level ``seed`` is accepted and ignored.

    >>> import ember.compat.tf as tf
    >>> tf.random.set_seed(0)
    >>> tf.random_normal((2, 3), stddev=0.1).shape
    ember.Size([2, 3])
    """
    t = ember.randn(_shape(shape, "random_normal"), dtype=as_dtype(dtype))
    if stddev != 1:
        t = t * stddev
    if not (isinstance(mean, (builtins.int, builtins.float)) and mean == 0):
        t = t + mean
    return t


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations of ``mean``.

    >>> import ember.compat.tf as tf
    >>> (tf.reduce_max(tf.abs(tf.random.truncated_normal((100,)))) <= 2).item()
    True
    """
    t = ember.empty(_shape(shape, "truncated_normal"), dtype=as_dtype(dtype))
    lo, hi = mean - 2 * stddev, mean + 2 * stddev
    return ember.nn.init.trunc_normal_(t, mean=mean, std=stddev, a=lo, b=hi)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (``maxval`` defaults to 1 for floats; integer
    dtypes need it).

    >>> import ember.compat.tf as tf
    >>> x = tf.random.uniform((100,), -1.0, 1.0)
    >>> (tf.reduce_min(x) >= -1.0).item(), tf.random.uniform((2,), 0, 5, tf.int32).dtype
    (True, ember.int32)
    """
    d = as_dtype(dtype)
    shp = _shape(shape, "random_uniform")
    if not d.is_floating_point:
        if maxval is None:
            raise EmberError(f"random.uniform: maxval is needed for an integer dtype ({d.name})")
        return ember.randint(builtins.int(minval), builtins.int(maxval), shp, dtype=d)
    if maxval is None:
        maxval = 1.0
    t = ember.rand(shp, dtype=d)
    if (minval, maxval) != (0, 1):
        t = t * (maxval - minval) + minval
    return t


def set_random_seed(seed: int) -> None:
    """Seed the generator every random op draws from (``tf.random.set_seed``).

    >>> import ember.compat.tf as tf
    >>> tf.random.set_seed(1); a = tf.random.normal((2,))
    >>> tf.random.set_seed(1); tf.reduce_all(a == tf.random.normal((2,))).item()
    True
    """
    ember.manual_seed(seed)


def random_shuffle(value, seed=None, name: str | None = None) -> Tensor:
    """``value`` with its first dimension shuffled.

    >>> import ember.compat.tf as tf
    >>> sorted(tf.random.shuffle(tf.range(4)).tolist())
    [0, 1, 2, 3]
    """
    x = convert_to_tensor(value)
    return x[ember.randperm(x.shape[0])]


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
