"""``ember.autocast``: mixed precision regions, as ``torch.autocast``.

Inside a region, ops named in the device type's policy table (``ember.amp.policy``) cast their
floating inputs first: matmuls and convolutions to the region's lower precision, losses and
linear algebra to float32. The casts are ``Cast`` ops made by ``apply`` (``ember/ops/base.py``)
before it runs or traces the op, so ``ember.compile`` records them, and their gradients cast
back: ``.grad`` of a float32 parameter is float32. The backward pass runs with autocast off, in
the forward's dtypes. The state is thread-local, per device type, and part of
``ember.compile``'s cache key.

The weight-cast cache (``cache_enabled``) keeps one lower-precision copy per float32 leaf that
requires grad (a parameter used by several ops, or at every step of an RNN) for the outermost
region. An entry is served only while the leaf's storage and version counter are unchanged and
grad mode is what it was, so an in-place update (``optimizer.step()``) or a cast made under
``no_grad`` is never served stale. Views and tracing don't use it.

>>> import ember
>>> a, b = ember.ones(2, 3), ember.ones(3, 2)
>>> with ember.autocast("cpu"):
...     (a @ b).dtype, ember.is_autocast_enabled("cpu"), ember.get_autocast_dtype("cpu")
(ember.bfloat16, True, ember.bfloat16)
>>> (a @ b).dtype
ember.float32
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref

from .. import dtypes as _dt
from .._config import state
from .._errors import EmberError
from .._tensor import Tensor
from ..ops.elementwise.cast import Cast
from .policy import FLOAT16, FLOAT32, LOWER, NATIVE, OP_RULES, TABLES

_DEFAULTS = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}
_HALF = (_dt.float32, _dt.float16, _dt.bfloat16)  # the dtypes autocast may cast


class _Local(threading.local):
    def __init__(self) -> None:
        self.dtypes = dict(_DEFAULTS)  # get_autocast_dtype's answers, per device type
        self.cache_enabled = True
        self.depth = 0  # open regions (enabled or not): the cache lives while one is open
        self.cache: dict = {}  # id(leaf) -> (weakref, storage, version, grad mode, cast)


_local = _Local()


class Policy:
    """The active autocast settings: ``state.autocast`` (None when no device type has autocast
    on, so ``apply`` pays one attribute test). Immutable; ``key`` is hashable.

    >>> import ember
    >>> with ember.autocast("cpu"):
    ...     ember._config.state.autocast.key
    (('cpu', 'bfloat16'),)
    """

    __slots__ = ("dtypes", "cache", "key")

    def __init__(self, dtypes: dict, cache: bool) -> None:
        self.dtypes = dtypes  # device type -> lower-precision dtype, enabled ones only
        self.cache = cache
        self.key = tuple(sorted((d, dt.name) for d, dt in dtypes.items()))

    def describe(self) -> str:
        return ", ".join(f"{d} {n}" for d, n in self.key)

    def cast_inputs(self, op, inputs: tuple) -> tuple:
        """``inputs`` cast as the policy says for primitive ``op`` (``apply`` calls this)."""
        rules = OP_RULES.get(type(op))
        if rules is None:
            return inputs
        dev = inputs[0].device.type
        rule = rules.get(dev)
        lower = self.dtypes.get(dev)
        if rule is None or lower is None or rule == NATIVE:
            return inputs
        return tuple(cast_all(rule, lower, dev, inputs, self.cache))


def _eligible(t, dev: str) -> bool:
    return isinstance(t, Tensor) and t.dtype in _HALF and t.device.type == dev


def _target(rule: str, lower: _dt.DType, dev: str, tensors) -> _dt.DType:
    if rule == LOWER:
        return lower
    if rule == FLOAT32:
        return _dt.float32
    if rule == FLOAT16:
        return _dt.float16
    for t in tensors:  # PROMOTE: float32 when any eligible input is float32
        if _eligible(t, dev) and t.dtype is _dt.float32:
            return _dt.float32
    return lower


def cast_all(rule: str, lower: _dt.DType, dev: str, values, cache: bool = True) -> list:
    """``values`` with each eligible tensor cast by ``rule`` (others, float64 and integers as
    they are).

    >>> import ember
    >>> x = cast_all("lower", ember.bfloat16, "cpu", [ember.ones(1), ember.ones(1).double()])
    >>> [t.dtype for t in x]
    [ember.bfloat16, ember.float64]
    """
    target = _target(rule, lower, dev, values)
    out = []
    for t in values:
        if _eligible(t, dev) and t.dtype is not target:
            t = _cached_cast(t, target) if cache and target is lower else _cast(t, target)
        out.append(t)
    return out


def _cast(t: Tensor, dtype: _dt.DType) -> Tensor:
    from ..ops.base import apply

    return apply(Cast(dtype), t)


def _cached_cast(t: Tensor, dtype: _dt.DType) -> Tensor:
    """A float32 leaf parameter's cast, made once per outermost region and never stale."""
    if (
        not t._requires_grad
        or t._node is not None
        or t._base is not None
        or t.dtype is not _dt.float32
        or state.tracer is not None
    ):
        return _cast(t, dtype)
    grad = state.grad_enabled
    hit = _local.cache.get(id(t))
    if hit is not None:
        ref, data, version, was_grad, dt, cast = hit
        if ref() is t and data is t._data and version == t._version[0] and was_grad == grad:
            if dt is dtype:
                return cast
    cast = _cast(t, dtype)
    _local.cache[id(t)] = (weakref.ref(t), t._data, t._version[0], grad, dtype, cast)
    return cast


