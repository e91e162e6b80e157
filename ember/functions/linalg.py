"""Matrix products: mm, matmul (``@``), bmm, dot, outer, addmm, einsum.

>>> import ember
>>> ember.mm(ember.ones(2, 3), ember.ones(3, 4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._errors import ShapeError
from .._node import named
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..amp.autocast_mode import rule as _autocast_rule
from ..ops import elementwise as E
from ..ops import linalg as L
from ..ops.base import apply
from ..ops.broadcast import expand
from ..ops.movement import reshape
from ._promote import binary

_MATMUL = L.MATMUL


def _shapes(a: Tensor, b: Tensor) -> str:
    return f"{tuple(a.shape)} and {tuple(b.shape)}"


@_autocast_rule("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices (no broadcasting).

    >>> import ember
    >>> ember.mm(ember.ones(1, 2), ember.ones(2, 1))
    tensor([[2.]])
    """
    if input.is_sparse or mat2.is_sparse:
        return _sparse_product(input, mat2, "mm")
    sa, sb = input._data.shape, mat2._data.shape
    if len(sa) != 2 or len(sb) != 2:
        raise ShapeError(
            f"mm: both arguments must be 2-D matrices, got shapes {_shapes(input, mat2)}"
        )
    if sa[1] != sb[0]:
        raise ShapeError(
            f"mm: shapes {_shapes(input, mat2)} cannot be multiplied ({sa[1]} != {sb[0]})"
        )
    if input._data.dtype != mat2._data.dtype:
        input, mat2 = binary(input, mat2, "mm")
    return apply(_MATMUL, input, mat2)


@_autocast_rule("matmul")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch semantics: 1-D operands are a row (first) or a column
    (second) that the result drops again; batch dimensions broadcast.

    >>> import ember
    >>> ember.matmul(ember.ones(5, 2, 3), ember.ones(3)).shape
    ember.Size([5, 2])
    >>> (ember.ones(3) @ ember.ones(3)).shape
    ember.Size([])
    """
    if input.is_sparse or other.is_sparse:
        return _sparse_product(input, other, "matmul")
    a, b = binary(input, other, "matmul")
    return apply(_MATMUL, a, b)


@_autocast_rule("bmm")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors with the same batch size (no broadcasting).

    >>> import ember
    >>> ember.bmm(ember.ones(4, 2, 3), ember.ones(4, 3, 5)).shape
    ember.Size([4, 2, 5])
    """
    sa, sb = tuple(input.shape), tuple(mat2.shape)
    if len(sa) != 3 or len(sb) != 3:
        raise ShapeError(f"bmm: both arguments must be 3-D tensors, got shapes {sa} and {sb}")
    if sa[0] != sb[0]:
        raise ShapeError(
            f"bmm: shapes {sa} and {sb} have different batch sizes ({sa[0]} != {sb[0]})"
        )
    if sa[2] != sb[1]:
        raise ShapeError(f"bmm: shapes {sa} and {sb} cannot be multiplied ({sa[2]} != {sb[1]})")
    a, b = binary(input, mat2, "bmm")
    return named(apply(_MATMUL, a, b), "BmmBackward0")


@_autocast_rule("dot")
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d result).

    >>> import ember
    >>> ember.dot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
    tensor(11.)
    """
    sa, sb = tuple(input.shape), tuple(tensor.shape)
    if len(sa) != 1 or len(sb) != 1:
        raise ShapeError(f"dot: both arguments must be 1-D tensors, got shapes {sa} and {sb}")
    if sa != sb:
        raise ShapeError(
            f"dot: shapes {sa} and {sb} have different numbers of elements ({sa[0]} != {sb[0]})"
        )
    a, b = binary(input, tensor, "dot")
    return apply(_MATMUL, a, b)


@_autocast_rule("outer")
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``.

    >>> import ember
    >>> ember.outer(ember.tensor([1, 2]), ember.tensor([1, 10, 100]))
    tensor([[  1,  10, 100],
            [  2,  20, 200]])
    """
    sa, sb = tuple(input.shape), tuple(vec2.shape)
    if len(sa) != 1 or len(sb) != 1:
        raise ShapeError(f"outer: both arguments must be 1-D tensors, got shapes {sa} and {sb}")
    a, b = binary(input, vec2, "outer")
    return apply(E.MUL, reshape(a, sa + (1,)), reshape(b, (1,) + sb))


