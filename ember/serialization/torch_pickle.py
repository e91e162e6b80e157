"""The restricted unpickler for the ``data.pkl`` of PyTorch checkpoints (no torch import).

A pickle is a program: each ``GLOBAL`` names a Python object and ``REDUCE`` calls it. This
unpickler resolves only the names on ``ALLOWED`` (what ``torch.load(weights_only=True)`` allows
for plain state dicts), and never to the real objects: each name resolves to a sealed stand-in
of this module whose call checks its arguments and returns plain values or inert references
(``StorageRef``, ``TensorRef``). Stand-ins refuse ``BUILD`` (``__setstate__``), so the pickle
cannot set attributes on them either. Any other name is a ``Refused`` error naming it, raised
before anything from the file has run.

Storage bytes are not read here: ``persistent_load`` records which archive member holds each
storage, and the caller turns the references into ember tensors afterwards (``materialize``).

>>> import pickle
>>> from ember.serialization.torch_pickle import unpickle
>>> unpickle(pickle.dumps({"a": [1, 2.5, "s"]}, protocol=2), lambda pid: None)
{'a': [1, 2.5, 's']}
"""

from __future__ import annotations

import io
import pickle
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .._tensor import Size

MAX_NDIM = 64  # NumPy's limit
_MAX_DIM = 1 << 62

