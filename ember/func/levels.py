"""How the transforms nest on one autograd engine (torch.func's "levels", without levels).

A transform makes the inputs it differentiates into fresh tensors that require grad: a view of
the caller's tensor when the caller is itself being differentiated (grad enabled and the
tensor requires grad), a detached copy otherwise. After running the function it asks whether
the result reaches any tensor *outside* those fresh inputs that requires grad (a parameter, an
outer transform's input); only then are the derivatives built with ``create_graph=True``, so
``grad(grad(f))``, ``jacrev(jacrev(f))`` and ``grad`` of a loss over parameters that require
grad stay differentiable, and everything else returns plain detached tensors.

>>> import ember
>>> x = ember.ones(2)
>>> (x_in,) = fresh_inputs([x])
>>> x_in.requires_grad, reaches_outer([x_in * 2], [x_in])
(True, False)
"""

from __future__ import annotations

from .. import _config
from .._errors import EmberError
from .._tensor import Tensor


def fresh_inputs(leaves: list) -> list:
    """One tensor requiring grad per leaf, connected to the caller's graph where it has one.

    >>> import ember
    >>> fresh_inputs([ember.zeros(1)])[0].is_leaf
    True
    """
    out = []
    for x in leaves:
        if not isinstance(x, Tensor):
            raise EmberError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not x.is_floating_point():
            raise EmberError(
                f"only Tensors of floating point dtype can require gradients (got {x.dtype})"
            )
        if _config.state.grad_enabled and x._requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(True))
    return out


def reaches_outer(outputs: list, inner: list) -> bool:
    """Whether the history of ``outputs`` reaches a tensor requiring grad other than ``inner``
    (the transform's own fresh inputs), with grad mode on outside the transform.

    >>> import ember
    >>> w = ember.ones(2, requires_grad=True)
    >>> x = ember.ones(2, requires_grad=True)
    >>> reaches_outer([w * x], [x]), reaches_outer([x * 2], [x])
    (True, False)
    """
    own = {id(t) for t in inner}
    stack, seen = [], set()
    for t in outputs:
        if not isinstance(t, Tensor) or not t._requires_grad:
            continue
        if t._node is None:
            if id(t) not in own:
                return True
        else:
            stack.append(t._node)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for e in getattr(node, "edges", ()):
            if e is None:
                continue
            if isinstance(e, Tensor):
                if id(e) not in own:
                    return True
            elif id(e) not in seen:
                stack.append(e)
    return False


def finish(tree_leaves: list, keep: bool) -> list:
    """Leaves as the transform returns them: detached unless the caller differentiates them."""
    if keep:
        return list(tree_leaves)
    return [t.detach() if isinstance(t, Tensor) else t for t in tree_leaves]


__all__ = ["finish", "fresh_inputs", "reaches_outer"]
