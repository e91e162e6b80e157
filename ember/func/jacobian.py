"""``jacrev``, ``jacfwd`` and ``hessian`` (as ``torch.func``).

Both Jacobians are computed the same way, by reverse mode: one vector-Jacobian product per
output element (ember has no forward mode), so ``jacfwd`` gives ``jacrev``'s values; each
block has shape ``output.shape + input.shape``. ``hessian(f)`` is ``jacfwd(jacrev(f))``.

>>> import ember
>>> from ember.func import jacrev, hessian
>>> jacrev(ember.sin)(ember.tensor([0.0, 0.0]))
tensor([[1., 0.],
        [0., 1.]])
>>> hessian(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable

from .. import _config
from .._errors import EmberError
from .._tensor import Tensor
from ..functions.shape import stack
from .grad import Prepared, gradients, split_aux
from .levels import finish
from .pytree import tree_flatten, tree_unflatten


def _jacobian(func, argnums, has_aux: bool, api: str) -> Callable:
    def wrapper(*args, **kwargs):
        prep = Prepared(args, argnums)
        with _config.enable_grad():
            out, aux = split_aux(func(*prep.args, **kwargs), has_aux, f"{api}(f, ...)(*args)")
            outs, out_spec = tree_flatten(out)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise EmberError(
                        f"{api}(f, ...)(*args): expected f to return Tensors, got {type(o)}"
                    )
            aux_leaves, aux_spec = tree_flatten(aux)
            keep = prep.keep(outs + [a for a in aux_leaves if isinstance(a, Tensor)])
            blocks = []
            for o in outs:
                flat = o.reshape(-1)
                rows = [[] for _ in prep.inner]
                for k in range(flat.shape[0]):
                    seed = flat.new_zeros(flat.shape)
                    seed[k] = 1.0
                    for j, g in enumerate(gradients([flat], prep.inner, [seed], keep)):
                        rows[j].append(g)
                per_input = []
                for j, x in enumerate(prep.inner):
                    shape = tuple(o.shape) + tuple(x.shape)
                    b = stack(rows[j]).reshape(shape) if rows[j] else x.new_zeros(shape)
                    per_input.append(b)
                blocks.append(prep.rebuild(finish(per_input, keep)))
        jac = tree_unflatten(blocks, out_spec)
        if has_aux:
            return jac, tree_unflatten(finish(aux_leaves, keep), aux_spec)
        return jac

    wrapper.__name__ = f"{api}({getattr(func, '__name__', 'f')})"
    return wrapper


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable:
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by reverse mode
    (one vjp per output element; ``chunk_size`` is accepted and changes nothing).

    >>> import ember
    >>> from ember.func import jacrev
    >>> jacrev(lambda a, b: a * b, argnums=(0, 1))(ember.tensor([2.0]), ember.tensor([3.0]))
    (tensor([[3.]]), tensor([[2.]]))
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise EmberError(f"jacrev: `chunk_size` should be greater than 0 (got {chunk_size})")
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """The Jacobian of ``func``, as ``torch.func.jacfwd`` returns it. ember has no forward
    mode: it is computed by reverse mode, as ``jacrev`` (the same values and shapes).

    >>> import ember
    >>> from ember.func import jacfwd
    >>> jacfwd(lambda x: x.sum() * x)(ember.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """
    if randomness not in ("error", "different", "same"):
        raise EmberError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    return _jacobian(func, argnums, has_aux, "jacfwd")


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of scalar-valued ``func``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> import ember
    >>> from ember.func import hessian
    >>> hessian(lambda x: (x * x).prod())(ember.tensor([1.0, 2.0]))
    tensor([[8., 8.],
            [8., 2.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


__all__ = ["hessian", "jacfwd", "jacrev"]