# torch dtype name -> NumPy dtype (little-endian storage order)
DTYPES: dict[str, np.dtype] = {
    "float64": np.dtype("<f8"),
    "float32": np.dtype("<f4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int64": np.dtype("<i8"),
    "int32": np.dtype("<i4"),
    "int16": np.dtype("<i2"),
    "int8": np.dtype("i1"),
    "uint8": np.dtype("u1"),
    "bool": np.dtype("?"),
}
# torch's legacy typed storage classes (``torch.FloatStorage`` ...) -> dtype name
STORAGES: dict[str, str] = {
    "DoubleStorage": "float64",
    "FloatStorage": "float32",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
}


class Refused(Exception):
    """The pickle names a global outside the allow-list, or misuses an allowed one."""


class _Sealed:
    """Base of everything a pickle can get from this module: no attributes to set."""

    __slots__ = ()

    def __setstate__(self, state) -> None:
        raise Refused(f"the pickle tries to set the state of {self!r} (BUILD)")


class _Marker(_Sealed):
    """A named value that is only ever passed along (a dtype, a storage or tensor class)."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any = None):
        self.name, self.value = name, value

    def __repr__(self) -> str:
        return self.name


class _Global(_Sealed):
    """An allowed callable: ``fn`` gets the REDUCE arguments and checks them."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable[..., Any]):
        self.name, self.fn = name, fn

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.name


class StorageRef(_Sealed):
    """One storage of the archive: member ``key``, ``numel`` elements of ``dtype`` (a torch
    dtype name), saved on ``location``."""

    __slots__ = ("key", "dtype", "numel", "location")

    def __init__(self, key: str, dtype: str, numel: int, location: str):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPES[self.dtype].itemsize

    def __repr__(self) -> str:
        return f"storage {self.key!r}"


class TensorRef(_Sealed):
    """A tensor to build: a strided view (in elements of ``dtype``) of a storage."""

    __slots__ = ("storage", "dtype", "offset", "size", "stride", "requires_grad")

    def __init__(self, storage, dtype, offset, size, stride, requires_grad):
        self.storage, self.dtype, self.offset = storage, dtype, offset
        self.size, self.stride, self.requires_grad = size, stride, requires_grad

    def __repr__(self) -> str:
        return f"tensor of storage {self.storage.key!r}"


class Value(_Sealed):
    """A plain value the walk unwraps (``torch.device``, a dtype given as a value)."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any):
        self.kind, self.value = kind, value


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Refused(what)


def _int(x, what: str, low: int = 0) -> int:
    _check(type(x) is int and low <= x < _MAX_DIM, f"{what} is {x!r:.40}, not an integer >= {low}")
    return x


def _empty_hooks(hooks) -> None:
    _check(
        isinstance(hooks, (dict, OrderedDict)) and not hooks,
        "a tensor with backward hooks (hooks are code; weights_only refuses them too)",
    )


def _tensor(storage, offset, size, stride, requires_grad, dtype: str) -> TensorRef:
    _check(isinstance(storage, StorageRef), f"a tensor's storage is {storage!r:.40}")
    offset = _int(offset, "a storage offset")
    _check(isinstance(size, tuple) and len(size) <= MAX_NDIM, f"a tensor size {size!r:.60}")
    _check(isinstance(stride, tuple) and len(stride) == len(size), f"strides {stride!r:.60}")
    size = tuple(_int(s, "a tensor size") for s in size)
    stride = tuple(_int(s, "a tensor stride") for s in stride)
    _check(type(requires_grad) is bool, f"requires_grad {requires_grad!r:.40}")
    itemsize = DTYPES[dtype].itemsize
    _check(storage.nbytes % itemsize == 0, f"{dtype} view of a {storage.nbytes}-byte storage")
    numel = storage.nbytes // itemsize
    if all(size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        _check(
            last < numel,
            f"a tensor of size {size}, strides {stride} at offset {offset} reads past the "
            f"{numel} elements of {storage!r}",
        )
    else:
        _check(offset <= numel, f"offset {offset} past the {numel} elements of {storage!r}")
    if requires_grad:
        _check(DTYPES[dtype].kind == "f" or dtype == "bfloat16", f"a {dtype} tensor requires grad")
    return TensorRef(storage, dtype, offset, size, stride, requires_grad)


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks, metadata=None):
    _empty_hooks(hooks)
    _check(not metadata, "tensor metadata (conjugate/negative bits)")
    _check(isinstance(storage, StorageRef), f"a tensor's storage is {storage!r:.40}")
    return _tensor(storage, offset, size, stride, requires_grad, storage.dtype)


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
    _empty_hooks(hooks)
    _check(not metadata, "tensor metadata (conjugate/negative bits)")
    _check(isinstance(dtype, _Marker) and dtype.name in DTYPES, f"tensor dtype {dtype!r:.40}")
    return _tensor(storage, offset, size, stride, requires_grad, dtype.name)


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    _check(isinstance(data, TensorRef), f"a Parameter of {data!r:.40}")
    _check(type(requires_grad) is bool, f"requires_grad {requires_grad!r:.40}")
    _empty_hooks(hooks)  # a Parameter's extra Python attributes (``state``) are dropped
    return _tensor(data.storage, data.offset, data.size, data.stride, requires_grad, data.dtype)


def _rebuild_from_type(func, new_type, args, state=None):
    # A Tensor or Parameter carrying extra Python attributes (``t.foo = 1``): the tensor is
    # rebuilt, the attributes (``state``) are dropped.
    _check(isinstance(func, _Global) and func.name in _REBUILDERS, f"rebuild with {func!r:.60}")
    _check(isinstance(new_type, _Marker) and new_type.name in _TENSOR_TYPES, f"{new_type!r:.60}")
    _check(isinstance(args, tuple), "rebuild arguments")
    return func(*args)


def _ordered_dict(*args):
    _check(len(args) <= 1, "OrderedDict with more than one argument")
    return OrderedDict(*args)


def _size(dims=()):
    _check(isinstance(dims, tuple) and all(type(d) is int for d in dims), "torch.Size")
    return Value("size", dims)


def _device(kind, index=None):
    _check(isinstance(kind, str) and (index is None or type(index) is int), "torch.device")
    return Value("device", kind if index is None else f"{kind}:{index}")


def _encode(text, encoding="utf-8"):  # how protocol 2 pickles bytes
    _check(isinstance(text, str) and encoding in ("latin1", "latin-1"), "_codecs.encode")
    return text.encode("latin1")


def _container(kind: type) -> Callable[..., Any]:
    def make(*args):
        _check(len(args) <= 1, f"{kind.__name__} with more than one argument")
        _check(not args or isinstance(args[0], (list, tuple, str, bytes)), kind.__name__)
        return kind(*args)

    return make


def _bytearray(data=b"", encoding=None):
    if encoding is not None:
        data = _encode(data, encoding)
    _check(isinstance(data, bytes), "bytearray")
    return bytearray(data)


_REBUILDERS = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
}
_TENSOR_TYPES = ("torch.Tensor", "torch.nn.parameter.Parameter")


def _allowed() -> dict[str, _Sealed]:
    table: dict[str, _Sealed] = {
        name: _Global(name, fn)
        for name, fn in {
            **_REBUILDERS,
            "torch._tensor._rebuild_from_type_v2": _rebuild_from_type,
            "collections.OrderedDict": _ordered_dict,
            "torch.Size": _size,
            "torch.device": _device,
            "_codecs.encode": _encode,
            "builtins.set": _container(set),
            "builtins.frozenset": _container(frozenset),
            "builtins.bytearray": _bytearray,
        }.items()
    }
    for name in _TENSOR_TYPES:
        table[name] = _Marker(name)
    for name in DTYPES:
        table[f"torch.{name}"] = _Marker(name)
    for cls, dtype in STORAGES.items():
        table[f"torch.{cls}"] = _Marker(dtype)
    table["torch.storage.UntypedStorage"] = _Marker("uint8")
    return table


ALLOWED: dict[str, _Sealed] = _allowed()
_ALIASES = {"__builtin__": "builtins"}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, persistent: Callable[[Any], Any]):
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._persistent = persistent

    def find_class(self, module: str, name: str):
        full = f"{_ALIASES.get(module, module)}.{name}"
        found = ALLOWED.get(full)
        if found is None:
            raise Refused(f"global:{module}.{name}")
        return found

    def persistent_load(self, pid):
        return self._persistent(pid)


def storage_pid(pid) -> tuple[str, str, str, int]:
    """Check a ``('storage', storage_type, key, location, numel)`` persistent id; return its
    ``(key, dtype name, location, numel)``."""
    _check(
        isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage",
        f"persistent id {pid!r:.80} (expected a storage)",
    )
    _, kind, key, location, numel = pid
    _check(isinstance(kind, _Marker) and kind.name in DTYPES, f"storage type {kind!r:.40}")
    _check(isinstance(key, str) and key.isalnum(), f"storage key {key!r:.40}")
    _check(isinstance(location, str) and len(location) < 64, f"location {location!r:.40}")
    return key, kind.name, location, _int(numel, "a storage size")


def unpickle(data: bytes, persistent_load: Callable[[Any], Any]) -> Any:
    """Run the restricted unpickler on ``data``; ``persistent_load(pid)`` resolves storages.

    Raises ``Refused`` for a global outside ``ALLOWED`` (message ``global:module.name``) or a
    misused one; other errors are those of ``pickle`` on a damaged stream.

    >>> import pickle
    >>> from ember.serialization.torch_pickle import Refused, unpickle
    >>> try:
    ...     unpickle(b"cos\\nsystem\\n(S'echo hi'\\ntR.", lambda pid: None)
    ... except Refused as e:
    ...     print(e)
    global:os.system
    """
    return _Unpickler(data, persistent_load).load()


def materialize(obj: Any, tensor: Callable[[TensorRef], Any], device: Callable[[str], Any]) -> Any:
    """``obj`` with every ``TensorRef`` replaced by ``tensor(ref)`` (once per ref) and every
    ``Value`` unwrapped (``device(spec)`` for devices, ``ember.Size`` for ``torch.Size``);
    containers are rebuilt, keeping shared and cyclic ones shared (an OrderedDict keeps its
    attributes, such as ``_metadata``)."""
    memo: dict[int, Any] = {}

    def walk(x):
        if x is None or isinstance(x, (bool, int, float, complex, str, bytes, bytearray)):
            return x
        key = id(x)
        if key in memo:
            return memo[key]
        if isinstance(x, TensorRef):
            out = memo[key] = tensor(x)
            return out
        if isinstance(x, Value):
            if x.kind == "device":
                out = memo[key] = device(x.value)
            else:  # torch.Size
                out = memo[key] = Size(x.value)
            return out
        if isinstance(x, _Marker) and x.name in DTYPES:
            from .. import dtypes

            out = memo[key] = dtypes.to_dtype(x.name)
            return out
        if isinstance(x, list):
            out = memo[key] = []
            out.extend(walk(v) for v in x)
            return out
        if isinstance(x, dict):
            out = memo[key] = type(x)()
            for k, v in x.items():
                out[walk(k)] = walk(v)
            if type(x) is OrderedDict and x.__dict__:
                out.__dict__.update(walk(dict(x.__dict__)))
            return out
        if isinstance(x, tuple):
            out = memo[key] = tuple(walk(v) for v in x)
            return out
        if isinstance(x, (set, frozenset)):
            out = memo[key] = type(x)(walk(v) for v in x)
            return out
        raise Refused(f"the file holds {x!r:.60}, which is not a value ember loads")

    return walk(obj)
