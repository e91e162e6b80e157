"""The symbolic array: what a symbolic Tensor holds in ``_data`` while a graph is built.

A ``Symbol`` is a graph ``Value`` that answers the questions ember's code asks an array
(``shape``, ``dtype``, ``ndim``, ``size``, ``itemsize``, ``flags``, ``base``, ``device``), so every
public function works unchanged on a Tensor that holds one. Anything that needs the numbers
themselves (``bool(t)``, ``t.item()``, ``float(t)``, ``t.numpy()``, NumPy calls on it) raises
``TraceError`` naming the user's line: a graph is built before any value exists.

>>> import ember
>>> from ember import static
>>> g = static.Graph()
>>> with g.as_default():
...     x = static.placeholder((2, 3))
...     x.shape, x.dtype
(ember.Size([2, 3]), ember.float32)
"""

from __future__ import annotations

import linecache
import os
import traceback

from .._errors import EmberError
from .ir import Value, type_str

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class TraceError(EmberError):
    """A traced function or a static graph needed something only a run can know."""


class _Flags:
    """``ndarray.flags`` as CuPy has them: a symbolic value is a fresh, contiguous array."""

    c_contiguous = True
    f_contiguous = False
    owndata = True


_FLAGS = _Flags()

_WHAT = {
    "__bool__": "bool() of a tensor",
    "item": "tensor.item()",
    "__float__": "float() of a tensor",
    "__int__": "int() of a tensor",
    "__index__": "using a tensor as an index",
    "numpy": "tensor.numpy()",
    "tolist": "tensor.tolist()",
    "__array__": "converting a tensor to a NumPy array",
    "__format__": "formatting a tensor",
    "__repr__": "printing a tensor",
}


def user_site() -> tuple[str, str]:
    """``(where, what)``: the innermost caller outside ember as ``file:line: code`` and what the
    ember call that led here was (``bool() of a tensor``...)."""
    last_ember = None
    for frame, lineno in traceback.walk_stack(None):
        filename = frame.f_code.co_filename
        if os.path.abspath(filename).startswith(_ROOT):
            last_ember = frame.f_code.co_name
            continue
        line = linecache.getline(filename, lineno, frame.f_globals).strip()
        what = _WHAT.get(last_ember, f"{last_ember}()" if last_ember else "reading a value")
        return f"{filename}:{lineno} ({line})", what
    return "<unknown>", "reading a value"


def value_error(v: Value) -> TraceError:
    where, what = user_site()
    return TraceError(
        f"{what} needs the value of a symbolic tensor ({type_str(v)}), which does not exist "
        f"while a graph is being built, at {where}. Branching on a tensor's value inside a "
        "traced function is not supported: Python control flow is unrolled when the function "
        "is traced. Use ember.where() for elementwise choices, pass the value as a Python "
        "number argument (each new value traces again), or run this part eagerly."
    )


class _CudaTag:
    """What ``ember.backend.device_of`` reads from a CuPy array: ``.device.id``."""

    __slots__ = ("id",)

    def __init__(self, index: int) -> None:
        self.id = index


class Symbol(Value):
    """A graph value standing in for an array inside a Tensor."""

    __slots__ = ()
    __array_priority__ = 1000
    is_symbol = True

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            if not isinstance(s, int):
                return None  # an unknown (None) dimension
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self):
        n = self.size
        return None if n is None else n * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        out, step = [], self.dtype.itemsize
        for s in reversed(self.shape):
            out.append(step)
            step *= s if isinstance(s, int) else 1
        return tuple(reversed(out))

    @property
    def flags(self):
        return _FLAGS

    @property
    def base(self):
        return None

    @property
    def T(self):
        raise value_error(self)

    def copy(self) -> Symbol:
        return self  # values are immutable: writes rebind tensors to new values

    def __repr__(self) -> str:
        return f"<symbolic %{self.id}: {type_str(self)}>"

    # -- everything that needs numbers -------------------------------------------------------
    def _needs_value(self, *args, **kwargs):
        raise value_error(self)

    reshape = astype = item = tolist = all = any = nonzero = get = view = _needs_value
    __getitem__ = __setitem__ = __iter__ = __bool__ = __float__ = __int__ = _needs_value
    __index__ = __array__ = __len__ = _needs_value

    def __array_ufunc__(self, *args, **kwargs):
        raise self._outside()

    def __array_function__(self, *args, **kwargs):
        raise self._outside()

    def __getattr__(self, name: str):  # an ndarray method called on a symbolic value
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._outside()

    def _outside(self) -> TraceError:
        from .._config import state

        if state.tracer is not None:
            return value_error(self)
        where, what = user_site()
        return TraceError(
            f"{what} was applied to a symbolic tensor ({type_str(self)}) of graph "
            f"'{self.graph.name}' outside that graph, at {where}: build graphs inside "
            "`with graph.as_default():` and run them with a Session"
        )


def device_tag(array):
    """The device tag a Symbol for ``array`` carries (None on the CPU)."""
    dev = getattr(array, "device", None)
    if dev is not None and hasattr(dev, "id"):
        return _CudaTag(dev.id)
    return None


__all__ = ["Symbol", "TraceError"]
