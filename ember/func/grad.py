"""``grad``, ``grad_and_value``, ``vjp`` and ``jvp`` (as ``torch.func``), on ember's
reverse-mode engine. ember has no forward mode: ``jvp`` differentiates a vjp (the
double-backward trick: ``J v = d/du (u^T J) v``), which needs every op's vjp to be
differentiable, as ember's are (a ``Function`` with ``once_differentiable`` is not).

>>> import ember
>>> from ember.func import grad
>>> grad(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> grad(grad(lambda x: x ** 3))(ember.tensor(2.0))
tensor(12.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _config
from .._errors import EmberError
from .._tensor import Tensor
from ..autograd.engine import grad as _engine_grad
from ..autograd.functional import _grads, _zeros_for
from ..functions.creation import zeros_like
from .levels import finish, fresh_inputs, reaches_outer
from .pytree import tree_flatten, tree_unflatten


def check_argnums(argnums, n_args: int) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions, checked as torch.func does.

    >>> check_argnums(-1, 3), check_argnums((0, 2), 3)
    ((2,), (0, 2))
    """
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if not nums:
        raise EmberError("argnums must be non-empty")
    if len(set(nums)) != len(nums):
        raise EmberError(f"argnums elements must be unique, got {argnums}")
    out = []
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise EmberError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n_args <= a < n_args:
            raise EmberError(f"Got argnum={a}, but only {n_args} positional inputs")
        out.append(a % n_args)
    return tuple(out)


class Prepared:
    """The function's arguments with the differentiated ones replaced by fresh inputs."""

    def __init__(self, args: tuple, argnums) -> None:
        self.outer_grad = _config.state.grad_enabled
        self.many = isinstance(argnums, tuple)
        self.nums = check_argnums(argnums, len(args))
        self.specs, self.leaves = [], []
        new_args = list(args)
        for i in self.nums:
            leaves, spec = tree_flatten(args[i])
            fresh = fresh_inputs(leaves)
            self.specs.append(spec)
            self.leaves.append(fresh)
            new_args[i] = tree_unflatten(fresh, spec)
        self.args = tuple(new_args)
        self.inner = [t for part in self.leaves for t in part]

    def keep(self, outputs: list) -> bool:
        """Whether derivatives must stay differentiable (a caller differentiates them)."""
        return self.outer_grad and reaches_outer(outputs, self.inner)

    def rebuild(self, flat: list):
        """Gradients of ``inner`` (in its order) shaped like the differentiated arguments."""
        out, k = [], 0
        for spec, part in zip(self.specs, self.leaves):
            out.append(tree_unflatten(flat[k : k + len(part)], spec))
            k += len(part)
        return tuple(out) if self.many else out[0]


