"""``functional_call`` and ``stack_module_state`` (as ``torch.func``): run a module with other
tensors in place of its parameters and buffers, and stack the state of several modules.

>>> import ember
>>> from ember.func import functional_call
>>> lin = ember.nn.Linear(2, 1)
>>> functional_call(lin, {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}, ember.ones(1, 2))
tensor([[2.]])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._errors import EmberError
from ..functions.shape import stack

_MISSING = object()


def _merge(parameter_and_buffer_dicts) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if isinstance(parameter_and_buffer_dicts, (list, tuple)) and all(
        isinstance(d, dict) for d in parameter_and_buffer_dicts
    ):
        merged: dict = {}
        for d in parameter_and_buffer_dicts:
            repeated = [k for k in d if k in merged]
            if repeated:
                raise ValueError(
                    f"{repeated} appeared in multiple dictionaries; behavior of functional call "
                    "is ambiguous"
                )
            merged.update(d)
        return merged
    raise ValueError(
        "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
        f"{type(parameter_and_buffer_dicts)}"
    )


def _state_names(module) -> dict[str, list[str]]:
    """Every name of each parameter and buffer (tied tensors have several), by tensor id."""
    names: dict[int, list[str]] = {}
    for n, t in module.named_parameters(remove_duplicate=False):
        names.setdefault(id(t), []).append(n)
    for n, t in module.named_buffers(remove_duplicate=False):
        names.setdefault(id(t), []).append(n)
    return names


def _with_ties(module, values: dict, tie_weights: bool) -> dict:
    if not tie_weights:
        return values
    out = dict(values)
    for group in _state_names(module).values():
        if len(group) < 2:
            continue
        given = [n for n in group if n in values]
        if not given:
            continue
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for n in group:
            out[n] = values[given[0]]
    return out


def _check_strict(module, values: dict) -> None:
    expected = [n for n, _ in module.named_parameters(remove_duplicate=False)]
    expected += [n for n, _ in module.named_buffers(remove_duplicate=False)]
    missing = [n for n in expected if n not in values]
    unexpected = [n for n in values if n not in set(expected)]
    if not (missing or unexpected):
        return
    lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
    if unexpected:
        lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
    if missing:
        lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
    raise EmberError("\n".join(lines))


@contextlib.contextmanager
def swapped_state(module, values: dict) -> Iterator[None]:
    """Put ``values`` (dotted names) in place of the module's parameters, buffers or
    attributes; everything is put back on exit, also after an error.

    >>> import ember
    >>> lin = ember.nn.Linear(1, 1)
    >>> with swapped_state(lin, {"bias": ember.tensor([5.0])}):
    ...     lin.bias
    tensor([5.])
    >>> isinstance(lin.bias, ember.nn.Parameter)
    True
    """
    undo = []
    try:
        for name, value in values.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            for registry in ("_parameters", "_buffers"):
                slots = owner.__dict__[registry]
                if attr in slots:
                    undo.append((slots, attr, slots[attr]))
                    slots[attr] = value
                    break
            else:
                d = owner.__dict__
                undo.append((d, attr, d.get(attr, _MISSING)))
                d[attr] = value
        yield
    finally:
        for slots, attr, old in reversed(undo):
            if old is _MISSING:
                slots.pop(attr, None)
            else:
                slots[attr] = old


def functional_call(
    module,
    parameter_and_buffer_dicts: dict | tuple | list,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (one dict
    or several, keyed by dotted names) in place of its parameters and buffers. Tied tensors
    follow each other unless ``tie_weights=False``; ``strict=True`` requires exactly the
    module's names. The module's own tensors are restored afterwards, also after an error.

    >>> import ember
    >>> from ember.func import functional_call
    >>> lin = ember.nn.Linear(1, 1, bias=False)
    >>> functional_call(lin, {"weight": ember.tensor([[3.0]])}, (ember.tensor([[2.0]]),))
    tensor([[6.]])
    """
    values = _merge(parameter_and_buffer_dicts)
    for name in values:
        if not isinstance(name, str):
            raise EmberError(f"functional_call: keys must be dotted names, got {name!r}")
    values = _with_ties(module, values, tie_weights)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with swapped_state(module, values):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-shaped ``models`` stacked along a new first
    dimension: ``(params, buffers)``, for ``vmap`` over ``functional_call`` (model ensembling).
    Stacked parameters are new leaves that require grad.

    >>> import ember
    >>> from ember.func import stack_module_state
    >>> params, buffers = stack_module_state([ember.nn.Linear(2, 3) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].requires_grad
    (ember.Size([4, 3, 2]), True)
    """
    models = list(models)
    if not models:
        raise EmberError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise EmberError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    kinds = {type(m) for m in models}
    if len(kinds) != 1:
        raise EmberError(
            "stack_module_state: Expected all models to be of the same class, got "
            f"{sorted(k.__name__ for k in kinds)}"
        )

    def stacked(named) -> dict:
        out = {}
        for name in dict(named(models[0])):
            tensors = [dict(named(m))[name] for m in models]
            grads = {t.requires_grad for t in tensors}
            if len(grads) > 1:
                raise EmberError(
                    f"stack_module_state: Expected {name} from each model to have the same "
                    ".requires_grad"
                )
            s = stack([t.detach() for t in tensors])
            out[name] = s.requires_grad_(True) if grads == {True} else s
        return out

    return (
        stacked(lambda m: m.named_parameters()),
        stacked(lambda m: m.named_buffers()),
    )


__all__ = ["functional_call", "stack_module_state"]
