"""User-defined differentiable ops: subclass ``Function`` with static ``forward``/``backward``.

``MyFn.apply(*args)`` runs ``forward(ctx, *args)`` without recording history, then records one
node whose op (``FunctionOp``) follows the op contract: its ``vjp`` calls the user's
``backward(ctx, *grads)``. The engine treats it like any other node, so a ``backward`` written
in ember ops is differentiable again (``create_graph=True``).

>>> import ember
>>> class Cube(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return g * 3 * x ** 2
>>> x = ember.tensor(2.0, requires_grad=True)
>>> y = Cube.apply(x)
>>> y.grad_fn  # doctest: +ELLIPSIS
<ember.autograd.function.CubeBackward object at 0x...>
>>> y.backward(); x.grad
tensor(12.)
"""

from __future__ import annotations

import functools
import weakref

from .. import _config
from .._config import state
from .._errors import AutogradError
from .._node import Node, freed_error, version_error
from .._tensor import Tensor
from ..backend import full
from ..ops.base import Op, Spec
from .engine import GradSlots


class FunctionCtx:
    """The ``ctx`` handed to ``forward`` and ``backward``: saved tensors and anything else.

    Attributes set on it in ``forward`` (``ctx.k = 3``) are there again in ``backward``.
    """

    def __init__(self) -> None:
        self.needs_input_grad: tuple = ()
        self.materialize_grads = True
        self._to_save: tuple | None = None
        self._saved: list | None = None  # (tensor or output index, version at save time)
        self._non_diff: set = set()
        self._node = None  # weakref to the FunctionNode, set once it exists
        self._outputs: dict = {}  # saved outputs by position: (array, version counter)
        self._multi = 0  # number of outputs when there are several

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise AutogradError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is a "
                    f"{type(t).__name__}; store other values as attributes of ctx"
                )
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs that get no gradient (indices, masks): they come out with requires_grad off."""
        self._non_diff.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (default) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors) -> None:
        raise AutogradError(
            "mark_dirty: in-place user Functions are not supported; return a new tensor instead"
        )

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes."""
        if self._saved is None:  # in forward, or nothing recorded
            return tuple(self._to_save or ())
        node = self._node() if self._node is not None else None
        name = node.name() if node is not None else "Function"
        if node is not None and node.freed and self._saved:
            raise freed_error(name)
        out = []
        for item, version in self._saved:
            if item is None:
                out.append(None)
                continue
            t = item
            if type(item) is int:  # an output of this Function: rebuilt to avoid a ref cycle
                data, counter = self._outputs[item]
                t = Tensor._make(data, node is not None)
                t._version = counter
                if node is not None and not self._multi:
                    t._node = node
                elif node is not None:  # its own slot node, feeding this Function's node
                    packed = Tensor._make(node.out_data, True)
                    packed._node = node
                    t._node = Node(_OutputSlot(node.op, item, self._multi), (packed,), t)
            if t._version[0] != version:
                raise version_error(name, "a saved tensor", t, t._version[0], version)
            out.append(t)
        return tuple(out)

    @property
    def saved_variables(self) -> tuple:
        return self.saved_tensors


class FunctionNode(Node):
    """A Node for a user Function; frees the ctx's saved tensors with the rest of the graph."""

    __slots__ = ()

    def __repr__(self) -> str:  # PyTorch names a user Function's node with its module
        return f"<{__name__}.{self.name()} object at {id(self):#x}>"

    def free(self) -> None:
        self.freed = True
        self.out_data = None
        ctx = self.op.ctx
        if ctx._saved:
            ctx._saved = [(None, 0)] * len(ctx._saved)
        ctx._outputs = {}

    def check_saved(self) -> None:  # saved_tensors checks versions and freeing when read
        pass


