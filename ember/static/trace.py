"""The tracer: what ``ember.ops.base.apply`` calls while a graph is being built.

``state.tracer.record(op, inputs)`` infers the output's shape and dtype, appends a node and
returns its ``Symbol``; ``apply`` wraps it in a Tensor with the same code as an eager result, so
when grad mode is on and an input requires grad it gets an autograd ``Node`` exactly as in eager
mode, and ``loss.backward()``, ``ember.autograd.grad`` and ``static.gradients`` run the same
vjp rules and their ops are recorded too.

Two modes:

- **define** (placeholders and Variables, ``Graph.as_default``): only ops with a symbolic input
  are recorded; ops on concrete tensors run eagerly as usual, and concrete tensors that meet
  symbolic ones become constants (copied: the graph keeps the value they had).
- **trace** (``ember.compile``): every op is recorded. A concrete tensor that reaches an op is
  *captured*: its array becomes a state value (keyed by the array's identity, so aliases share
  it) and the tensor's ``_data`` is swapped for the value's Symbol until tracing ends. In-place
  writes (``add_``, ``x[i] = v``, ``.grad`` accumulation, BatchNorm's running stats) rebind the
  tensor to the new Symbol; ``finish`` appends one ``Assign`` per array whose value changed, so
  each run writes it back into the same array. ``optimizer.step()`` runs the optimizer's
  rule, ember ops like any other code; its hyperparameters are ``HostRef`` state values, read
  on every run (``host_value``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from .._config import state
from .._tensor import Tensor
from ..backend.arrays import disjoint, writeable
from ..backend.arrays import owner as memory_owner
from ..ops.base import Op, Spec, _check_devices, apply
from .ir import Assign, Graph, Value
from .symbol import Symbol, TraceError, device_tag


class _Slot:
    """One captured array: the value it had when the run starts and the latest value."""

    __slots__ = ("array", "first", "current")

    def __init__(self, array, first: Value) -> None:
        self.array = array
        self.first = first
        self.current = first


class ArrayRef:
    """Where a captured state array lives: the array itself (stores write into it)."""

    __slots__ = ("array",)

    def __init__(self, array) -> None:
        self.array = array

    def read(self):
        return self.array

    def store(self, value) -> None:
        if value is not self.array:
            self.array[...] = value


class GradRef:
    """A tensor's ``.grad``: read at the start of a run (zeros when it is None), stored at the
    end (into the existing gradient when ``inplace``, else as a new tensor)."""

    __slots__ = ("tensor", "inplace")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.inplace = False

    def read(self):
        g = self.tensor._grad
        if g is not None:
            return g._data
        d = self.tensor._data
        return self.tensor.device.xp.zeros(d.shape, d.dtype)

    def store(self, value) -> None:
        t = self.tensor
        g = t._grad
        if self.inplace and g is not None and g._data.shape == value.shape:
            if g._data is not value:
                g._data[...] = value
            g._version[0] += 1
        else:
            t._grad = Tensor._make(value)


class NewGrads:
    """Which memory the new gradients a run stores may keep (``GradRef`` stores not made in
    place): a gradient is copied where its memory belongs to something the caller still sees
    (``protected``: ids of the arrays owning the run's inputs, state and outputs), cannot be
    written, or overlaps a gradient kept before it. Disjoint views of one array (a
    normalization's weight and bias gradients, pieces of the one array its kernel writes) are
    kept, as eager backward keeps them: an in-place update of one cannot reach another.

    >>> a = np.zeros((2, 3))
    >>> grads = NewGrads(set())
    >>> grads.own(a[0]) is not None and grads.own(a[1]).base is a
    True
    >>> grads.own(a[:, 0]).base is None  # overlaps both: a copy
    True
    """

    __slots__ = ("protected", "kept")

    def __init__(self, protected: set) -> None:
        self.protected = protected
        self.kept: dict = {}  # id of an owning array -> the gradients kept in it

    def own(self, arr):
        """``arr``, or a copy of it where it may not be kept."""
        key = id(memory_owner(arr))
        if key not in self.protected and writeable(arr):
            pieces = self.kept.get(key)
            if pieces is None:
                self.kept[key] = [arr]
                return arr
            if disjoint([*pieces, arr]):
                pieces.append(arr)
                return arr
        return arr.copy()


class HostRef:
    """A number a graph reads from a Python container on every run (an optimizer group's
    ``lr``, ``betas[0]``): ``read`` gives it as a 0-d float64 array on ``device``, made again
    only when the number changed."""

    __slots__ = ("holder", "key", "index", "device", "_last")

    def __init__(self, holder, key, index, device) -> None:
        self.holder, self.key, self.index, self.device = holder, key, index, device
        self._last = (None, None)  # (number, its array)

    def value(self) -> float:
        v = self.holder[self.key]
        return float(v if self.index is None else v[self.index])

    def read(self):
        v = self.value()
        last, array = self._last
        if v == last and (v or math.copysign(1.0, v) == math.copysign(1.0, last)):
            return array
        array = self.device.xp.asarray(v, dtype=np.float64)
        self._last = (v, array)
        return array

    def store(self, value) -> None:
        raise TraceError(f"a graph wrote to the host value {self.key!r}")


class Tracer:
    """Builds ``graph`` from ember ops; ``define`` picks the mode (see the module docstring)."""

    def __init__(self, graph: Graph, define: bool) -> None:
        self.graph = graph
        self.define = define
        self.slots: dict = {}  # id(array) -> _Slot (the slot keeps the array alive)
        self.swapped: dict = {}  # id(tensor) -> (tensor, original _data, slot)
        self.names: dict = {}  # id(array) -> name for state values
        self.dim_arrays: dict = {}  # id(array) -> (array, Dim): numbers made from unknown sizes
        self.grads: list = []  # (tensor, its .grad, GradRef state value, stand-in .grad)
        self.tracked: set = set()  # ids of the tensors in ``grads``
        self.hosts: dict = {}  # (id(holder), key, index, device) -> HostRef state value
        self.keep: list = []

    # -- recording ------------------------------------------------------------------------------
    def record(self, op: Op, inputs):
        """The tracing processor of ``apply``: add a node for ``op`` and return its raw
        ``Symbol``; ``apply`` wraps it (view metadata, autograd history) as it wraps an eager
        result. In define mode an op with no symbolic input runs eagerly instead, and the
        finished Tensor comes back."""
        graph = self.graph
        syms = []
        symbolic = False
        for t in inputs:
            d = t._data
            if type(d) is Symbol:
                if d.graph is not graph:
                    raise TraceError(
                        f"{op.name}: an input ({d!r}) belongs to graph '{d.graph.name}', not to "
                        f"the graph being built ('{graph.name}')"
                    )
                symbolic = True
            elif self.dim_arrays and id(memory_owner(d)) in self.dim_arrays:
                symbolic = True
            syms.append(d)
        if self.define and not symbolic:
            return self._eager(op, inputs)
        if len(inputs) > 1:
            _check_devices(op, inputs)
        for i, t in enumerate(inputs):
            if type(syms[i]) is not Symbol:
                syms[i] = self.capture(t)
        if self.define:
            _check_known_sizes(op)
        try:
            spec = op.infer(*inputs)
        except NotImplementedError:
            spec = _infer_by_running(op, inputs)
        dtype = spec.dtype.np if isinstance(spec.dtype, _dt.DType) else spec.dtype
        out = graph.add_node(op, syms, spec.shape, dtype)
        out.device = syms[0].device if syms else None
        return out

    def _eager(self, op: Op, inputs) -> Tensor:
        state.tracer = None
        try:
            return apply(op, *inputs)
        except Exception:
            _check_known_sizes(op)
            raise
        finally:
            state.tracer = self

    # -- capturing concrete tensors -------------------------------------------------------------
    def capture(self, t: Tensor) -> Symbol:
        """The Symbol for concrete tensor ``t`` (a constant in define mode, else its state value,
        which ``t`` holds from now until ``finish``)."""
        arr = t._data
        if type(arr) is Symbol:  # captured already (``w * w``: the op's second read of w)
            return arr
        slot = self.slots.get(id(arr))
        if slot is None:
            if self.define and self.dim_arrays and id(memory_owner(arr)) in self.dim_arrays:
                from .dims import dim_value_node

                v = dim_value_node(self.graph, self.dim_arrays[id(memory_owner(arr))][1], arr.dtype)
                slot = self.slots[id(arr)] = _Slot(arr, v)
                return v
            if self.define:
                host = arr.copy()
                v = self.graph.add_constant(host)
                v.device = device_tag(arr)
                slot = self.slots[id(arr)] = _Slot(arr, v)
                return v
            v = self.graph.add_state(arr.shape, arr.dtype, ArrayRef(arr), self.names.get(id(arr)))
            v.device = device_tag(arr)
            slot = self.slots[id(arr)] = _Slot(arr, v)
        if self.define:
            return slot.current
        self._track_leaf(t, slot.first.name)
        if id(t) not in self.swapped:
            self.swapped[id(t)] = (t, arr, slot)
        t._data = slot.current
        return slot.current

    def add_input(self, t: Tensor, name: str | None = None) -> Symbol:
        """Make concrete tensor ``t`` a graph input (fed on every run)."""
        arr = t._data
        slot = self.slots.get(id(arr))
        if slot is None:
            v = self.graph.add_input(arr.shape, arr.dtype, name)
            v.device = device_tag(arr)
            slot = self.slots[id(arr)] = _Slot(arr, v)
        self._track_leaf(t, name)
        if id(t) not in self.swapped:
            self.swapped[id(t)] = (t, arr, slot)
        t._data = slot.current
        return slot.current

    def _track_leaf(self, t: Tensor, name: str | None) -> None:
        """A leaf that requires grad, met as an argument or a captured tensor (not through a
        module or optimizer): its ``.grad`` is graph state too, so a ``backward`` in the
        function writes it when the graph runs."""
        if t._requires_grad and t._node is None and id(t) not in self.tracked:
            self.track_grad(t, name)

    def own(self, x: Tensor) -> None:
        """Capture ``x`` before an in-place op reads it (so its alias is symbolic too)."""
        if not self.define and type(x._data) is not Symbol:
            self.capture(x)
            if x._base is not None and type(x._base._data) is not Symbol:
                self.capture(x._base)

    def track_grad(self, t: Tensor, name: str | None) -> None:
        """Make ``t.grad`` graph state: read when a run starts (zeros if None) and written back
        when it ends, so accumulation without ``zero_grad`` works as in eager mode."""
        self.tracked.add(id(t))
        g0 = t._grad
        d = t._data
        v = self.graph.add_state(d.shape, d.dtype, GradRef(t), f"{name}.grad" if name else None)
        v.device = d.device if type(d) is Symbol else device_tag(d)
        if g0 is None:
            start = t._grad = Tensor._make(v)
        else:
            start = g0
            arr = g0._data
            self.slots[id(arr)] = slot = _Slot(arr, v)
            self.swapped[id(g0)] = (g0, arr, slot)
            g0._data = v
        self.grads.append((t, g0, v, start))

    # -- in-place writes ------------------------------------------------------------------------
    def write(self, x: Tensor, result: Tensor) -> None:
        """``x``'s storage now holds ``result`` (the tracing side of ``inplace.commit``)."""
        rd = result._data
        xd = x._data
        if self.define:
            if type(xd) is not Symbol and type(rd) is not Symbol:
                xd[...] = rd  # eager code while a graph is being defined
                return
            if type(xd) is not Symbol:
                raise TraceError(
                    "an in-place op would write a symbolic value into an eager tensor "
                    f"(shape {tuple(x.shape)}); use an out-of-place op"
                )
            if xd.kind == "state":
                raise TraceError(
                    f"in-place op on Variable {xd.name!r}: use .assign(), .assign_add() or "
                    ".assign_sub(), which return the new value"
                )
        elif type(xd) is not Symbol:
            self.capture(x)
        if type(rd) is not Symbol:
            rd = self.capture(result)
        base = x._base
        if base is not None and x._view_ops:
            from ..ops.indexing import CopySlices

            bd = base._data
            if type(bd) is not Symbol:
                bd = self.capture(base)
            new = self.graph.add_node(CopySlices(x._view_ops), (bd, rd), bd.shape, bd.dtype)
            new.device = bd.device
            self._rebind(base, new)
        self._rebind(x, rd)

    def _rebind(self, t: Tensor, sym: Symbol) -> None:
        t._data = sym
        entry = self.swapped.get(id(t))
        if entry is not None and entry[0] is t:
            entry[2].current = sym

    def accumulate(self, old: Tensor, g: Tensor) -> None:
        """``old += g`` for the engine's ``.grad`` accumulation."""
        from ..ops.elementwise import ADD

        if type(old._data) is not Symbol and type(g._data) is not Symbol and self.define:
            old._data += g._data
        else:
            self.own(old)
            self.write(old, apply(ADD, old, g))
        old._version[0] += 1

    def host_value(self, holder, key, index, like: Tensor) -> Tensor:
        """``holder[key]`` (``[index]`` of it when not None), a number, as a 0-d float64 tensor
        on ``like``'s device whose value the graph reads on every run (``HostRef``), not fixed
        at trace time: an optimizer's hyperparameter, which a scheduler changes between steps.
        """
        d = like._data
        tag = d.device if type(d) is Symbol else device_tag(d)
        ck = (id(holder), key, index, tag)
        v = self.hosts.get(ck)
        if v is None:
            name = key if index is None else f"{key}[{index}]"
            ref = HostRef(holder, key, index, like.device)
            v = self.hosts[ck] = self.graph.add_state((), np.float64, ref, name)
            v.device = tag
            self.keep.append(holder)  # id(holder) stays unique while the trace is built
        return Tensor._make(v)

    # -- the end ----------------------------------------------------------------------------
    def finish(self) -> list:
        """Append the write-backs, put every swapped tensor's array back, and return the
        tensors whose ``.grad`` must be set to None after each run."""
        clears = []
        for t, _, v, start in self.grads:
            end = t._grad
            if end is None:
                clears.append(t)
            elif end is start:
                cur = end._data
                if cur is not v:
                    v.ref.inplace = True
                    self._assign(v, cur if type(cur) is Symbol else self.capture(end))
            else:
                cur = end._data if type(end._data) is Symbol else self.capture(end)
                self._assign(v, cur)
        for slot in list(self.slots.values()):
            if slot.current is not slot.first and slot.first.kind in ("state", "input"):
                if isinstance(slot.first.ref, GradRef):
                    continue  # handled above
                self._assign(slot.first, slot.current)
        self.restore()
        return clears

    def _assign(self, target: Value, value: Symbol) -> None:
        out = self.graph.add_node(Assign(), (target, value), value.shape, value.dtype)
        out.device = value.device

    def restore(self) -> None:
        """Give every swapped tensor its array back, and every tracked tensor its ``.grad``."""
        for t, arr, _ in self.swapped.values():
            t._data = arr
        self.swapped.clear()
        for t, g0, _, _ in self.grads:
            t._grad = g0


def _check_known_sizes(op: Op) -> None:
    """Ops whose attributes hold sizes (``Expand(shape=...)``) can't take an unknown one."""
    for f in getattr(op, "__dataclass_fields__", {}):
        if "shape" in f or "size" in f:
            value = getattr(op, f)
            if isinstance(value, tuple) and any(s is None for s in value):
                from .symbol import user_site

                where, _ = user_site()
                raise TraceError(
                    f"{op.name}: needs the size of a dimension that is unknown (None) until "
                    f"the graph runs ({f}={value}), at {where}; give the placeholder a full "
                    "shape (ops whose attributes are sizes, e.g. the gradient of a sum or a "
                    "mean over that dimension, need it)"
                )


def _infer_by_running(op: Op, inputs) -> Spec:
    """The output spec of an op with no ``infer`` rule: run it once on ones."""
    arrays = []
    for t in inputs:
        d = t._data
        if type(d) is Symbol:
            if d.size is None:
                raise TraceError(
                    f"{op.name}: this op has no shape rule and an input has unknown dimensions "
                    f"({d!r}); give the placeholder a full shape"
                )
            arrays.append(np.ones(d.shape, d.dtype))
        else:
            arrays.append(d)
    out = np.asarray(op.forward(np, *arrays))
    return Spec(out.shape, _dt.from_numpy_dtype(out.dtype))


__all__ = ["ArrayRef", "GradRef", "HostRef", "Tracer"]
