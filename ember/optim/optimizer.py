"""The optimizer base: param groups, per-parameter state, one rule per optimizer, one loop.

A concrete optimizer gives its ``defaults`` and:

- ``init_state(p, group) -> dict``: the state a parameter starts with, as Tensors (made with
  ``state_like``; a ``"step"`` entry, made by ``step_count``, is counted by the loop);
- ``update(p, g, state, group, hp)``: **the rule**, one step for one parameter, written in ember
  ops on Tensors (as MLX's ``apply_single``). ``p``, ``g`` and the state entries are Tensors,
  updated in place (``mul_``, ``add_``, ``copy_``...) or replaced in ``state``; ``hp`` holds the
  group's numbers as 0-d float64 tensors on ``p``'s device, and ``hp["step"]`` the step count,
  already advanced (for optimizers whose state has a ``"step"``); ``group`` the raw values to
  branch on (whether ``weight_decay`` is zero, ``amsgrad``...). Branch only on ``group`` and on
  which state entries are None, never on a number computed from ``hp`` or the state (use
  ``where``).

Because the rule is ember ops, ``ember.compile`` traces it like any other code: the numbers in
``hp`` become graph inputs read on every run (a scheduler's new ``lr`` needs no retrace), the
step count is graph state, and the fusion pass fuses the elementwise chain; a CUDA graph replays
it with no host computation. What is fixed in a trace (``signature``) is each group's
structure: its non-number values and which of its numbers are zero, and which state entries
of each parameter are None (``lazy_state``); a change retraces.

Eager steps run a device kernel where one is registered for the rule (``ember.backend.overrides``
with the method name ``update``: ``fn(opt, xp, p, g, state, group)`` on the arrays, the state's
Tensors as they are, returning ``NotImplemented`` to decline); the CPU's are NumPy code doing
the rule's arithmetic in place, the GPU's one CUDA kernel per parameter; the tests check each
against the rule.

The loop (``step``) skips parameters without gradients, runs under ``no_grad``, negates the
gradient for ``maximize`` and bumps each parameter's version counter. State dicts follow
PyTorch's layout (``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``) so
checkpoints carry over; each optimizer's ``defaults`` are PyTorch's, keys in its order, so a
group holds PyTorch's implementation flags too (``foreach``, ``fused``, ``capturable``,
``differentiable``). They choose no other arithmetic here: the one rule serves every setting
PyTorch runs on these devices, and ``check_flags`` refuses the settings PyTorch refuses.

>>> import ember
>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([w], lr=0.5)
>>> (w * w).sum().backward(); opt.step(); w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""

from __future__ import annotations

import copy
import operator

import numpy as np

from .. import backend as _backend
from .._config import no_grad, tracing
from .._config import state as _mode
from .._errors import EmberError
from .._tensor import Tensor
from ..backend import overrides, xp_of
from ..backend.cuda import device_context
from ..dtypes import is_float_np


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: holds ``param_groups`` and ``state``; subclasses define the update rule."""

    # state entries a fresh state leaves None for the first step to make (SGD's momentum buffer
    # copies the first gradient): a rule may branch on them, so a trace fixes which are None
    lazy_state: tuple = ()

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: dict = {}
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                f"{type(self).__name__}: params argument given to the optimizer should be an "
                "iterable of Tensors or dicts, but got a Tensor"
            )
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyperparameters (missing ones from defaults)."""
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"{type(self).__name__}: can only optimize Tensors, got {type(p).__name__}"
                )
            if not p.is_leaf:
                raise EmberError(f"{type(self).__name__}: can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            if value is required and key not in group:
                raise ValueError(
                    f"{type(self).__name__}: parameter group didn't specify a value of required "
                    f"optimization parameter {key}"
                )
            group.setdefault(key, value)
        check_flags(type(self).__name__, group)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad._data[...] = 0
                    p._grad._version[0] += 1

    def init_state(self, p: Tensor, group: dict) -> dict:
        return {}

    def update(self, p: Tensor, g: Tensor, state: dict, group: dict, hp: dict) -> None:
        raise NotImplementedError

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = None
        if closure is not None:
            from .._config import enable_grad

            with enable_grad():
                loss = closure()
        tracer = _mode.tracer
        if tracer is not None and getattr(tracer, "define", False):
            tracer = None  # a define-and-run graph: eager tensors update eagerly
        kernels = overrides.table("cpu", "update"), overrides.table("cuda", "update")
        with no_grad():
            for group in self.param_groups:
                hp = None
                hps: dict = {}  # device -> the group's numbers there (eager rules)
                checked = not (group.get("differentiable") or group.get("capturable"))
                many = None  # a GPU override's form for many parameters, and their items
                for p in group["params"]:
                    grad = p._grad
                    if grad is None:
                        continue
                    if not checked:
                        check_step_flags(type(self).__name__, group, p)
                    state = self.state.get(p)
                    if state is None:
                        with tracing(None):
                            state = self.state[p] = self.init_state(p, group)
                    if tracer is not None:
                        if hp is None:
                            hp = _numbers(group, _host_on(tracer, group, p))
                        self._traced(tracer, p, grad, state, group, hp)
                        continue
                    g = -grad if group.get("maximize") else grad
                    arr = p._data
                    with device_context(arr):  # the parameter's GPU, whichever is current
                        count = state.get("step")
                        if count is not None:
                            count._data += 1
                        cpu = type(arr) is np.ndarray
                        fn = kernels[0 if cpu else 1][type(self)]
                        xp = np if cpu else xp_of(arr)
                        ga = g._data
                        if not cpu and getattr(fn, "many", None) is not None:
                            many = many or (fn, xp, [])  # updated together after the loop
                            many[2].append((p, g, arr, ga, state))
                        elif fn is None or fn(self, xp, arr, ga, state, group) is NotImplemented:
                            self._rule(p, g, state, group, self._numbers_on(p, group, hps))
                    p._version[0] += 1
                if many is not None:
                    self._update_many(*many, group, hps)
        return loss

    def _update_many(self, fn, xp, items: list, group: dict, hps: dict) -> None:
        """The GPU override's form for many parameters (``fn.many``: one launch for up to 16
        of them, ``ember.backend.kernels.optim_many``) on ``items``, ``(p, g, arr, grad,
        state)``; the ones it leaves go one at a time, as in ``step``."""
        for p, g, arr, grad, state in fn.many(self, xp, items, group):
            with device_context(arr):
                if fn(self, xp, arr, grad, state, group) is NotImplemented:
                    self._rule(p, g, state, group, self._numbers_on(p, group, hps))

    @staticmethod
    def _numbers_on(p: Tensor, group: dict, hps: dict) -> dict:
        """The group's numbers as 0-d tensors on ``p``'s device, made once per device a step."""
        numbers = hps.get(p.device)
        if numbers is None:
            numbers = hps[p.device] = _numbers(group, _scalar_on(p))
        return numbers

    def _rule(self, p: Tensor, g: Tensor, state: dict, group: dict, numbers=None) -> None:
        """The rule run eagerly on ``p`` (its step count already advanced): the group's numbers
        (``numbers``, made here when None) and the step count as 0-d tensors on ``p``'s device.
        """
        hp = _numbers(group, _scalar_on(p)) if numbers is None else numbers
        count = state.get("step")
        if count is not None:
            hp = dict(hp, step=_scalar(p, float(count._data)))
        self.update(p, g, state, group, hp)

    @staticmethod
    def state_to_device(p: Tensor, state: dict) -> None:
        """Move ``p``'s state tensors (the step count too, kept on the CPU eagerly) to ``p``'s
        device, in place (the same tensors): what a traced step reads and writes. Before the
        trace first reads them (``GradScaler``'s masked step saves them first).

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> st = {"step": ember.tensor(3.0)}
        >>> ember.optim.Optimizer.state_to_device(w, st); st["step"].device
        device(type='cpu')
        """
        dev = p.device
        with tracing(None):
            for v in state.values():
                if isinstance(v, Tensor) and v.device != dev:
                    v._data = _backend.to_device(v._data, dev)  # the same tensor, moved

    def _traced(self, tracer, p, grad, state, group, hp) -> None:
        """The rule recorded by ``ember.compile``: state tensors (the step count too) live on
        ``p``'s device, and an entry the rule adds is a concrete tensor the graph writes into."""
        self.state_to_device(p, state)
        before = dict(state)
        count = state.get("step")
        if count is not None:
            count.add_(1)
            hp = dict(hp, step=count.double())
        g = -grad if group.get("maximize") else grad
        self.update(p, g, state, group, hp)
        for k, v in list(state.items()):
            if isinstance(v, Tensor) and before.get(k) is None:
                with tracing(None):
                    holder = state_like(v)
                holder.copy_(v)
                state[k] = holder

    # -- what ember.compile asks a stateful object ---------------------------------------------
    def _compile_tensors(self) -> list:
        """``[(name, tensor)]``: the parameters the step may update (their gradients are read)."""
        return [
            (f"param_groups.{gi}.{pi}", p)
            for gi, group in enumerate(self.param_groups)
            for pi, p in enumerate(group["params"])
        ]

    def _compile_key(self) -> tuple:
        """``(_compile_signature(), _compile_guard())`` in one walk of the groups and the state:
        what every compiled call asks (``ember.static.compile``)."""
        memo = self.__dict__.get("_structure_memo", ())  # per group: keys, values, structure
        seen_now = []
        groups = []
        entries = []
        guard = []
        state = self.state
        lazy = self.lazy_state
        for i, group in enumerate(self.param_groups):
            keys, values = tuple(group), tuple(group.values())
            seen = memo[i] if i < len(memo) else None
            if seen is not None and seen[0] == keys and all(map(operator.is_, seen[1], values)):
                structure = seen[2]  # the same objects as last time: the same structure
            else:
                structure = tuple([(k, _structure(v)) for k, v in group.items() if k != "params"])
            seen_now.append((keys, values, structure))
            groups.append(structure)
            for p in group["params"]:
                s = state.get(p)
                if s is None:
                    entries.append(lazy)
                    guard.append(None)
                else:
                    guard.append(tuple(map(id, s.values())))
                    unset = [k for k, v in s.items() if v is None]
                    entries.append(tuple(sorted(unset)) if unset else ())
        self.__dict__["_structure_memo"] = seen_now
        return (tuple(groups), tuple(entries)), tuple(guard)

    def _compile_signature(self) -> tuple:
        """What a trace of ``step`` fixes: each group's structure (non-number values, which
        numbers are zero) and which state entries of each parameter are None."""
        return self._compile_key()[0]

    def __getstate__(self) -> dict:
        """What pickling and copying keep: everything but ``_compile_key``'s memo."""
        kept = dict(self.__dict__)
        kept.pop("_structure_memo", None)
        return kept

    def _compile_guard(self) -> tuple:
        """The state tensors a trace reads, by identity (checked on every call: a state
        replaced by other tensors retraces)."""
        return self._compile_key()[1]

    def _compile_describe(self, old: tuple, new: tuple) -> str:
        if old[0] != new[0]:
            return f"{type(self).__name__}'s hyperparameters changed structure"
        return f"{type(self).__name__}'s state entries were created or cleared"

    # -- state dicts ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters as indices."""
        index: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                # entries still None (SGD's buffer without momentum) are not state to PyTorch
                entries = {
                    k: _export(k, v) for k, v in self.state.get(p, {}).items() if v is not None
                }
                if entries:
                    state[index[id(p)]] = entries
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyperparameters and state saved by ``state_dict`` (copies the arrays)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        params_by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
            for p, i in zip(mine["params"], saved["params"]):
                params_by_index[int(i)] = p
            for k, v in saved.items():
                if k != "params":
                    mine[k] = copy.deepcopy(v)
        old, self.state = self.state, {}
        for i, st in state_dict["state"].items():
            p = params_by_index.get(int(i))
            if p is None:
                continue
            new = {k: _import(k, v, p) for k, v in st.items()}
            self.state[p] = _into(old.get(p), new)


def check_flags(name: str, group: dict) -> None:
    """Refuse the flag combinations PyTorch refuses when an optimizer is built.

    >>> check_flags("Adam", {"fused": True, "foreach": True})
    Traceback (most recent call last):
    ember._errors.EmberError: Adam: `fused` and `foreach` cannot be `True` together
    """
    if group.get("fused"):
        if group.get("foreach"):
            raise EmberError(f"{name}: `fused` and `foreach` cannot be `True` together")
        if group.get("differentiable"):
            raise EmberError(f"{name}: `fused` does not support `differentiable`")


def check_step_flags(name: str, group: dict, p: Tensor) -> None:
    """Refuse, as PyTorch does when it steps, ``differentiable=True`` (its step records the
    in-place update of a leaf that requires grad) and ``capturable=True`` off the GPU.

    >>> import ember
    >>> check_step_flags("Adam", {"capturable": True}, ember.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ember._errors.EmberError: Adam: capturable=True needs parameters on a GPU, got one ... on cpu
    """
    if group.get("differentiable") and p.requires_grad:
        raise EmberError(
            f"{name}: differentiable=True records the step for autograd, but the parameter of "
            f"shape {tuple(p.shape)} is a leaf that requires grad, and a leaf Variable that "
            "requires grad cannot be used in an in-place operation"
        )
    if group.get("capturable") and p.device.type != "cuda":
        raise EmberError(
            f"{name}: capturable=True needs parameters on a GPU, got one of shape "
            f"{tuple(p.shape)} on {p.device}"
        )


def _into(old: dict | None, new: dict) -> dict:
    """``new``, with each tensor that matches one of ``old`` copied into that one instead:
    a compiled step keeps reading and writing the same state after a checkpoint is loaded."""
    if old is None:
        return new
    for k, v in new.items():
        held = old.get(k)
        if (
            isinstance(v, Tensor)
            and isinstance(held, Tensor)
            and held._data.shape == v._data.shape
            and held._data.dtype == v._data.dtype
        ):
            held._data[...] = _backend.to_device(v._data, held.device)
            new[k] = held
    return new


def state_like(p: Tensor, fill: float = 0.0) -> Tensor:
    """A state tensor with ``p``'s shape, dtype and device, filled with ``fill``.

    >>> import ember
    >>> state_like(ember.ones(2, dtype=ember.float16), 0.5)
    tensor([0.5000, 0.5000], dtype=ember.float16)
    """
    return Tensor._make(_backend.full(tuple(p.shape), fill, p.dtype.np, p.device))


def scalar_state(p: Tensor, value: float) -> Tensor:
    """A float32 scalar state tensor on ``p``'s device (where PyTorch keeps a running product
    or rate in a float32 scalar: NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``).

    >>> import ember
    >>> scalar_state(ember.ones(2), 1.0)
    tensor(1.)
    """
    return Tensor._make(_backend.full((), value, np.float32, p.device))


def step_count(value: float = 0.0) -> Tensor:
    """The step count's state tensor: a float32 scalar on the CPU, as PyTorch keeps it;
    ``ember.compile`` moves it to the parameter's device. Rules read it as a float64 scalar
    (``hp["step"]``), as PyTorch's bias corrections read it as a Python float.

    >>> step_count()
    tensor(0.)
    """
    return Tensor._make(np.array(value, dtype=np.float32))


def _numbers(group: dict, scalar) -> dict:
    """The group's numbers (and tuples of numbers, as tuples) as the 0-d tensors
    ``scalar(key, index, value)`` makes: eagerly, float64 scalars on the parameter's device;
    traced, values the graph reads on every run."""
    out = {}
    for k, v in group.items():
        if _is_number(v):
            out[k] = scalar(k, None, v)
        elif isinstance(v, tuple) and v and all(_is_number(e) for e in v):
            out[k] = tuple(scalar(k, i, e) for i, e in enumerate(v))
    return out


def _scalar(p: Tensor, value) -> Tensor:
    return Tensor._make(_backend.full((), float(value), np.float64, p.device))


def _scalar_on(p: Tensor):
    return lambda key, index, value: _scalar(p, value)


def _host_on(tracer, group: dict, p: Tensor):
    return lambda key, index, value: tracer.host_value(group, key, index, p)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)


def _structure(v):
    """What a trace fixes of a hyperparameter: whether a number is zero; anything else itself."""
    t = type(v)
    if t is bool or v is None:  # the common cases first (called for every key on every call)
        return v
    if t is float or t is int or _is_number(v):
        return v != 0
    if isinstance(v, tuple):
        return tuple([_structure(e) for e in v])
    return v


def _export(key: str, value):
    if key == "step":  # PyTorch keeps the step count as a float32 tensor
        return Tensor._make(np.asarray(float(value), dtype=np.float32))
    if isinstance(value, Tensor):
        return Tensor._make(value._data.copy())
    return value


def _import(key: str, value, p: Tensor):
    if key == "step":
        return step_count(float(value))
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        # tensors shaped like p take its dtype; scalars (a running rate) keep theirs
        dtype = p._data.dtype if is_float_np(value.dtype) and value.ndim else value.dtype
        moved = _backend.to_device(value, p.device)
        return Tensor._make(moved.astype(dtype, copy=moved is value))
    return value
