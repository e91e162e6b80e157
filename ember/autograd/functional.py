"""Whole-function derivatives built on ``grad``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp`` and ``vhp`` (as ``torch.autograd.functional``).

Each takes a function of Tensors and the point (a Tensor or a tuple of them). Results have the
structure PyTorch gives: a Tensor for one input/output, tuples for several.

>>> import ember
>>> from ember.autograd.functional import jacobian, hessian
>>> jacobian(lambda x: x ** 2, ember.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from .. import _config
from .._errors import AutogradError
from .._tensor import Tensor
from .engine import grad


def _tuple(x, what: str) -> tuple[tuple, bool]:
    if isinstance(x, Tensor):
        return (x,), False
    x = tuple(x)
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise AutogradError(f"{what} {i} is a {type(t).__name__}, not a Tensor")
    return x, True


def _prepare(inputs, create_graph: bool) -> tuple:
    """Inputs that require grad: views of the originals when create_graph, else detached."""
    out = []
    for t in inputs:
        if create_graph and t._requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs, inputs, grad_outputs, create_graph: bool) -> tuple:
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o._requires_grad]
    if not pairs:
        return tuple(None for _ in inputs)
    return grad(
        [o for o, _ in pairs],
        inputs,
        [g for _, g in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )


def _zeros_for(grads, like) -> tuple:
    from ..functions.creation import zeros_like

    return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, like))


def _finish(values, create_graph: bool) -> tuple:
    return tuple(v if create_graph else v.detach() for v in values)


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``.

    >>> import ember
    >>> from ember.autograd.functional import vjp
    >>> vjp(lambda x: x * 3, ember.ones(2), ember.tensor([1.0, 2.0]))[1]
    tensor([3., 6.])
    """
    ins, many = _tuple(inputs, "input")
    with _config.enable_grad():
        xs = _prepare(ins, create_graph)
        out = func(*xs)
        outs, many_out = _tuple(out, "output")
        if v is None:
            if any(o._data.size != 1 for o in outs):
                raise AutogradError("vjp: v can be omitted only when the output is a scalar")
            from ..functions.creation import ones_like

            vs = tuple(ones_like(o) for o in outs)
        else:
            vs, _ = _tuple(v, "v")
        grads = _zeros_for(_grads(outs, xs, vs, create_graph), xs)
    outs = _finish(outs, create_graph)
    grads = _finish(grads, create_graph)
    return (outs if many_out else outs[0]), (grads if many else grads[0])


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``, by differentiating a vjp (the double-backward trick).

    >>> import ember
    >>> from ember.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, ember.tensor([1.0, 2.0]), ember.ones(2))[1]
    tensor([2., 4.])
    """
    from ..functions.creation import ones_like, zeros_like

    ins, many = _tuple(inputs, "input")
    vs = tuple(ones_like(t) for t in ins) if v is None else _tuple(v, "v")[0]
    with _config.enable_grad():
        xs = _prepare(ins, create_graph)
        out = func(*xs)
        outs, many_out = _tuple(out, "output")
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, us, True)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi._requires_grad]
        if pairs:
            res = grad(
                [p[0] for p in pairs],
                us,
                [p[1] for p in pairs],
                create_graph=create_graph,
                allow_unused=True,
            )
        else:
            res = (None,) * len(us)
        res = _zeros_for(res, outs)
    outs = _finish(outs, create_graph)
    res = _finish(res, create_graph)
    return (outs if many_out else outs[0]), (res if many_out else res[0])


def jacobian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize=False,
    strategy: str = "reverse-mode",
):
    """The Jacobian, one row (a vjp) per output element: shape ``out.shape + in.shape``.

    >>> import ember
    >>> from ember.autograd.functional import jacobian
    >>> jacobian(lambda a, b: a * b, (ember.tensor([2.0]), ember.tensor([3.0])))
    (tensor([[3.]]), tensor([[2.]]))
    """
    from ..functions.creation import zeros_like
    from ..functions.shape import stack

    ins, many = _tuple(inputs, "input")
    with _config.enable_grad():
        xs = _prepare(ins, create_graph)
        out = func(*xs)
        outs, many_out = _tuple(out, "output")
        table = []
        for o in outs:
            rows = [[] for _ in xs]
            flat = o.reshape(-1)
            for k in range(flat.shape[0]):
                if flat._requires_grad:
                    g = grad(
                        flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True
                    )
                else:
                    g = (None,) * len(xs)
                for j, (gj, x) in enumerate(zip(g, xs)):
                    rows[j].append(zeros_like(x) if gj is None else gj)
            block = []
            for j, x in enumerate(xs):
                if rows[j]:
                    b = stack(rows[j]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    b = x.new_zeros(tuple(o.shape) + tuple(x.shape))
                block.append(b if create_graph else b.detach())
            table.append(tuple(block))
    if not many_out:
        return table[0] if many else table[0][0]
    return tuple(row if many else row[0] for row in table)


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize=False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a scalar function: shape ``in.shape + in.shape`` (tuples of tuples for
    several inputs).

    >>> import ember
    >>> from ember.autograd.functional import hessian
    >>> hessian(lambda x: (x * x).sum(), ember.ones(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    ins, many = _tuple(inputs, "input")

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise AutogradError("hessian: the function must return a single-element Tensor")
        g = grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        return _zeros_for(g, xs)

    return jacobian(
        gradient if many else (lambda x: gradient(x)[0]),
        ins if many else ins[0],
        create_graph=create_graph,
    )


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar function.

    >>> import ember
    >>> from ember.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]), ember.ones(2))[1]
    tensor([ 6., 12.])
    """
    ins, many = _tuple(inputs, "input")
    vs = _tuple(v, "v")[0] if v is not None else None
    with _config.enable_grad():
        xs = _prepare(ins, create_graph)
        out = func(*xs)
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise AutogradError("vhp: the function must return a single-element Tensor")
        g = grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        if vs is None:
            if any(x._data.size != 1 for x in xs):
                raise AutogradError("vhp: v can be omitted only when the inputs are scalars")
            from ..functions.creation import ones_like

            vs = tuple(ones_like(x) for x in xs)
        res = _grads(
            [gi for gi in g if gi is not None],
            xs,
            [vi for gi, vi in zip(g, vs) if gi is not None],
            create_graph,
        )
        res = _zeros_for(res, xs)
    out = out if create_graph else out.detach()
    res = _finish(res, create_graph)
    return out, (res if many else res[0])


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``; the Hessian is symmetric, so this is ``vhp``.

    >>> import ember
    >>> from ember.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]), ember.ones(2))[1]
    tensor([ 6., 12.])
    """
    return vhp(func, inputs, v, create_graph, strict)


__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