class FunctionOp(Op):
    """The op a Function application records: its vjp runs the user's ``backward``.

    Not a frozen dataclass: one instance per application, holding the ctx.
    """

    def __init__(self, fn: type, ctx: FunctionCtx, arg_kinds: tuple, out_specs: tuple) -> None:
        self.fn = fn
        self.ctx = ctx
        self.arg_kinds = arg_kinds  # per forward argument: its index among tensor inputs, or -1
        self.out_specs = out_specs  # (shape, numpy dtype, xp) per output; None if not a Tensor
        self.returned_inputs: frozenset = frozenset()  # outputs that are inputs returned as-is

    def returned_input(self, index: int = 0) -> bool:
        """Whether output ``index`` is an input returned as-is (PyTorch then refuses in-place
        writes to it: they would bypass this Function's backward)."""
        return index in self.returned_inputs

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def node_name(self) -> str:
        return f"{self.fn.__name__}Backward"

    def __repr__(self) -> str:
        return f"FunctionOp({self.fn.__name__})"

    def infer(self, *specs) -> Spec:
        raise AutogradError(f"{self.name}: user Functions have no shape rule")

    def vjp(self, g, out, *inputs):
        ctx = self.ctx
        grads = list(g) if type(g) is GradSlots else [g]
        for i, gi in enumerate(grads):
            if gi is None and ctx.materialize_grads and self.out_specs[i] is not None:
                shape, dtype, xp = self.out_specs[i]
                grads[i] = Tensor._make(xp.zeros(shape, dtype=dtype))
        result = self.fn.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.arg_kinds)
        name = self.node_name
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise AutogradError(
                f"function {name} returned an incorrect number of gradients "
                f"(expected {n_args}, got {len(result)})"
            )
        in_grads = [None] * len(inputs)
        for pos, (kind, r) in enumerate(zip(self.arg_kinds, result)):
            if r is None:
                continue
            if kind < 0:
                raise AutogradError(
                    f"function {name} returned a gradient different than None at position "
                    f"{pos}, but the corresponding forward input was not a Tensor"
                )
            in_grads[kind] = _checked_grad(name, pos, r, inputs[kind])
        return tuple(in_grads)


def _checked_grad(name: str, pos: int, r, x: Tensor) -> Tensor:
    """A user's gradient made to fit its input: reduced when broadcast, cast to its dtype."""
    if not isinstance(r, Tensor):
        raise AutogradError(
            f"function {name} returned a {type(r).__name__} as the gradient at position {pos}; "
            "expected a Tensor or None"
        )
    if r.shape != x.shape:
        from .._shape import broadcast_shapes
        from ..ops.broadcast import sum_to

        try:
            ok = broadcast_shapes(name, tuple(x.shape), tuple(r.shape)) == tuple(r.shape)
        except Exception:
            ok = False
        if not ok:
            raise AutogradError(
                f"function {name} returned an invalid gradient at index {pos} - got shape "
                f"{tuple(r.shape)} but expected shape compatible with {tuple(x.shape)}"
            )
        r = sum_to(r, tuple(x.shape))
    if r._data.dtype != x._data.dtype:
        from ..ops.elementwise import cast

        r = cast(r, x.dtype)
    return r


class _OutputSlot(Op):
    """Output ``index`` of a Function with several outputs: its vjp fills that gradient slot."""

    def __init__(self, fn_op: FunctionOp, index: int, n: int) -> None:
        self.fn_op = fn_op
        self.index = index
        self.n = n

    @property
    def name(self) -> str:
        return self.fn_op.name

    @property
    def node_name(self) -> str:
        return self.fn_op.node_name

    def returned_input(self) -> bool:
        return self.fn_op.returned_input(self.index)

    def vjp(self, g, out, packed):
        slots = GradSlots([None] * self.n)
        slots[self.index] = g
        return (slots,)


