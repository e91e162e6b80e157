"""Whole objects in ember checkpoints: a pickle whose tensors stay in the safetensors buffer.

``ember.save`` of anything its JSON skeleton cannot hold (a module, an optimizer, a user
class, a set, a Parameter) pickles the object with protocol 2 (PyTorch's), and every tensor,
dtype, device and ``Size`` in it becomes a persistent id instead of pickled bytes:

=========================================  ==================================================
value                                      persistent id
=========================================  ==================================================
Tensor / Parameter / Buffer                ``("tensor", name, tag, flag, location)``
dtype / device / Size                      ``("dtype", "float32")`` / ``("device", "cuda:0")``
                                           / ``("size", (2, 3))``
=========================================  ==================================================

``name`` is the tensor's name in the file (a module's tensors are named by their
``state_dict`` keys), ``tag`` and ``flag`` its class and ``requires_grad`` or ``persistent``
(``tensor_types``), ``location`` its device ("" on the CPU). Loading resolves these ids
without any global, so the weights-only unpickler needs an allowlist only for the classes the
object is made of, as PyTorch's does.

>>> import ember
>>> from ember.serialization.pickled import dumps
>>> data, tensors = dumps({"w": ember.nn.Parameter(ember.ones(2)), "tags": {"a"}})
>>> list(tensors), b"ember.nn" in data
(['tensor.0'], False)
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from .._errors import DeviceError, EmberError
from .._tensor import Size, Tensor
from ..backend import Device
from . import tensor_types
from .errors import CheckpointError
from .unpickler import Invalid, Policy, check

PROTOCOL = 2


def _location(t: Tensor) -> str:
    dev = t.device
    return "" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _seed_names(obj: Any) -> dict[int, tuple[str, Tensor]]:
    """Names for the tensors of modules met at the top (``obj``, or values of a top dict):
    their ``state_dict`` keys, prefixed with the dict key."""
    tops = [("", obj)]
    if isinstance(obj, dict):
        tops += [(f"{k}.", v) for k, v in obj.items() if isinstance(k, str)]
    names: dict[int, tuple[str, Tensor]] = {}
    for prefix, top in tops:
        state_dict = getattr(type(top), "state_dict", None)
        if not callable(state_dict) or not callable(getattr(type(top), "named_parameters", None)):
            continue
        try:
            items = top.state_dict(keep_vars=True).items()
        except Exception:  # a module whose state_dict fails is still saved, with plain names
            continue
        for key, t in items:
            if isinstance(t, Tensor) and id(t) not in names:
                names[id(t)] = (prefix + key, t)
    return names


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, obj: Any, protocol: int = PROTOCOL) -> None:
        super().__init__(file, protocol=protocol)
        self.seeds = _seed_names(obj)
        self.tensors: dict[str, Tensor] = {}
        self.names: dict[int, str] = {}  # id(tensor) -> name (self.tensors keeps it alive)

    def _name(self, t: Tensor) -> str:
        name = self.names.get(id(t))
        if name is None:
            seed = self.seeds.get(id(t))
            base = seed[0] if seed is not None else f"tensor.{len(self.tensors)}"
            name, i = base, 1
            while name in self.tensors or name == "__metadata__":
                name, i = f"{base}.{i}", i + 1
            self.names[id(t)] = name
            self.tensors[name] = t
        return name

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            tag, flag = tensor_types.describe(obj)
            return ("tensor", self._name(obj), tag, flag, _location(obj))
        if isinstance(obj, _dt.DType):
            return ("dtype", obj.name)
        if isinstance(obj, Device):
            return ("device", str(obj))
        if type(obj) is Size:
            return ("size", tuple(obj))
        return None


def dumps(obj: Any, protocol: int = PROTOCOL) -> tuple[bytes, dict[str, Tensor]]:
    """The pickle of ``obj`` (protocol 2, PyTorch's, unless given) with its tensors as
    persistent ids, and the tensors by name (``CheckpointError`` for what pickle refuses,
    naming it)."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, obj, protocol)
    try:
        pickler.dump(obj)
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError("save: the object is nested too deeply to save") from None
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise CheckpointError(f"save: cannot pickle the object: {e}") from None
    return buf.getvalue(), pickler.tensors


class EmberPolicy(Policy):
    """How an ember checkpoint's pickle resolves: Python's default globals and the user's
    allowlist (weights-only), anything (trusted); ``tensor(name, location)`` loads a stored
    tensor (each name once)."""

    def __init__(self, tensor: Callable[[str, str], Tensor]) -> None:
        self.tensor = tensor
        self.made: dict[str, tuple[Tensor, tuple]] = {}

    def persistent_load(self, pid: Any) -> Any:
        check(isinstance(pid, tuple) and pid, f"a persistent id of type {type(pid).__name__}")
        kind = pid[0]
        if kind == "tensor":
            check(len(pid) == 5, "a tensor id that is not (tensor, name, tag, flag, location)")
            _, name, tag, flag, loc = pid
            check(isinstance(name, str) and tag in tensor_types.TYPES, f"tensor tag {tag!r:.40}")
            check(type(flag) is bool and isinstance(loc, str), f"tensor {name!r:.80}'s flag")
            seen = self.made.get(name)
            if seen is not None:
                check(seen[1] == pid, f"tensor {name!r:.80} is named with two descriptions")
                return seen[0]
            try:
                t = tensor_types.make(tag, self.tensor(name, loc or "cpu"), flag)
            except (EmberError, TypeError) as e:
                if isinstance(e, CheckpointError):
                    raise
                raise Invalid(f"tensor {name!r:.80} cannot be a {tag}: {e}") from None
            self.made[name] = (t, pid)
            return t
        check(len(pid) == 2, f"a persistent id of kind {kind!r:.20}")
        value = pid[1]
        if kind == "dtype":
            check(value in {d.name for d in _dt.ALL_DTYPES}, f"unknown dtype {value!r:.40}")
            return _dt.to_dtype(value)
        if kind == "device":
            check(isinstance(value, str), "a device that is not a string")
            try:
                return Device(value)
            except DeviceError:
                raise Invalid(f"bad device {value!r:.40}") from None
        if kind == "size":
            check(
                isinstance(value, tuple) and all(type(d) is int and d >= 0 for d in value),
                "a Size that is not a tuple of sizes",
            )
            return Size(value)
        raise Invalid(f"unknown persistent id kind {kind!r:.20}")
