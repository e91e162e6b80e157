"""The optimizer base: param groups, per-parameter state in plain dicts, one loop.

A concrete optimizer gives its ``defaults`` and two methods:

- ``init_state(p, group) -> dict`` — the state a parameter starts with;
- ``update(p, g, state, group)`` — one step on raw arrays (``p`` and ``g`` are the backend's
  arrays; update ``p`` and the state arrays in place with the array module ``xp = xp_of(p)``).

The loop (``step``) skips parameters without gradients, runs under ``no_grad`` and bumps each
parameter's version counter. State dicts follow PyTorch's layout (``{"state": {index: {...}},
"param_groups": [{..., "params": [indices]}]}``) so checkpoints carry over.

>>> import ember
>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([w], lr=0.5)
>>> (w * w).sum().backward(); opt.step(); w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""

from __future__ import annotations

import copy

import numpy as np

from .._config import no_grad
from .._config import state as _mode
from .._errors import EmberError
from .._tensor import Tensor
from ..backend import xp_of
from ..dtypes import is_float_np


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: holds ``param_groups`` and ``state``; subclasses define the update rule."""

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

    def update(self, p, g, state: dict, group: dict) -> None:
        raise NotImplementedError

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = None
        if closure is not None:
            from .._config import enable_grad

            with enable_grad():
                loss = closure()
        tracer = _mode.tracer
        if tracer is not None and tracer.optimizer_step(self):  # ember.compile records it
            return loss
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p._grad
                    if grad is None:
                        continue
                    state = self.state.get(p)
                    if state is None:
                        state = self.state[p] = self.init_state(p, group)
                    g = grad._data
                    if group.get("maximize"):
                        g = -g
                    self.update(p._data, g, state, group)
                    p._version[0] += 1
        return loss

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
                if p in self.state:
                    state[index[id(p)]] = {k: _export(k, v) for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyperparameters and state saved by ``state_dict`` (copies the arrays)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(groups)} parameter groups, the optimizer has "
                f"{len(self.param_groups)}"
            )
        params_by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group ({len(saved['params'])} != {len(mine['params'])})"
                )
            for p, i in zip(mine["params"], saved["params"]):
                params_by_index[int(i)] = p
            for k, v in saved.items():
                if k != "params":
                    mine[k] = copy.deepcopy(v)
        self.state = {}
        for i, st in state_dict["state"].items():
            p = params_by_index.get(int(i))
            if p is None:
                continue
            self.state[p] = {k: _import(k, v, p) for k, v in st.items()}


def _export(key: str, value):
    if key == "step":  # PyTorch keeps the step count as a float tensor
        return Tensor._make(np.asarray(float(value), dtype=np.float32))
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        return Tensor._make(value.copy())
    return value


def _import(key: str, value, p: Tensor):
    if key == "step":
        return int(float(value))
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        xp = xp_of(p._data)
        dtype = p._data.dtype if is_float_np(value.dtype) else value.dtype
        return xp.array(xp.asarray(value), dtype=dtype, copy=True)
    return value