class Function:
    """Base class of user-defined ops. Subclass it with static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)``, then call ``MyFn.apply(*args)``.

    ``backward`` returns one gradient per ``forward`` argument (None for non-tensor arguments
    and for inputs that need none; ``ctx.needs_input_grad`` says which do). A gradient whose
    shape broadcasts to its input's is summed down to it. ``forward`` may instead take no
    ``ctx`` when the class defines ``setup_context(ctx, inputs, output)``, as in PyTorch 2.

    >>> import ember
    >>> class Scale(ember.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x, k):
    ...         ctx.k = k
    ...         return x * k
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * ctx.k, None
    >>> x = ember.ones(2, requires_grad=True)
    >>> Scale.apply(x, 3.0).sum().backward(); x.grad
    tensor([3., 3.])
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses must define a static forward()")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function subclasses must define a static backward()")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    def __init__(self, *args, **kwargs) -> None:
        raise AutogradError(
            f"{type(self).__name__}: Functions are not instantiated; call "
            f"{type(self).__name__}.apply(...) instead"
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record a node whose gradient comes from ``backward``."""
        ctx = FunctionCtx()
        tensors = []
        kinds = []
        needs = []
        recording = state.grad_enabled
        any_grad = False
        for a in args:
            if isinstance(a, Tensor):
                kinds.append(len(tensors))
                tensors.append(a)
                rg = recording and a._requires_grad
                needs.append(rg)
                any_grad = any_grad or rg
            else:
                kinds.append(-1)
                needs.append(False)
        ctx.needs_input_grad = tuple(needs)
        with _config.no_grad():
            if cls.setup_context is not _BASE_SETUP_CONTEXT:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        if not any_grad:
            return output
        return _record(cls, ctx, tuple(tensors), tuple(kinds), outs, single)


_BASE_SETUP_CONTEXT = Function.setup_context


def _record(cls, ctx: FunctionCtx, tensors: tuple, kinds: tuple, outs: tuple, single: bool):
    """Give the forward's outputs the history of one FunctionNode."""
    result = []
    diff = []  # the differentiable output tensors
    returned = set()
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        if any(o is t for t in tensors):
            returned.add(i)
        if i in returned or o._node is not None:
            alias = Tensor._make(o._data)  # an input returned as is: a new tensor on its storage
            alias._version = o._version
            o = alias
        if id(outs[i]) in ctx._non_diff or not o.is_floating_point():
            result.append(o)
            continue
        diff.append(o)
        result.append(o)
    specs = tuple(
        (o._data.shape, o._data.dtype, o.device.xp) if isinstance(o, Tensor) else None
        for o in result
    )
    op = FunctionOp(cls, ctx, kinds, specs)
    op.returned_inputs = frozenset(returned)
    if len(diff) == 1 and len(outs) == 1:
        node = FunctionNode(op, tensors, diff[0])
        diff[0]._node = node
        diff[0]._requires_grad = True
    elif diff:  # backward gets one gradient per output: each output fills its slot
        packed = Tensor._make(full((0,), None, diff[0]._data.dtype, diff[0].device), True)
        node = FunctionNode(op, tensors, packed)
        packed._node = node
        for k, o in enumerate(result):
            if any(o is d for d in diff):
                o._node = Node(_OutputSlot(op, k, len(result)), (packed,), o)
                o._requires_grad = True
    else:
        node = None
    if node is not None:
        ctx._node = weakref.ref(node)
        if state.anomaly:
            from ..ops.base import _anomaly_forward

            for o in diff:
                _anomaly_forward(op, tensors, o)
            node.trace = diff[0]._node.trace
    _freeze_saved(ctx, tensors, outs, result, diff)
    return result[0] if single else tuple(result)


def _freeze_saved(ctx: FunctionCtx, inputs: tuple, outs: tuple, result: list, diff: list) -> None:
    """Record versions of the saved tensors. Saved outputs are kept as arrays, not Tensors, so
    the ctx (held by the node) does not hold the output Tensor (which holds the node)."""
    if ctx._to_save is None:
        return
    ctx._multi = 0 if len(diff) == 1 and len(outs) == 1 else len(result)
    ctx._outputs = {}
    saved = []
    for t in ctx._to_save:
        if t is None:
            saved.append((None, 0))
            continue
        k = next((j for j, o in enumerate(outs) if o is t), -1)
        if k >= 0 and not any(t is x for x in inputs) and any(result[k] is d for d in diff):
            r = result[k]
            ctx._outputs[k] = (r._data, r._version)
            saved.append((k, r._version[0]))
            continue
        saved.append((t, t._version[0]))
    ctx._saved = saved
    ctx._to_save = None  # it may hold the outputs, which hold the node, which holds ctx


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording.

    >>> import ember
    >>> once_differentiable(lambda ctx, g: g)(None, ember.ones(1))
    tensor([1.])
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _config.no_grad():
            return fn(ctx, *args)

    return wrapper


__all__ = ["Function", "FunctionCtx", "once_differentiable"]
