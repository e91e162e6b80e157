"""Sizes unknown until run time: a placeholder's ``None`` dimensions.

A placeholder made with ``None`` in its shape gets a ``Dim`` there: "dimension ``axis`` of this
input". Dims pass through shape arithmetic (``n * 3``, ``n // 2``...), compare equal to every
other Dim (two unknown sizes are assumed compatible; a mismatch fails at run time) and to no
int. Where they end up decides what happens:

- in an op's attributes (``Expand(shape=(n, 10))``, from the gradient of a sum): the executor
  substitutes the fed sizes before running (once per set of sizes);
- in a constant (``mean`` divides by ``n * 10``): the constant becomes a ``DimValue`` node that
  computes the number from the inputs' shapes at run time;
- anywhere that needs a Python int now (``range(n)``, ``int(n)``, NumPy shapes): a
  ``TraceError`` naming the dimension.

>>> import numpy as np
>>> from ember import static
>>> g = static.Graph()
>>> with g.as_default():
...     x = static.placeholder((None, 2), name="x")
...     m = x.mean()
...     (gx,) = static.gradients(m, [x])
>>> x.shape[0]
x.shape[0]
>>> static.Session(g).run(gx, {x: np.ones((4, 2), np.float32)})[0]
array([0.125, 0.125], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np

from .. import dtypes as _dt
from ..ops.base import Op, Spec
from .symbol import TraceError

_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "/": operator.truediv,
    "%": operator.mod,
}


class Dim:
    """An unknown size: ``("dim", value, axis)`` or ``(op, a, b)`` over Dims and numbers."""

    __slots__ = ("expr",)

    def __init__(self, expr: tuple) -> None:
        self.expr = expr

    @classmethod
    def of(cls, value, axis: int) -> Dim:
        return cls(("dim", value, axis))

    def __repr__(self) -> str:
        return _show(self.expr)

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim)

    def __ne__(self, other) -> bool:
        return not isinstance(other, Dim)

    def __hash__(self) -> int:
        return 0x5D1A

    def __bool__(self) -> bool:
        return True  # a size; assumed not zero

    def _bin(self, other, op: str, reflected: bool = False):
        if isinstance(other, Dim):
            other = other.expr
        elif not isinstance(other, (int, float, np.integer, np.floating)) or isinstance(
            other, bool
        ):
            return NotImplemented
        elif op in ("*", "//", "/") and other == 1 and not reflected:
            return self
        elif op == "*" and other == 1:
            return self
        elif op in ("+", "-") and other == 0 and not reflected:
            return self
        elif op == "+" and other == 0:
            return self
        a, b = (other, self.expr) if reflected else (self.expr, other)
        return Dim((op, a, b))

    def __add__(self, o):
        return self._bin(o, "+")

    def __radd__(self, o):
        return self._bin(o, "+", True)

    def __sub__(self, o):
        return self._bin(o, "-")

    def __rsub__(self, o):
        return self._bin(o, "-", True)

    def __mul__(self, o):
        return self._bin(o, "*")

    def __rmul__(self, o):
        return self._bin(o, "*", True)

    def __floordiv__(self, o):
        return self._bin(o, "//")

    def __rfloordiv__(self, o):
        return self._bin(o, "//", True)

    def __truediv__(self, o):
        return self._bin(o, "/")

    def __rtruediv__(self, o):
        return self._bin(o, "/", True)

    def __mod__(self, o):
        return self._bin(o, "%")

    def __neg__(self):
        return Dim(("-", 0, self.expr))

    def _needs_int(self, *args):
        raise TraceError(
            f"this needs the size {self!r}, which is unknown (None in the placeholder's shape) "
            "until the graph runs; give the placeholder a full shape"
        )

    __index__ = __int__ = __float__ = _needs_int

    # Two unknown sizes compare as equal (they must be at run time); an int can't be compared.
    def __lt__(self, other):
        return False if isinstance(other, Dim) else self._needs_int()

    def __gt__(self, other):
        return False if isinstance(other, Dim) else self._needs_int()

    def __le__(self, other):
        return True if isinstance(other, Dim) else self._needs_int()

    def __ge__(self, other):
        return True if isinstance(other, Dim) else self._needs_int()

    def __array__(self, dtype=None, copy=None):
        """A stand-in array the tracer turns into a ``DimValue`` node when an op uses it."""
        from .._config import state

        tracer = state.tracer
        if tracer is None or not getattr(tracer, "define", False):
            self._needs_int()
        arr = np.zeros((), dtype if dtype is not None else np.int64)
        tracer.dim_arrays[id(arr)] = (arr, self)
        return arr

    def leaves(self):
        """The ``(value, axis)`` pairs this size depends on."""
        out = []
        _leaves(self.expr, out)
        return out

    def evaluate(self, size_of) -> int:
        """The size, with ``size_of(value, axis)`` giving each input dimension."""
        return _eval(self.expr, size_of)


def _leaves(e, out: list) -> None:
    if isinstance(e, tuple):
        if e[0] == "dim":
            if not any(v is e[1] and k == e[2] for v, k in out):
                out.append((e[1], e[2]))
        else:
            _leaves(e[1], out)
            _leaves(e[2], out)


def _eval(e, size_of):
    if not isinstance(e, tuple):
        return e
    if e[0] == "dim":
        return size_of(e[1], e[2])
    return _OPS[e[0]](_eval(e[1], size_of), _eval(e[2], size_of))


def _show(e) -> str:
    if not isinstance(e, tuple):
        return repr(e)
    if e[0] == "dim":
        v = e[1]
        return f"{getattr(v, 'name', None) or '%' + str(getattr(v, 'id', '?'))}.shape[{e[2]}]"
    return f"({_show(e[1])} {e[0]} {_show(e[2])})"


@dataclasses.dataclass(frozen=True)
class DimValue(Op):
    """A 0-d array of ``dtype`` computed from the inputs' shapes: ``expr`` is a number,
    ``("dim", input index, axis)`` or ``(op, a, b)`` with ``op`` one of + - * // / %."""

    expr: object
    dtype: object
    differentiable = False

    def forward(self, xp, *inputs):
        value = _eval(self.expr, lambda i, k: inputs[i].shape[k])
        return xp.asarray(value, dtype=self.dtype.np)

    def infer(self, *inputs):
        return Spec((), self.dtype)