@_autocast_rule("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape
    (and ignored when ``beta`` is 0, as in PyTorch).

    >>> import ember
    >>> ember.addmm(ember.ones(3), ember.ones(2, 4), ember.ones(4, 3), alpha=0.5)
    tensor([[3., 3., 3.],
            [3., 3., 3.]])
    """
    out = mm(mat1, mat2)
    target = tuple(out.shape)
    try:
        fits = broadcast_shapes("addmm", tuple(input.shape), target) == target
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(
            f"addmm: input of shape {tuple(input.shape)} does not broadcast to the product's "
            f"shape {target}"
        )
    if alpha != 1:
        out = apply(E.MUL, *binary(out, alpha, "addmm"))
    if beta == 0:
        return E.cast(out, _dt.result_type(out, input))
    if beta != 1:
        input = apply(E.MUL, *binary(input, beta, "addmm"))
    return named(apply(E.ADD, *binary(input, out, "addmm")), "AddmmBackward0")


# -- einsum -----------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@_autocast_rule("einsum")
def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation with PyTorch's equation syntax: letters per dimension, ``...`` for
    broadcast dimensions, ``->`` for the output (without it, the letters used once, in
    alphabetical order, after the ``...`` dimensions). Size-1 dimensions broadcast.

    >>> import ember
    >>> a, b = ember.ones(2, 3), ember.ones(3, 4)
    >>> ember.einsum("ij,jk->ik", a, b).shape
    ember.Size([2, 4])
    >>> ember.einsum("ii", ember.eye(3))
    tensor(3.)
    >>> ember.einsum("...ij,...jk", ember.ones(5, 2, 3), ember.ones(3, 4)).shape
    ember.Size([5, 2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ShapeError("einsum(): must provide at least one operand")
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise ShapeError(f"einsum(): operand {k} is a {type(t).__name__}, not a Tensor")
    explicit, targets = _normalize(equation, [tuple(t.shape) for t in operands])
    dt = _dt.result_type(*operands)
    tensors = []
    for t, shape in zip(operands, targets):
        t = E.cast(t, dt)
        tensors.append(expand(t, shape) if tuple(t.shape) != shape else t)
    return L.einsum(explicit, *tensors)


def _normalize(equation: str, shapes: list) -> tuple[str, list]:
    """PyTorch's equation as an explicit one without ``...`` (letters for the broadcast dims),
    and the shape each operand broadcasts to so that every letter has one size."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        few = "fewer" if len(shapes) < len(terms) else "more"
        raise ShapeError(
            f"einsum(): {few} operands were provided ({len(shapes)}) than specified in the "
            f"equation {equation!r} ({len(terms)})"
        )
    for term in terms + ([rhs] if arrow else []):
        bad = set(term.replace("...", "")) - set(_LETTERS)
        if bad or term.count("...") > 1:
            raise ShapeError(
                f"einsum(): invalid subscript term {term!r} in {equation!r}: use letters a-z, "
                "A-Z and at most one '...'"
            )
    n_ell = 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if "..." in term:
            if named > len(shape):
                raise ShapeError(
                    f"einsum(): the equation has {named} subscripts for operand {k}, which has "
                    f"only {len(shape)} dimensions (shape {shape})"
                )
            n_ell = max(n_ell, len(shape) - named)
        elif named != len(shape):
            raise ShapeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match "
                f"the number of dimensions ({len(shape)}) for operand {k} of shape {shape} and "
                "no ellipsis was given"
            )
    free = [c for c in _LETTERS if c not in eq]
    ell = "".join(free[:n_ell])
    ins = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell[n_ell - k :])
        ins.append(term)
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise ShapeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            if not any(c in t for t in ins):
                raise ShapeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any "
                    "input operand"
                )
    else:
        joined = "".join(terms).replace("...", "")
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    sizes: dict = {}
    for k, (term, shape) in enumerate(zip(ins, shapes)):
        for c, s in zip(term, shape):
            prev = sizes.get(c, 1)
            if s != 1 and prev != 1 and s != prev:
                raise ShapeError(
                    f"einsum(): subscript {c} has size {s} for operand {k} (shape {shape}) which "
                    f"does not broadcast with previously seen size {prev}"
                )
            sizes[c] = s if s != 1 else prev
    targets = []
    for term, shape in zip(ins, shapes):
        target = tuple(sizes[c] for c in term)
        if len(set(term)) < len(term) and target != shape:  # a repeated letter is a diagonal
            raise ShapeError(
                f"einsum(): a subscript repeated within one operand must have one size, got "
                f"shape {shape} for {term!r}"
            )
        targets.append(target)
    return ",".join(ins) + "->" + out, targets


def _sparse_product(a: Tensor, b: Tensor, name: str) -> Tensor:
    """A product with a sparse COO operand (``ember.sparse``, imported on first use)."""
    from ..sparse.matmul import product

    return product(a, b, name, dense_grad=True)


def _rmatmul(self, other):
    return matmul(other, self)


__all__ = ["mm", "matmul", "bmm", "dot", "outer", "addmm", "einsum"]
TENSOR_METHODS = {
    "mm": mm,
    "matmul": matmul,
    "__matmul__": matmul,
    "__rmatmul__": _rmatmul,
    "bmm": bmm,
    "dot": dot,
    "outer": outer,
    "addmm": addmm,
}