def _cast_value(value, rule: str, lower: _dt.DType, dev: str, cache: bool):
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(cast_all(rule, lower, dev, list(value), cache))
    return value


def _device_type(args, kwargs) -> str | None:
    for v in (*args, *kwargs.values()):
        if isinstance(v, Tensor):
            return v.device.type
        if isinstance(v, (list, tuple)):
            for u in v:
                if isinstance(u, Tensor):
                    return u.device.type
    return None


def run_rule(name: str, fn, args: tuple, kwargs: dict):
    """Call composite ``fn`` (PyTorch's function ``name``) under the active policy: its rule
    casts the tensor arguments and the body runs with autocast off, as PyTorch runs an op's
    kernel below its autocast layer. ``out=``, an explicit ``dtype=`` and functions without a
    rule run as called."""
    policy = state.autocast
    dev = _device_type(args, kwargs)
    lower = policy.dtypes.get(dev)
    rule = TABLES.get(dev, {}).get(name)
    if lower is None or rule is None:
        return fn(*args, **kwargs)
    if kwargs.get("out") is not None or kwargs.get("dtype") is not None:
        rule = NATIVE  # not eligible: runs in the dtypes given
    if rule != NATIVE:
        tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, Tensor)]
        for v in (*args, *kwargs.values()):
            if isinstance(v, (list, tuple)):
                tensors.extend(u for u in v if isinstance(u, Tensor))
        target = _target(rule, lower, dev, tensors)
        rule = LOWER if target is lower else FLOAT32 if target is _dt.float32 else FLOAT16
        args = tuple(
            cast_all(rule, lower, dev, [a], policy.cache)[0]
            if isinstance(a, Tensor)
            else _cast_value(a, rule, lower, dev, policy.cache)
            for a in args
        )
        kwargs = {
            k: cast_all(rule, lower, dev, [v], policy.cache)[0] if isinstance(v, Tensor) else v
            for k, v in kwargs.items()
        }
    state.autocast = None
    try:
        return fn(*args, **kwargs)
    finally:
        state.autocast = policy


def cast_by_rule(name: str, tensors: list) -> list:
    """``tensors`` cast as the active autocast casts the arguments of PyTorch function ``name``
    (as they are when autocast is off on their device, or ``name`` has no rule there or runs
    natively). For a composite that calls ``name`` several times on the same tensors (the RNN
    layers' weights, one ``linear`` per time step): cast them once.

    >>> import ember
    >>> w = [ember.ones(2, 2), ember.ones(2)]
    >>> with ember.autocast("cpu"):
    ...     [t.dtype for t in cast_by_rule("linear", w)]
    [ember.bfloat16, ember.bfloat16]
    >>> [t.dtype for t in cast_by_rule("linear", w)]
    [ember.float32, ember.float32]
    """
    policy = state.autocast
    dev = _device_type(tensors, {})
    lower = None if policy is None else policy.dtypes.get(dev)
    rule = TABLES.get(dev, {}).get(name)
    if lower is None or rule is None or rule == NATIVE:
        return list(tensors)
    return cast_all(rule, lower, dev, tensors, policy.cache)


def rule(name: str):
    """Decorator: public function ``fn`` is PyTorch's ``name`` for autocast (``run_rule``);
    with autocast off it costs one attribute test.

    >>> import ember
    >>> @rule("mse_loss")
    ... def my_loss(a, b): return ((a - b) ** 2).mean()
    >>> with ember.autocast("cpu"):
    ...     my_loss(ember.ones(2).bfloat16(), ember.zeros(2).bfloat16()).dtype
    ember.float32
    """

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if state.autocast is None:
                return fn(*args, **kwargs)
            return run_rule(name, fn, args, kwargs)

        return wrapper

    return decorate


