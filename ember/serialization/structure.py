"""Flattening nested checkpoint objects into named tensors plus a JSON skeleton, and back.

The skeleton is plain JSON in which every JSON object is a tagged node, so nothing is ambiguous:

========================  ==============================================================
Python value              JSON node
========================  ==============================================================
None, bool, int, str      itself
finite float              itself (``1.0`` stays a float: JSON keeps the decimal point)
inf / -inf / nan          ``{"float": "inf"}``
list                      ``[...]``
tuple                     ``{"tuple": [...]}``
dict / OrderedDict        ``{"dict": [[key, value], ...]}`` / ``{"odict": ...}`` (str or int keys)
Tensor                    ``{"tensor": name}`` (+ ``"location"``, ``"requires_grad"``: when set)
ember dtype / device      ``{"dtype": "float32"}`` / ``{"device": "cuda:0"}``
========================  ==============================================================

Tensor names are the dotted paths of the tensors (``model.fc.weight``), so a plain state dict's
tensors keep their own names in the file. A tensor object met again is stored once: its later
places refer to the first one's name.

>>> import ember
>>> skeleton, tensors = flatten({"w": ember.ones(2), "epoch": 3})
>>> skeleton, list(tensors)
({'dict': [['w', {'tensor': 'w'}], ['epoch', 3]]}, ['w'])
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor
from ..backend import Device
from .errors import CheckpointError


class NotPlain(CheckpointError):
    """The object holds something the JSON skeleton does not (``save`` pickles it instead)."""


SUPPORTED = "tensors, dicts (str or int keys), lists, tuples, str, int, float, bool and None"
_TAGS = ("tensor", "tuple", "dict", "odict", "float", "dtype", "device")
_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _path_str(path: list) -> str:
    return "obj" + "".join(f"[{p!r}]" for p in path)


def flatten(obj) -> tuple[object, dict[str, Tensor]]:
    """The JSON skeleton of ``obj`` and its tensors by (unique) name, in the order met;
    ``NotPlain`` for anything else (a Parameter, a module, a set, a cycle...)."""
    tensors: dict[str, Tensor] = {}
    names: dict[int, str] = {}  # id(tensor) -> name (the tensors dict keeps each alive)
    active: set[int] = set()

    def name_for(path: list) -> str:
        base = ".".join(str(p) for p in path) or "tensor"
        name, i = base, 1
        while name in tensors or name == "__metadata__":
            name, i = f"{base}.{i}", i + 1
        return name

    def enc(x, path: list):
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, int):
            return int(x)
        if isinstance(x, float):
            x = float(x)
            if math.isfinite(x):
                return x
            return {"float": "nan" if x != x else ("inf" if x > 0 else "-inf")}
        if type(x) is Tensor:
            name = names.get(id(x))
            if name is None:
                name = names[id(x)] = name_for(path)
                tensors[name] = x
            node = {"tensor": name}
            dev = x.device
            if dev.type != "cpu":
                node["location"] = f"{dev.type}:{dev.index or 0}"
            if x.requires_grad:
                node["requires_grad"] = True
            return node
        if isinstance(x, np.generic) and x.dtype.kind in "biuf":
            return enc(x.item(), path)
        if isinstance(x, _dt.DType):
            return {"dtype": x.name}
        if isinstance(x, Device):
            return {"device": str(x)}
        if isinstance(x, (dict, list, tuple)):
            if id(x) in active:
                raise NotPlain(f"save: {_path_str(path)} contains itself")
            active.add(id(x))
            try:
                if isinstance(x, dict):
                    items = []
                    for k, v in x.items():
                        if isinstance(k, bool) or not isinstance(k, (str, int)):
                            raise NotPlain(
                                f"save: key {k!r} of {_path_str(path)} is a {type(k).__name__}; "
                                "checkpoint dicts have str or int keys"
                            )
                        k = k if isinstance(k, str) else int(k)
                        items.append([k, enc(v, path + [k])])
                    return {"odict" if isinstance(x, OrderedDict) else "dict": items}
                items = [enc(v, path + [i]) for i, v in enumerate(x)]
                return items if isinstance(x, list) else {"tuple": items}
            finally:
                active.discard(id(x))
        raise NotPlain(
            f"save: cannot save {type(x).__name__} at {_path_str(path)}; "
            f"checkpoints hold {SUPPORTED}"
        )

    try:
        return enc(obj, []), tensors
    except RecursionError:
        raise CheckpointError("save: the object is nested too deeply to save") from None


def unflatten(skeleton, tensor: Callable[[str, str, bool], Tensor], source: str = "<stream>"):
    """Rebuild the object from its skeleton; ``tensor(name, location, requires_grad)`` loads one.

    Any malformed node is a ``CheckpointError`` naming ``source``.
    """

    def fail(problem: str):
        raise CheckpointError(f"{source}: invalid ember structure metadata: {problem}")

    def dec(node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [dec(v) for v in node]
        if not isinstance(node, dict):
            fail(f"unexpected {type(node).__name__}")
        tags = [t for t in _TAGS if t in node]
        if len(tags) != 1:
            fail(f"node with keys {sorted(node)[:5]} is not one tagged value")
        tag = tags[0]
        value = node[tag]
        extra = set(node) - {tag} - ({"location", "requires_grad"} if tag == "tensor" else set())
        if extra:
            fail(f"{tag} node has unexpected keys {sorted(extra)[:5]}")
        if tag == "tensor":
            loc = node.get("location", "cpu")
            grad = node.get("requires_grad", False)
            if not isinstance(value, str) or not isinstance(loc, str) or not isinstance(grad, bool):
                fail(f"bad tensor node {node!r:.100}")
            return tensor(value, loc, grad)
        if tag == "tuple":
            if not isinstance(value, list):
                fail("tuple node does not hold a list")
            return tuple(dec(v) for v in value)
        if tag in ("dict", "odict"):
            if not isinstance(value, list):
                fail(f"{tag} node does not hold a list of pairs")
            out = OrderedDict() if tag == "odict" else {}
            for pair in value:
                if not (isinstance(pair, list) and len(pair) == 2):
                    fail(f"{tag} item {pair!r:.60} is not a [key, value] pair")
                k, v = pair
                if isinstance(k, bool) or not isinstance(k, (str, int)):
                    fail(f"dict key {k!r:.60} is not a str or int")
                if k in out:
                    fail(f"duplicate dict key {k!r:.60}")
                out[k] = dec(v)
            return out
        if tag == "float":
            if not isinstance(value, str) or value not in _NONFINITE:
                fail(f"float node {value!r:.40} is not 'inf', '-inf' or 'nan'")
            return _NONFINITE[value]
        if tag == "dtype":
            if not isinstance(value, str) or value not in {d.name for d in _dt.ALL_DTYPES}:
                fail(f"unknown dtype {value!r:.40}")
            return _dt.to_dtype(value)
        if not isinstance(value, str):
            fail(f"bad device {value!r:.40}")
        try:  # device
            return Device(value)
        except Exception:
            fail(f"bad device {value!r:.40}")

    try:
        return dec(skeleton)
    except RecursionError:
        fail("nested too deeply")
