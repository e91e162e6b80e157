"""``tf.Variable``: an eager Variable, or a graph Variable while TF1 graphs are being built.

In eager code a Variable is an ember leaf tensor (an ``ember.nn.Parameter``, so Keras layers
register it). As in TensorFlow, operations are recorded for gradients only inside a
``GradientTape``: a trainable floating Variable requires grad while a tape is recording (the
tape "watches trainable variables automatically") and not otherwise, so eager code outside
tapes builds no autograd history and ``.numpy()`` works on its results. ``assign`` /
``assign_add`` / ``assign_sub`` write in place without recording a gradient, and work inside
``tf.function`` (``ember.compile`` writes them back). Ops on a Variable give ordinary tensors, and
``v += 1`` rebinds ``v`` to a tensor as in TensorFlow (it does not write the Variable).

While a TF1 graph is being built (a placeholder exists, a ``tf.Graph().as_default()`` block is
open, or ``tf.compat.v1.disable_eager_execution()`` was called), ``tf.Variable(...)`` returns an
``ember.static.Variable``: its value lives in each ``Session``, set by its initializer.

>>> import ember.compat.tf as tf
>>> v = tf.Variable([1.0, 2.0])
>>> v.assign_add([1.0, 1.0])
<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([2., 3.], dtype=float32)>
>>> (v * 2).numpy()
array([4., 6.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

import ember
from ember._errors import ShapeError
from ember._tensor import Tensor, _init
from ember.nn.parameter import Parameter

from . import ops as _ops
from .tape import _state as _tape_state

_SLOT = Tensor._requires_grad  # the flag a Variable's ``_requires_grad`` property stands before


def _is_trainable(t) -> bool:
    """Whether ``t`` is a trainable floating eager Variable (watched by tapes automatically)."""
    return isinstance(t, Variable) and t._auto_watch


class Variable(Parameter):
    """``Variable(initial_value, trainable=True, name=None, dtype=None)``: mutable state.

    ``initial_value`` may be a tensor, data (TensorFlow's dtype inference: Python floats are
    float32) or a callable returning one; the Variable holds a copy.

    >>> import ember.compat.tf as tf
    >>> w = tf.Variable(tf.zeros((2, 1)), name="w")
    >>> w.name, w.trainable, w.shape, w.dtype
    ('w:0', True, ember.Size([2, 1]), ember.float32)
    """

    __slots__ = ("_tf_name", "_trainable", "_auto_watch")

    def __new__(
        cls,
        initial_value=None,
        trainable=None,
        validate_shape: bool = True,
        name: str | None = None,
        dtype=None,
        **kwargs,
    ):
        if initial_value is None:
            raise ValueError("Variable: initial_value must be given")
        if callable(initial_value):
            initial_value = initial_value()
        trainable = True if trainable is None else bool(trainable)
        if _ops._defining():
            from ember import static

            if isinstance(initial_value, Tensor):
                init = initial_value
                if dtype is not None:
                    init = init.to(_ops.as_dtype(dtype))
            else:
                init = _ops.convert_to_tensor(initial_value, dtype)
            return static.Variable(init, name=name, trainable=trainable)
        if isinstance(initial_value, Tensor):
            t = initial_value.detach()
            if dtype is not None:
                t = t.to(_ops.as_dtype(dtype))
            t = t.clone()
        else:
            t = _ops.convert_to_tensor(initial_value, dtype)
            if isinstance(initial_value, np.ndarray) and np.shares_memory(t.numpy(), initial_value):
                t = t.clone()
        v = object.__new__(cls)
        v._auto_watch = False
        _init(v, t._data, False)
        v._version = t._version
        v._tf_name = name or "Variable"
        v._trainable = trainable
        v._auto_watch = bool(trainable and t.dtype.is_floating_point)
        return v

    def __init__(self, *args, **kwargs) -> None:
        pass  # everything happens in __new__

    @property
    def _requires_grad(self) -> bool:
        """A trainable floating Variable requires grad while a tape records on the calling
        thread (TensorFlow's automatic watching); any Variable also when its own flag is set."""
        return _SLOT.__get__(self) or (self._auto_watch and bool(_tape_state.recording))

    @_requires_grad.setter
    def _requires_grad(self, value: bool) -> None:
        _SLOT.__set__(self, value)

    # -- TensorFlow's surface -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._tf_name + ":0"

    @property
    def trainable(self) -> bool:
        return self._trainable

    def numpy(self, force: bool = False) -> np.ndarray:
        """A NumPy copy of the value."""
        return Tensor.numpy(self, force=True).copy()

    def value(self) -> Tensor:
        """The value as a tensor (a copy; gradients flow back to the Variable)."""
        return self.clone()

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value: bool = True):
        """Store ``value`` (same shape; converted to the Variable's dtype); returns the Variable.

        >>> import ember.compat.tf as tf
        >>> v = tf.Variable(0)
        >>> v.assign(5).numpy(), v.dtype
        (array(5, dtype=int32), ember.int32)
        """
        if isinstance(value, Tensor):
            new = value.detach()
            if new.dtype != self.dtype:
                new = new.to(self.dtype)
        else:
            new = ember.tensor(value, dtype=self.dtype)
        if tuple(new.shape) != tuple(self.shape):
            raise ShapeError(
                f"Variable.assign: value of shape {tuple(new.shape)} does not match the shape "
                f"{tuple(self.shape)} of variable '{self._tf_name}'"
            )
        with ember.no_grad():
            self.copy_(new)
        return self if read_value else None

    def assign_add(self, delta, use_locking=None, name=None, read_value: bool = True):
        """Add ``delta`` in place; returns the Variable."""
        return self.assign(self.detach() + _as_delta(delta, self), read_value=read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value: bool = True):
        """Subtract ``delta`` in place; returns the Variable."""
        return self.assign(self.detach() - _as_delta(delta, self), read_value=read_value)

    # ``v += x`` rebinds the name to a new tensor, as in TensorFlow (Variables change only
    # through assign).
    def __iadd__(self, other):
        return self + other

    def __isub__(self, other):
        return self - other

    def __imul__(self, other):
        return self * other

    def __itruediv__(self, other):
        return self / other

    def __repr__(self) -> str:
        arr = Tensor.numpy(self, force=True)
        shape = tuple(self.shape)
        return (
            f"<tf.Variable '{self.name}' shape={shape} dtype={self.dtype.name}, "
            f"numpy={np.array_repr(arr)}>"
        )

    __str__ = __repr__

    def __deepcopy__(self, memo: dict):
        if id(self) in memo:
            return memo[id(self)]
        result = Variable(self.detach().clone(), trainable=self._trainable, name=self._tf_name)
        memo[id(self)] = result
        return result

    def __reduce__(self):
        return (_rebuild, (self.numpy(), self._trainable, self._tf_name))


def _rebuild(array, trainable, name):
    return Variable(array, trainable=trainable, name=name)


def _as_delta(delta, v: Variable) -> Tensor:
    if isinstance(delta, Tensor):
        return delta.detach()
    return ember.tensor(delta, dtype=v.dtype)


__all__ = ["Variable"]
