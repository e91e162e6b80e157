"""``Session``: runs a define-and-run graph and keeps its Variables' values.

``run(fetches, feed_dict)`` computes only what the fetches need, with the placeholders (or any
other symbolic tensor) given values by ``feed_dict``; each distinct set of fetches and feeds is
planned once and cached. Results are NumPy arrays (NumPy scalars for 0-d values) in the shape of
``fetches`` (a tensor, an operation, or lists, tuples and dicts of them); operations give None.

Feeds are checked against the placeholder: the rank and every known dimension must match, and
the value's dtype must convert to the placeholder's within its kind (float64 data into a float32
placeholder is fine, floats into an integer placeholder are not).

>>> import numpy as np
>>> from ember import static
>>> g = static.Graph()
>>> with g.as_default():
...     x = static.placeholder((2,), name="x")
...     y = x * 3
>>> with static.Session(g) as sess:
...     sess.run({"y": y}, feed_dict={x: [1.0, 2.0]})
{'y': array([3., 6.], dtype=float32)}
"""

from __future__ import annotations

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .._errors import DTypeError, EmberError, ShapeError
from .._tensor import Tensor
from .executor import Plan
from .ir import Graph, Value, type_str
from .symbol import Symbol, TraceError


class Session:
    """Runs ``graph`` (default: the current default graph). Use it as a context manager, or
    call ``close()``."""

    def __init__(self, graph: Graph | None = None) -> None:
        if graph is None:
            from .define import get_default_graph

            graph = get_default_graph()
        self.graph = graph
        self._values: dict = {}  # id(state value) -> array
        self._plans: dict = {}
        self._closed = False

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Free the Variables' values; the session can't run any more."""
        self._values.clear()
        self._plans.clear()
        self._closed = True

    def run(self, fetches, feed_dict: dict | None = None):
        """Compute ``fetches`` with ``feed_dict`` values; run the assignments they depend on.

        >>> import ember
        >>> from ember import static
        >>> g = static.Graph()
        >>> with g.as_default():
        ...     a = static.placeholder(())
        ...     b = a + 1
        >>> static.Session(g).run(b, {a: 2.0})
        np.float32(3.0)
        """
        if self._closed:
            raise EmberError("Session.run: the session is closed")
        leaves: list = []
        structure = self._flatten(fetches, leaves)
        feed_values, feed_arrays = [], []
        for key, value in (feed_dict or {}).items():
            v = self._value_of(key, "feed_dict key")
            feed_values.append(v)
            feed_arrays.append(_check_feed(v, value))
        targets = [v for v in leaves]
        plan_key = (tuple(v.id for v in targets), tuple(v.id for v in feed_values))
        plan = self._plans.get(plan_key)
        if plan is None:
            plan = self._plans[plan_key] = Plan(self.graph, targets, feed_values)
        if plan.missing:
            v = plan.missing[0]
            raise EmberError(
                f"Session.run: you must feed a value for placeholder {v.name!r} "
                f"({type_str(v)}): the fetches depend on it"
            )
        state = []
        for v in plan.state:
            arr = self._values.get(v.id)
            if arr is None:
                raise EmberError(
                    f"Session.run: variable {v.name!r} ({type_str(v)}) is read before it was "
                    "initialized; run ember.static.global_variables_initializer() (or its "
                    "initializer) first"
                )
            state.append(arr)
        outs, stores = plan.run(feed_arrays, state)
        for target, arr in stores:
            if target.kind != "state":
                raise EmberError(f"Session.run: cannot assign to {target.kind} %{target.id}")
            if (
                arr.base is not None
                or any(arr is a for a in state)
                or any(arr is a for a in feed_arrays)
                or any(arr is o for o in outs)
            ):
                arr = arr.copy()
            self._values[target.id] = arr
        results = iter(outs)
        return self._unflatten(structure, results)

    # -- fetch structures ---------------------------------------------------------------------
    def _value_of(self, x, what: str) -> Value:
        from .define import Operation

        if isinstance(x, Operation):
            v = x.value
        elif isinstance(x, Tensor) and type(x._data) is Symbol:
            v = x._data
        else:
            raise EmberError(
                f"Session.run: {what} must be a tensor or operation of the graph, got "
                f"{type(x).__name__}"
            )
        if v.graph is not self.graph:
            raise TraceError(
                f"Session.run: {what} {v!r} belongs to graph '{v.graph.name}', not to this "
                f"session's graph '{self.graph.name}' (made outside `with graph.as_default():`?)"
            )
        return v

    def _flatten(self, x, leaves: list):
        from .define import Operation

        if isinstance(x, (Tensor, Operation)):
            leaves.append(self._value_of(x, "a fetch"))
            return ("op" if isinstance(x, Operation) else "leaf",)
        if isinstance(x, dict):
            return ("dict", type(x), [(k, self._flatten(v, leaves)) for k, v in x.items()])
        if isinstance(x, (list, tuple)):
            return ("seq", type(x), [self._flatten(v, leaves) for v in x])
        raise EmberError(
            f"Session.run: fetches must be tensors, operations, or lists, tuples and dicts of "
            f"them; got {type(x).__name__}"
        )

    def _unflatten(self, s, results):
        kind = s[0]
        if kind == "leaf":
            return _to_numpy(next(results))
        if kind == "op":
            next(results)
            return None
        if kind == "dict":
            return s[1]((k, self._unflatten(v, results)) for k, v in s[2])
        items = [self._unflatten(v, results) for v in s[2]]
        if s[1] in (list, tuple):
            return s[1](items)
        return s[1](*items)  # a namedtuple


def _to_numpy(arr):
    if type(arr) is not np.ndarray:
        from ..backend import CPU, to_device

        arr = to_device(arr, CPU)
    return arr[()] if arr.ndim == 0 else arr


def _check_feed(v: Value, value):
    """``value`` as an array for ``v``, or an error naming the placeholder and both shapes."""
    name = v.name or f"%{v.id}"
    if isinstance(value, Tensor):
        if type(value._data) is Symbol:
            raise TraceError(f"Session.run: the feed for {name!r} is symbolic; feed data")
        arr = value._data
    elif _backend.device_of(value).type == "cuda":  # a CuPy array: fed as it is
        arr = value
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as e:
            raise DTypeError(f"Session.run: can't convert the feed for {name!r}: {e}") from None
        if arr.dtype == np.float64 and v.dtype.kind == "f":
            arr = arr.astype(v.dtype)
        elif arr.dtype.kind == "O":
            raise DTypeError(f"Session.run: can't convert the feed for {name!r} to an array")
    if arr.dtype != v.dtype:
        if not np.can_cast(arr.dtype, v.dtype, "same_kind"):
            raise DTypeError(
                f"Session.run: placeholder {name!r} expects dtype "
                f"{_dt.from_numpy_dtype(v.dtype)} but was fed "
                f"{_dt.from_numpy_dtype(arr.dtype) if arr.dtype.kind in 'biuf' else arr.dtype} "
                f"(shape {arr.shape})"
            )
        arr = arr.astype(v.dtype)
    shape = v.shape
    if arr.ndim != len(shape) or any(
        isinstance(s, int) and s != a for s, a in zip(shape, arr.shape)
    ):
        shown = "(" + ", ".join(str(s) if isinstance(s, int) else "None" for s in shape)
        shown += ",)" if len(shape) == 1 else ")"
        raise ShapeError(
            f"Session.run: placeholder {name!r} expects shape {shown} but was fed shape "
            f"{tuple(arr.shape)}"
        )
    return _backend.to_device(
        arr, _backend.CPU if v.device is None else _backend.cuda_device(v.device.id)
    )


__all__ = ["Session"]