def without_autocast(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with autocast off (in-place forms, backward passes).

    >>> import ember
    >>> with ember.autocast("cpu"):
    ...     without_autocast(ember.mm, ember.ones(1, 1), ember.ones(1, 1)).dtype
    ember.float32
    """
    policy = state.autocast
    if policy is None:
        return fn(*args, **kwargs)
    state.autocast = None
    try:
        return fn(*args, **kwargs)
    finally:
        state.autocast = policy


class autocast:  # noqa: N801  (PyTorch's name)
    """Run the region's ops in mixed precision (context manager or decorator), as
    ``torch.autocast``: ``dtype`` defaults to bfloat16 on the CPU and float16 on cuda;
    ``enabled=False`` turns autocast off inside an enclosing region.

    >>> import ember
    >>> x, w = ember.randn(4, 3), ember.randn(5, 3, requires_grad=True)
    >>> with ember.autocast("cpu", dtype=ember.bfloat16):
    ...     y = ember.nn.functional.linear(x, w)
    ...     with ember.autocast("cpu", enabled=False):
    ...         z = x @ x.T
    >>> y.dtype, z.dtype
    (ember.bfloat16, ember.float32)
    >>> y.float().sum().backward(); w.grad.dtype
    ember.float32
    """

    def __init__(
        self,
        device_type: str,
        dtype: _dt.DType | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise EmberError(
                f"autocast: expected `device_type` of type `str`, got: `{type(device_type)}`"
            )
        device_type = device_type.split(":")[0]
        if device_type not in _DEFAULTS:
            raise EmberError(
                f"autocast: device type {device_type!r} has no autocast in ember "
                "(supported: 'cpu', 'cuda')"
            )
        self.device = device_type
        self.fast_dtype = _DEFAULTS[device_type] if dtype is None else _dt.to_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(f"ember.{d.name}" for d in _SUPPORTED[device_type])
            warnings.warn(
                f"In {device_type.upper()} autocast, but the target dtype {self.fast_dtype} is "
                f"not supported (supported: {names}). Disabling autocast.",
                stacklevel=2,
            )
            self._enabled = False
        self._saved: list = []

    def __enter__(self):
        cache = _local.cache_enabled if self._cache_enabled is None else self._cache_enabled
        self._saved.append((state.autocast, _local.dtypes[self.device], _local.cache_enabled))
        old = state.autocast
        dtypes = dict(old.dtypes) if old is not None else {}
        if self._enabled:
            dtypes[self.device] = self.fast_dtype
        else:
            dtypes.pop(self.device, None)
        _local.dtypes[self.device] = self.fast_dtype
        _local.cache_enabled = cache
        _local.depth += 1
        state.autocast = Policy(dtypes, cache) if dtypes else None
        return self

    def __exit__(self, *exc) -> bool:
        state.autocast, _local.dtypes[self.device], _local.cache_enabled = self._saved.pop()
        _local.depth -= 1
        if _local.depth == 0:
            _local.cache.clear()  # PyTorch clears its cast cache when the outermost region ends
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` now (PyTorch's default asks about cuda).

    >>> import ember
    >>> ember.is_autocast_enabled("cpu")
    False
    """
    policy = state.autocast
    return policy is not None and device_type in policy.dtypes


def get_autocast_dtype(device_type: str) -> _dt.DType:
    """The lower-precision dtype autocast uses on ``device_type`` (the innermost region's, or
    the default: bfloat16 on the CPU, float16 on cuda).

    >>> import ember
    >>> ember.get_autocast_dtype("cuda")
    ember.float16
    """
    if device_type not in _local.dtypes:
        raise EmberError(f"get_autocast_dtype: unknown device type {device_type!r}")
    return _local.dtypes[device_type]


def is_autocast_cache_enabled() -> bool:
    """Whether autocast's weight-cast cache is on.

    >>> import ember
    >>> ember.is_autocast_cache_enabled()
    True
    """
    return _local.cache_enabled


def clear_autocast_cache() -> None:
    """Drop the weight-cast cache of this thread.

    >>> import ember
    >>> ember.clear_autocast_cache()
    """
    _local.cache.clear()


def is_autocast_available(device_type: str) -> bool:
    """Whether ember has autocast for ``device_type`` ('cpu' and 'cuda').

    >>> import ember
    >>> ember.amp.is_autocast_available("cpu")
    True
    """
    return device_type in _DEFAULTS


__all__ = [
    "Policy",
    "autocast",
    "cast_all",
    "cast_by_rule",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "rule",
    "run_rule",
    "without_autocast",
]