def split_aux(out, has_aux: bool, api: str):
    """``(output, aux)`` from what the function returned."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise EmberError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return out


def gradients(outputs: list, inputs: list, cotangents: list, create_graph: bool) -> list:
    """``sum(cot . d out / d in)`` for each input, zeros where an input is unused."""
    return list(_zeros_for(_grads(outputs, inputs, cotangents, create_graph), inputs))


def grad_and_value(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """``func``'s gradient with respect to the arguments ``argnums`` (Tensors or pytrees of
    them), and its value: ``(grad, value)``, or ``(grad, (value, aux))`` with ``has_aux``.

    >>> import ember
    >>> from ember.func import grad_and_value
    >>> grad_and_value(lambda x: (x * x).sum())(ember.tensor([1.0, 3.0]))
    (tensor([2., 6.]), tensor(10.))
    """

    def wrapper(*args, **kwargs):
        prep = Prepared(args, argnums)
        with _config.enable_grad():
            out, aux = split_aux(func(*prep.args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(out, Tensor):
                raise EmberError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.dim() != 0:
                raise EmberError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            aux_leaves, aux_spec = tree_flatten(aux)
            keep = prep.keep([out, *[a for a in aux_leaves if isinstance(a, Tensor)]])
            flat = gradients([out], prep.inner, [out.new_ones(())], keep)
        grads = prep.rebuild(finish(flat, keep))
        (value,) = finish([out], keep)
        if has_aux:
            return grads, (value, tree_unflatten(finish(aux_leaves, keep), aux_spec))
        return grads, value

    wrapper.__name__ = f"grad_and_value({getattr(func, '__name__', 'f')})"
    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of scalar-valued ``func`` with respect to its arguments ``argnums``; nests
    (``grad(grad(f))``) and composes with ``vmap`` (per-sample gradients).

    >>> import ember
    >>> from ember.func import grad
    >>> grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(ember.ones(2), ember.tensor([2.0, 3.0]))
    (tensor([2., 3.]), tensor([1., 1.]))
    """
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    wrapper.__name__ = f"grad({getattr(func, '__name__', 'f')})"
    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one gradient per primal
    (a tuple), as ``torch.func.vjp``; it may be called many times.

    >>> import ember
    >>> from ember.func import vjp
    >>> out, fn = vjp(ember.sin, ember.zeros(2))
    >>> fn(ember.tensor([1.0, 2.0]))
    (tensor([1., 2.]),)
    """
    prep = Prepared(primals, tuple(range(len(primals)))) if primals else None
    if prep is None:
        raise EmberError("vjp(f, *primals): expected at least one primal")
    with _config.enable_grad():
        out, aux = split_aux(func(*prep.args), has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = tree_flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise EmberError(f"vjp(f, *primals): expected f to return Tensors, got {type(o)}")
    keep = prep.keep(out_leaves)

    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph: bool | None = None):
        cots, spec = tree_flatten(cotangents)
        if spec != out_spec:
            raise EmberError(
                "vjp_fn(cotangents): expected cotangents with the structure of the output of f"
            )
        for c, o in zip(cots, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise EmberError(
                    f"vjp_fn(cotangents): Mismatch in shape: cotangent has a shape of "
                    f"{tuple(c.shape)} and output has a shape of {tuple(o.shape)}"
                )
        deeper = keep or (_config.state.grad_enabled and any(c._requires_grad for c in cots))
        if create_graph is not None:
            deeper = create_graph
        with _config.enable_grad():
            flat = gradients(out_leaves, prep.inner, cots, deeper)
        return prep.rebuild(finish(flat, deeper))

    result = tree_unflatten(finish(out_leaves, keep), out_spec)
    if has_aux:
        aux_leaves, aux_spec = tree_flatten(aux)
        return result, vjp_fn, tree_unflatten(finish(aux_leaves, keep), aux_spec)
    return result, vjp_fn


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, computed by
    differentiating a vjp (ember has no forward mode; the values equal forward mode's).

    >>> import ember
    >>> from ember.func import jvp
    >>> jvp(lambda x: x ** 2, (ember.tensor([1.0, 2.0]),), (ember.ones(2),))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    if not isinstance(primals, tuple):
        raise EmberError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid "
            "to call f(*primals)."
        )
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise EmberError(
            "jvp(f, primals, tangents): Expected tangents to be a tuple with as many entries "
            f"as primals ({len(primals)})"
        )
    prep = Prepared(primals, tuple(range(len(primals))))
    tans = tree_flatten(tangents)[0]
    for t, x in zip(tans, prep.inner):
        if tuple(t.shape) != tuple(x.shape):
            raise EmberError(
                "jvp(f, primals, tangents): Trying to set a forward gradient that has a "
                f"different size than that of the original Tensor: the Tensor is of size "
                f"{list(x.shape)} while the given tangent is of size {list(t.shape)}"
            )
    with _config.enable_grad():
        out, aux = split_aux(func(*prep.args), has_aux, "jvp(f, primals, tangents)")
        outs, out_spec = tree_flatten(out)
        keep = prep.keep(outs) or (
            prep.outer_grad and any(isinstance(t, Tensor) and t._requires_grad for t in tans)
        )
        us = [zeros_like(o).requires_grad_(True) for o in outs]
        back = gradients(outs, prep.inner, us, True)
        pairs = [(b, t) for b, t in zip(back, tans) if b._requires_grad]
        if pairs:
            got = _engine_grad(
                [b for b, _ in pairs],
                us,
                [t for _, t in pairs],
                create_graph=keep,
                allow_unused=True,
            )
            res = [zeros_like(o) if g is None else g for g, o in zip(got, outs)]
        else:
            res = [zeros_like(o) for o in outs]
    primal_out = tree_unflatten(finish(outs, keep), out_spec)
    tangent_out = tree_unflatten(finish(res, keep), out_spec)
    if has_aux:
        aux_leaves, aux_spec = tree_flatten(aux)
        return primal_out, tangent_out, tree_unflatten(finish(aux_leaves, keep), aux_spec)
    return primal_out, tangent_out


__all__ = ["grad", "grad_and_value", "jvp", "vjp"]
