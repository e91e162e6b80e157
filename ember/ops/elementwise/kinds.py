"""The kinds of elementwise op (unary, predicate, binary) and what their forwards share.

Every elementwise op derives from ``Elementwise``, which adds two things to the op contract:

- ``forward(xp, *arrays, out=None)``: ops that can write their result into a given array take
  an ``out`` argument (NumPy's and CuPy's ``out=``); ``writes_out`` records which ones do. The
  fused NumPy program of ``ember.static.passes.fuse`` and the in-place fast paths
  (``x.exp_()``, ``x.add_(y)`` without autograd) run the op's own forward into their buffer.
- ``scalar``: the op as one scalar expression, for ops that elementwise fusion compiles into a
  numba loop or a CUDA kernel (``None`` for the others). It is Python syntax over the inputs
  ``x``, ``y``, ``z`` (first, second, third), number literals and the op's own fields (``lo``,
  ``exponent``), with ``a if c else b``, ``or``/``and``/``not``, comparisons, ``+ - * / **``
  and the functions ``exp``, ``log``, ``sqrt``, ``tanh``, ``abs`` and ``cast`` (to the output
  dtype). ``ember.static.passes.fused_renderers`` prints it as numba Python and as CUDA C; the
  expression must compute exactly what ``forward`` does (NaN in, NaN out, the same zero signs).

>>> from ember.ops.elementwise import Exp, Clamp, Where
>>> Exp.scalar, Exp.writes_out, Where.writes_out
('exp(x)', True, False)
>>> Clamp(lo=0.0).scalar
'(x if x >= lo or x != x else lo)'
"""

from __future__ import annotations

import inspect
import re

from ... import dtypes as _dt
from ..._errors import DTypeError, EmberError
from ..._shape import broadcast_shapes
from ..base import Op, Spec


class Elementwise(Op):
    """An op applied element by element (see the module docstring for ``scalar``)."""

    scalar = None  # str: the scalar expression (module docstring), or a property giving it
    numpy_passes = 1  # passes over memory its NumPy forward makes (more: a kernel even alone)
    writes_out = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.writes_out = "out" in inspect.signature(cls.forward).parameters


_ARG = re.compile(r"\b([xyz])\b")


def substitute(template: str, *args: str) -> str:
    """``template`` with its inputs ``x``, ``y``, ``z`` replaced by ``args`` (names, or
    expressions in parentheses): one op's scalar expression written with another's.

    >>> substitute("x * y", "(exp(x) + 1)", "2")
    '(exp(x) + 1) * 2'
    """
    names = dict(zip("xyz", args))
    return _ARG.sub(lambda m: names.get(m.group(1), m.group(1)), template)


def copy_into(xp, x, out):
    """A new array equal to ``x``, or ``x`` written into ``out``."""
    if out is None:
        return x.copy()
    xp.copyto(out, x)
    return out


class Unary(Elementwise):
    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


class Predicate(Unary):
    """A unary test giving a bool tensor (isnan, logical_not...): no gradient."""

    differentiable = False

    def infer(self, x):
        return Spec(tuple(x.shape), _dt.bool_)


class Binary(Elementwise):
    fname = ""  # the public name, for messages (the class name lowercased when empty)

    def infer(self, a, b):
        name = self.fname or self.name.lower()
        return Spec(broadcast_shapes(name, tuple(a.shape), tuple(b.shape)), a.dtype)


def const_like(x, value, dtype=None):
    """A constant (no history: a number, or an array's values) on ``x``'s device, with ``x``'s
    dtype unless ``dtype`` is given."""
    from ..._tensor import Tensor

    xp = x.device.xp
    return Tensor._make(xp.asarray(value, dtype=x._data.dtype if dtype is None else dtype))


def _int_zero_division(xp, b, name: str) -> None:
    if b.dtype.kind in "iub" and not bool(xp.all(b)):
        raise EmberError(f"{name}: ZeroDivisionError (integer division by zero)")


def _require_integral(name: str, *specs) -> None:
    for s in specs:
        if s.dtype.is_floating_point:
            raise DTypeError(
                f'{name}: "{name}_cpu" not implemented for '
                f"'{_torch_name(s.dtype)}' ({s.dtype}): bitwise ops need integer or bool tensors"
            )


def _torch_name(dt: _dt.DType) -> str:
    return {
        "float16": "Half",
        "bfloat16": "BFloat16",
        "float32": "Float",
        "float64": "Double",
        "bool": "Bool",
        "uint8": "Byte",
        "int8": "Char",
        "int16": "Short",
        "int32": "Int",
        "int64": "Long",
    }[dt.name]
