"""``vmap`` (as ``torch.func.vmap``): map a function over a batch dimension of its inputs.

ember runs ``func`` once per batch element (each input's mapped dimension selected away) and
stacks the results along ``out_dims``. Anything ``func`` can do eagerly works inside, including
``grad`` (the per-sample-gradients recipe), ``jacrev`` and nested ``vmap``. ``chunk_size`` is
checked and changes nothing here: the elements already run one at a time.

``randomness``: ``'error'`` (default) raises when ``func`` draws random numbers from the
default generator, ``'different'`` lets each element draw its own, ``'same'`` gives every
element the same draws (the generator is rewound before each).

>>> import ember
>>> from ember.func import vmap
>>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> vmap(ember.dot)(x, x)
tensor([ 5., 25.])
>>> vmap(lambda a, b: a * b, in_dims=(0, None))(x, ember.tensor([10.0, 1.0]))
tensor([[10.,  2.],
        [30.,  4.]])
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._errors import EmberError, ShapeError
from .._tensor import Tensor
from ..functions.shape import stack
from ..random import get_rng_state, set_rng_state
from .pytree import broadcast_prefix, spec_text, tree_flatten, tree_unflatten

_RANDOMNESS = ("error", "different", "same")


def _name(func) -> str:
    return getattr(func, "__name__", None) or repr(func)


def _is_dims(d) -> bool:
    if d is None or (isinstance(d, int) and not isinstance(d, bool)):
        return True
    if isinstance(d, (tuple, list)):
        return all(_is_dims(e) for e in d)
    if isinstance(d, dict):
        return all(_is_dims(e) for e in d.values())
    return False


def _in_dims_per_leaf(func, in_dims, args, leaves: list) -> list:
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool) or not _is_dims(in_dims):
        raise EmberError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
            f"structure of inputs, got: {type(in_dims)}."
        )
    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else in_dims, args)
    if dims is None:
        raise EmberError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {spec_text(tree_flatten(in_dims)[1])} but inputs has structure "
            f"{spec_text(tree_flatten(args)[1])}."
        )
    out = []
    for d, x in zip(dims, leaves):
        if d is None:
            out.append(None)
            continue
        if not isinstance(x, Tensor):
            raise EmberError(
                f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective in_dim"
            )
        n = x.dim()
        if not -n <= d < n:
            raise ShapeError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
            )
        out.append(d % n)
    return out


def _batch_size(dims: list, leaves: list) -> int:
    sizes = [x.shape[d] for d, x in zip(dims, leaves) if d is not None]
    if not sizes:
        raise EmberError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) != 1:
        raise ShapeError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0]


def _stack_outputs(func, out_dims, results: list):
    out_leaves, spec = tree_flatten(results[0])
    if not _is_dims(out_dims) or isinstance(out_dims, (list, dict)):
        raise EmberError(
            f"vmap({_name(func)}, ..., out_dims={out_dims}): expected `out_dims` to be int or a "
            f"tuple matching the structure of outputs, got: {type(out_dims)}."
        )
    dims = broadcast_prefix(out_dims, results[0])
    if dims is None:
        raise EmberError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{spec_text(tree_flatten(out_dims)[1])} but outputs has structure {spec_text(spec)}."
        )
    per_element = [tree_flatten(r)[0] for r in results]
    stacked = []
    for j, d in enumerate(dims):
        column = [leaves[j] for leaves in per_element]
        if d is None:
            stacked.append(column[0])
            continue
        if not all(isinstance(c, Tensor) for c in column):
            bad = next(c for c in column if not isinstance(c, Tensor))
            raise EmberError(
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                f"{type(bad)}. Did you mean to set out_dims= to None for output?"
            )
        stacked.append(stack(column, dim=d))
    return tree_unflatten(stacked, spec)


def vmap(
    func: Callable,
    in_dims: int | tuple = 0,
    out_dims: int | tuple = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its inputs (None: not mapped; nested
    tuples and dicts follow the inputs' structure), results stacked along ``out_dims``.

    >>> import ember
    >>> from ember.func import vmap
    >>> vmap(ember.sum, in_dims=1)(ember.ones(2, 3))
    tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise EmberError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise EmberError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not args:
            raise EmberError(
                f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, "
                "or you are trying to vmap over a function with no inputs. The latter is "
                "unsupported."
            )
        leaves, spec = tree_flatten(args)
        dims = _in_dims_per_leaf(func, in_dims, args, leaves)
        size = _batch_size(dims, leaves)
        if size == 0:
            raise ShapeError(f"vmap({_name(func)}): the mapped dimension has size 0")
        start = get_rng_state() if randomness != "different" else None
        start_bytes = start.numpy().tobytes() if start is not None else None
        results = []
        for i in range(size):
            if randomness == "same":
                set_rng_state(start)
            element = [x if d is None else x.select(d, i) for d, x in zip(dims, leaves)]
            results.append(func(*tree_unflatten(element, spec), **kwargs))
            drew = randomness == "error" and get_rng_state().numpy().tobytes() != start_bytes
            if drew:
                set_rng_state(start)
                raise EmberError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
        return _stack_outputs(func, out_dims, results)

    return wrapped


__all__ = ["vmap"]
