"""PyTorch's pickled module and optimizer state, set on ember's objects (pickle's ``BUILD``).

A ``torch.save(model)`` pickle builds each module with its class's ``__new__`` and sets its
instance dict: ``training``, ``_parameters``, ``_buffers``, ``_modules``, the hook dicts and
the layer's own attributes, which ember's layers share with PyTorch's. An ember module (an
ember class, or the user's ``class Net(torch.nn.Module)`` in a program that did ``import ember
as torch``) takes that dict through its ``__setstate__``, less PyTorch's backward-hook entries,
which ember keeps elsewhere (they are empty: hooks are code, and a weights-only load refuses
code). An optimizer's pickle holds PyTorch's ``defaults``, ``param_groups`` and ``state``
(keyed by the parameters): the ember optimizer is constructed over those parameters with
the hyperparameters it knows, then loads the state through ``load_state_dict`` once the
tensors hold their values. Objects are told apart by what they do (ember's modules and
optimizers live in a layer above this one), and anything else gets pickle's own ``BUILD``.

>>> import ember
>>> from ember.serialization.torch_objects import build_from_torch
>>> m = ember.nn.Linear.__new__(ember.nn.Linear)
>>> state = {"training": False, "_parameters": {"weight": ember.nn.Parameter(ember.ones(1, 1)),
...          "bias": None}, "_buffers": {}, "_modules": {}, "_backward_hooks": {},
...          "in_features": 1, "out_features": 1}
>>> build_from_torch(m, state, [])
>>> m.training, m(ember.ones(1, 1))
(False, tensor([[1.]], grad_fn=<MmBackward0>))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .unpickler import default_build

# torch.nn.Module's instance entries that ember's Module has no counterpart of
TORCH_ONLY_MODULE_KEYS = ("_backward_hooks", "_backward_pre_hooks", "_is_full_backward_hook")


def _is_module(inst: Any) -> bool:
    return callable(getattr(type(inst), "named_parameters", None)) and hasattr(
        type(inst), "__setstate__"
    )


def _is_optimizer(inst: Any, state: Any) -> bool:
    return (
        callable(getattr(type(inst), "load_state_dict", None))
        and callable(getattr(type(inst), "add_param_group", None))
        and isinstance(state, dict)
        and {"defaults", "param_groups", "state"} <= set(state)
    )


def build_from_torch(inst: Any, state: Any, after: list[Callable[[], None]]) -> None:
    """Set PyTorch's pickled ``state`` on the ember object ``inst`` (see the module docstring);
    ``after`` gets the work that must wait for the tensors' values."""
    if _is_module(inst) and isinstance(state, dict):
        state = dict(state)
        for key in TORCH_ONLY_MODULE_KEYS:
            if not state.get(key):
                state.pop(key, None)
        inst.__setstate__(state)
    elif _is_optimizer(inst, state):
        _optimizer(inst, state, after)
    else:
        default_build(inst, state)


def _optimizer(opt: Any, state: dict, after: list[Callable[[], None]]) -> None:
    groups = state["param_groups"]
    accepts = inspect.signature(type(opt).__init__).parameters
    kwargs = {k: v for k, v in state["defaults"].items() if k in accepts and k != "params"}
    type(opt).__init__(opt, [{"params": list(g["params"])} for g in groups], **kwargs)
    index = {id(p): i for i, p in enumerate(p for g in groups for p in g["params"])}
    mine = opt.param_groups
    saved = {
        "state": {index[id(p)]: dict(s) for p, s in state["state"].items() if id(p) in index},
        "param_groups": [
            {
                **{k: v for k, v in g.items() if k in m},
                "params": [index[id(p)] for p in g["params"]],
            }
            for g, m in zip(groups, mine)
        ],
    }
    after.append(lambda: opt.load_state_dict(saved))
