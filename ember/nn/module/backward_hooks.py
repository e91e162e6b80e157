"""Module backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``)
as PyTorch runs them: the module's tensor arguments and its tensor results each pass through
one identity ``BackwardHookFunction``, whose backward sees all their gradients at once.

The results' node gets ``grad_output`` first: backward pre-hooks may replace it. The arguments'
node gets ``grad_input`` once the gradient has flowed through the module: the hooks are called
with ``(module, grad_input, grad_output)`` and may replace ``grad_input``. ``grad_input`` has
one entry per positional argument (None for non-tensors). When no argument requires grad the
hooks run at the results' node with a ``grad_input`` of Nones, as PyTorch's do.

>>> import ember
>>> m = ember.nn.Linear(2, 1)
>>> seen = []
>>> h = m.register_full_backward_hook(lambda mod, gin, gout: seen.append((gin, gout)))
>>> m(ember.ones(3, 2, requires_grad=True)).sum().backward()
>>> [tuple(g.shape) for g in seen[0][0]], [tuple(g.shape) for g in seen[0][1]]
([(3, 2)], [(3, 1)])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..._config import state
from ..._tensor import Tensor
from ...autograd.function import Function

_NO_INPUT_GRAD = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHookFunction(Function):
    """The identity on tensors whose backward hands their gradients to ``callback`` and
    returns what it gives back (its node is PyTorch's ``BackwardHookFunctionBackward``)."""

    @staticmethod
    def forward(ctx, callback: Callable, materialize: bool, *tensors: Tensor) -> tuple:
        ctx.callback = callback
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.callback(grads))


def _pack(index: list, values, n: int) -> tuple:
    """``values`` at positions ``index`` of an ``n``-tuple, None elsewhere."""
    out = [None] * n
    for i, v in zip(index, values):
        out[i] = v
    return tuple(out)


def _checked_length(got, expected: int, what: str, kind: str) -> tuple:
    if len(got) != expected:
        raise RuntimeError(
            f"Backward {kind} returned an invalid number of {what}, got {len(got)}, but "
            f"expected {expected}"
        )
    return tuple(got)


class BackwardHook:
    """One module call's backward hooks: wraps its arguments, then its results."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_index = None  # positions of tensor arguments; None: none requires grad
        self.n_outputs = 0
        self.output_index = None

    def _wrap(self, values: tuple, callback: Callable, materialize: bool):
        """``values`` with its tensors passed through one BackwardHookFunction, and their
        positions; unchanged (and None) when none requires grad."""
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not (state.grad_enabled and any(values[i].requires_grad for i in index)):
            return values, None
        new = BackwardHookFunction.apply(callback, materialize, *[values[i] for i in index])
        out = list(values)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(args, self._on_grad_input, True)
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        outs, self.output_index = self._wrap(outs, self._on_grad_output, False)
        return outs[0] if single else outs

    def _on_grad_output(self, grads: tuple) -> tuple:
        grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        for pre_hook in self.pre_hooks:
            r = pre_hook(self.module, grad_outputs)
            if r is not None:
                grad_outputs = _checked_length(r, len(grad_outputs), "grad_output", "pre hook")
        self.grad_outputs = grad_outputs
        if self.input_index is None:
            warnings.warn(_NO_INPUT_GRAD, UserWarning, stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                r = hook(self.module, grad_inputs, grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(g is None for g in r)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_index)

    def _on_grad_input(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:  # no result of the module got a gradient
            return grads
        grad_inputs = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                grad_inputs = _checked_length(r, len(grad_inputs), "grad_input", "hook")
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_index)
