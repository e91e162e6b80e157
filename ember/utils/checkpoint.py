"""Activation checkpointing (as ``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without recording history (its intermediates are freed
as it goes) and keeps only its inputs. When the backward pass reaches the result, ``fn`` runs
again with grad on, from the same random-number state (so dropout draws the same masks), and
the gradient flows through that recomputation. Both of torch's variants are here:

- ``use_reentrant=True`` (torch's default when the flag is not given, with its warning): the
  result requires grad only if an input does; the backward accumulates the gradients of the
  tensors ``fn`` uses (parameters) into their ``.grad`` (``ember.autograd.grad`` through it
  does not return them); no keyword arguments.
- ``use_reentrant=False``: the parameters of ``fn`` (a Module, a bound method of one, or
  Modules and tensors in its closure or ``functools.partial`` arguments) are inputs of the
  recorded node too, so the result requires grad even when ``args`` don't, and
  ``ember.autograd.grad`` returns their gradients; keyword arguments are passed through.

>>> import ember, warnings
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
>>> y.backward()
>>> ember.allclose(x.grad, x.detach().cos() * x.detach() + x.detach().sin())
True
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import _config
from .._errors import EmberError
from .._tensor import Tensor
from ..autograd.engine import backward as _backward
from ..autograd.engine import grad as _grad
from ..autograd.function import Function
from ..random import get_rng_state, set_rng_state


def _tensors_reached(fn) -> list:
    """The tensors requiring grad that ``fn`` can reach through the objects it holds: a Module's
    parameters, a bound method's owner, closure cells, ``functools.partial`` arguments."""
    found, seen = [], set()

    def add(obj, depth=0):
        if depth > 3 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            if obj._requires_grad:
                found.append(obj)
        elif hasattr(type(obj), "_compile_tensors") and hasattr(obj, "parameters"):
            for p in obj.parameters():
                add(p, depth)
        elif isinstance(obj, functools.partial):
            add(obj.func, depth + 1)
            for a in (*obj.args, *obj.keywords.values()):
                add(a, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for a in obj:
                add(a, depth + 1)
        else:
            owner = getattr(obj, "__self__", None)
            if owner is not None:
                add(owner, depth + 1)
            target = getattr(obj, "__func__", obj)
            for cell in getattr(target, "__closure__", None) or ():
                try:
                    add(cell.cell_contents, depth + 1)
                except ValueError:
                    pass

    add(fn)
    return found


def _recompute(ctx, inputs: tuple):
    """Run ``fn`` again with grad on, from the forward's random state: ``(outputs, leaves)``,
    ``leaves`` being what the gradients are taken for (detached arguments, then the reached
    tensors themselves)."""
    leaves = [
        x.detach().requires_grad_(x._requires_grad) if isinstance(x, Tensor) else x
        for x in inputs[: ctx.n_args]
    ] + list(inputs[ctx.n_args :])  # the tensors fn reaches itself: used as they are
    outer = get_rng_state() if ctx.rng_state is not None else None
    if outer is not None:
        set_rng_state(ctx.rng_state)
    try:
        with _config.enable_grad():
            out = ctx.fn(*leaves[: ctx.n_args], **ctx.kwargs)
    finally:
        if outer is not None:
            set_rng_state(outer)
    outs = out if isinstance(out, tuple) else (out,)
    return outs, leaves


class _Checkpoint(Function):
    """The recorded node: forward without history, backward by recomputation."""

    @staticmethod
    def forward(ctx, fn, preserve_rng_state, reentrant, n_args, kwargs, *tensors):
        ctx.fn, ctx.n_args, ctx.kwargs, ctx.reentrant = fn, n_args, kwargs, reentrant
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.inputs = tensors
        out = fn(*tensors[:n_args], **kwargs)
        ctx.single = not isinstance(out, tuple)
        return out

    @staticmethod
    def backward(ctx, *grads):
        outs, leaves = _recompute(ctx, ctx.inputs)
        pairs = [
            (o, g)
            for o, g in zip(outs, grads)
            if isinstance(o, Tensor) and o._requires_grad and g is not None
        ]
        wanted = [t for t in leaves if isinstance(t, Tensor) and t._requires_grad]
        if not pairs:
            return (None,) * 5 + tuple(None for _ in leaves)
        if ctx.reentrant:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
            got = {id(t): t.grad for t in wanted}
        else:
            values = _grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
            got = {id(t): g for t, g in zip(wanted, values)}
        return (None,) * 5 + tuple(got.get(id(t)) for t in leaves)


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn=None,
    determinism_check: str = "default",
    debug: bool = False,
    **kwargs: Any,
):
    """``function(*args, **kwargs)`` without keeping its intermediates; the backward pass
    recomputes them (``preserve_rng_state=True``, the default, replays the same random draws).

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint
    >>> lin = ember.nn.Linear(2, 1)
    >>> out = checkpoint(lin, ember.ones(3, 2), use_reentrant=False)
    >>> out.sum().backward(); lin.weight.grad
    tensor([[3., 3.]])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not None or debug):
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
        )
    if use_reentrant:
        if _config.state.grad_enabled and not any(
            isinstance(a, Tensor) and a._requires_grad for a in args
        ):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
            )
        extra = []
    else:
        extra = [t for t in _tensors_reached(function) if not any(t is a for a in args)]
    tensors = list(args) + extra
    return _Checkpoint.apply(function, preserve, use_reentrant, len(args), kwargs, *tensors)


def checkpoint_sequential(
    functions, segments: int, input: Tensor, use_reentrant: bool | None = None, **kwargs: Any
):
    """Run ``functions`` (a Sequential or a list of modules/functions) on ``input`` in
    ``segments`` chunks, checkpointing every chunk but the last.

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint_sequential
    >>> net = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU(), ember.nn.Linear(2, 1))
    >>> x = ember.ones(4, 2)
    >>> bool((checkpoint_sequential(net, 2, x, use_reentrant=False) == net(x)).all())
    True
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and hasattr(type(functions), "_compile_tensors"):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or segments <= 0:
        raise EmberError(f"checkpoint_sequential: segments must be a positive int, got {segments}")

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        forward.parts = functions[start : end + 1]  # what use_reentrant=False finds
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)


__all__ = ["checkpoint", "checkpoint_sequential"]