def dim_value_node(graph, dim: Dim, np_dtype):
    """Append the ``DimValue`` node computing ``dim``; returns its output value."""
    values = []

    def index(e):
        if not isinstance(e, tuple):
            return e
        if e[0] == "dim":
            for i, v in enumerate(values):
                if v is e[1]:
                    return ("dim", i, e[2])
            values.append(e[1])
            return ("dim", len(values) - 1, e[2])
        return (e[0], index(e[1]), index(e[2]))

    expr = index(dim.expr)
    dt = _dt.from_numpy_dtype(np.dtype(np_dtype))
    return graph.add_node(DimValue(expr, dt), values, (), dt.np)


def has_dims(x) -> bool:
    """Whether an op attribute holds a Dim (looking into tuples, lists and nested ops)."""
    if isinstance(x, Dim):
        return True
    if isinstance(x, (tuple, list)):
        return any(has_dims(e) for e in x)
    if isinstance(x, Op) and dataclasses.is_dataclass(x):
        return any(has_dims(getattr(x, f.name)) for f in dataclasses.fields(x))
    return False


def substitute(x, size_of):
    """``x`` with every Dim replaced by its size."""
    if isinstance(x, Dim):
        return x.evaluate(size_of)
    if isinstance(x, tuple):
        return tuple(substitute(e, size_of) for e in x)
    if isinstance(x, list):
        return [substitute(e, size_of) for e in x]
    if isinstance(x, Op) and dataclasses.is_dataclass(x) and has_dims(x):
        changes = {
            f.name: substitute(getattr(x, f.name), size_of) for f in dataclasses.fields(x) if f.init
        }
        return dataclasses.replace(x, **changes)
    return x


__all__ = ["Dim", "DimValue"]
