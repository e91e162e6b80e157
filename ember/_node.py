"""Autograd history: one ``Node`` per recorded op application (what PyTorch calls ``grad_fn``).

A node keeps the op, its input Tensors, the output's array and the version counters it must
check before its vjp runs. The output Tensor is rebuilt from the array when a vjp needs it, so
nodes never hold their output Tensor and history frees by reference counting alone.

>>> import ember
>>> x = ember.ones(2, requires_grad=True)
>>> y = x * 2
>>> y.grad_fn  # doctest: +ELLIPSIS
<MulBackward0 object at 0x...>
>>> type(y.grad_fn).__name__
'MulBackward0'
>>> y.grad_fn.next_functions  # doctest: +ELLIPSIS
((<AccumulateGrad object at 0x...>, 0), (None, 0))

A node's name is, first found: the name a composite function gave it (``named``: ``linear``'s
result is ``AddmmBackward0`` though its last op is an addition), its op's ``node_name`` (a string,
or a method of the node's inputs), or the op's class name plus ``Backward0``. The node's class
takes that name when ``grad_fn`` hands it out (``typed``), as PyTorch's grad_fn classes have.
"""

from __future__ import annotations

import re
import weakref
from functools import cache

from ._errors import AutogradError
from ._tensor import Tensor

_HINT = (
    "; hint: the op that changed it in place ran after this one's forward; enable "
    "ember.autograd.set_detect_anomaly(True) to see where this op was created"
)


def _edge(t: Tensor):
    """The gradient destination of an input: its node, itself (a leaf that requires grad), or
    None (a constant)."""
    n = t._node
    if n is not None:
        return n
    return t if t._requires_grad else None


def _cross_version(inputs: tuple, i: int):
    """Input ``i``'s version if another input requires grad (so its value will be read)."""
    for j, t in enumerate(inputs):
        if j != i and t._requires_grad:
            return inputs[i]._version[0]
    return None


class Node:
    """One recorded op: ``op``, ``inputs`` and what backward needs to check and rebuild."""

    __slots__ = (
        "op",
        "inputs",
        "edges",
        "out_data",
        "in_versions",
        "out_version",
        "out_counter",
        "hooks",
        "retained",
        "trace",
        "freed",
        "label",
        "composite",
        "__weakref__",
    )

    def __init__(self, op, inputs: tuple, out: Tensor) -> None:
        self.op = op
        self.inputs = inputs
        # Where each input's gradient goes, fixed now: a later in-place op that gives an input
        # new history must not change what this node's gradient flows into.
        self.edges = tuple(  # _edge, inlined: this runs for every recorded op
            [t._node if t._node is not None else t if t._requires_grad else None for t in inputs]
        )
        self.out_data = out._data
        saves = op.saves_inputs
        if not saves:
            self.in_versions = None
        elif saves == "cross":  # each input's value is read only for the others' gradients
            self.in_versions = tuple([_cross_version(inputs, i) for i in range(len(inputs))])
        else:
            self.in_versions = tuple([t._version[0] for t in inputs])
        self.out_counter = out._version
        self.out_version = out._version[0]
        self.hooks = None
        self.retained = None
        self.trace = None
        self.freed = False
        self.label = None
        self.composite = None  # a named composite's input edges: what next_functions shows

    def name(self) -> str:
        """PyTorch-style name, e.g. ``MulBackward0`` (``MyFnBackward`` for a user Function)."""
        if self.label is not None:
            return self.label
        custom = getattr(self.op, "node_name", None)
        if custom is None:
            return f"{self.op.name}Backward0"
        return custom if type(custom) is str else custom(*self.inputs)

    def typed(self) -> Node:
        """This node, its class renamed to ``name()`` (a subclass of its own class, made once
        per name), so that ``type(y.grad_fn).__name__`` is PyTorch's grad_fn class name."""
        cls = type(self)
        name = self.name()
        if cls.__name__ != name:
            self.__class__ = _named_class(cls.__dict__.get("_unnamed", cls), name)
        return self

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        """The nodes feeding this one: ``(node, 0)`` per input, ``(None, 0)`` for constants;
        for a named composite, its inputs' (PyTorch's one node for the whole function)."""
        edges = self.edges if self.composite is None else self.composite
        return tuple((None if e is None else _grad_fn(e), 0) for e in edges)

    def register_hook(self, hook) -> None:
        """Call ``hook(grad_output)`` before this node's vjp runs; a returned tensor replaces it."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(hook)

    def retain(self, tensor: Tensor) -> None:
        self.retained = weakref.ref(tensor)

    def output(self) -> Tensor:
        """The op's output as a Tensor whose history is this node (for vjps that use it)."""
        t = Tensor._make(self.out_data, True)
        t._node = self
        t._version = self.out_counter
        return t

    def check_saved(self) -> None:
        """Refuse to run a vjp whose saved tensors were freed or changed in place since forward."""
        if self.freed and (self.in_versions is not None or self.op.saves_output):
            raise freed_error(self.name())
        if self.in_versions is not None:
            for i, (t, v) in enumerate(zip(self.inputs, self.in_versions)):
                if v is not None and t._version[0] != v:
                    raise version_error(self.name(), f"input {i}", t, t._version[0], v)
        if self.op.saves_output and self.out_counter[0] != self.out_version:
            raise version_error(
                self.name(), "its output", self.output(), self.out_counter[0], self.out_version
            )

    def free(self) -> None:
        """Drop the saved tensors once backward is done with them (unless retain_graph)."""
        self.freed = True
        self.out_data = None


def freed_error(name: str) -> AutogradError:
    return AutogradError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.\n"
        f"{name}: trying to backward through the graph a second time (or to directly access "
        "saved tensors after they have already been freed); saved values are freed when you "
        "call .backward() or autograd.grad(): pass retain_graph=True the first time if you "
        "need to backward through the graph a second time"
    )


def version_error(name: str, which: str, t: Tensor, now: int, expected: int) -> AutogradError:
    """The message for a saved tensor changed in place: the op, the tensor, both versions."""
    made_by = f"output of {t._node.name()}" if t._node is not None else "a leaf"
    return AutogradError(
        f"{_torch_version_line(t, now, expected)}\n"
        f"{name}: one of the variables needed for gradient computation has been modified by "
        f"an inplace operation: {which} [{t.dtype} of shape {tuple(t.shape)}] ({made_by}) is at "
        f"version {now}; expected version {expected} instead{_HINT}"
    )


def _torch_version_line(t: Tensor, now: int, expected: int) -> str:
    """PyTorch's words for a saved tensor changed in place (its first line, as it prints it)."""
    from . import _config
    from ._legacy import _BY_DTYPE

    kind = ("torch.cuda." if t.device.type == "cuda" else "torch.") + _BY_DTYPE[t.dtype]
    which = ""
    if t._node is not None:
        op = re.sub(r"Backward\d*$", "", t._node.name())
        which = f", which is output {getattr(t._node.op, 'index', 0)} of {op},"
    if _config.state.anomaly:
        hint = (
            "the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        )
    else:
        hint = (
            "enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{kind} {list(t.shape)}]{which} is at version {now}; expected "
        f"version {expected} instead. Hint: {hint}"
    )


@cache
def _named_class(base: type, name: str) -> type:
    """The subclass of ``base`` called ``name`` (no new slots, so a node can switch to it)."""
    return type(name, (base,), {"__slots__": (), "_unnamed": base, "__module__": base.__module__})


def named(out: Tensor, name: str, inputs: tuple | None = None) -> Tensor:
    """Give the node that produced ``out``, a composite function's fresh result, PyTorch's
    name for that function's node; returns ``out``. With ``inputs`` (the composite's
    differentiable arguments in PyTorch's order: tensors, or None for an absent one) its
    ``next_functions`` are theirs, as PyTorch's one node for the function has. Nothing is
    computed differently.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> y = named(x * 2 + 1, "MyOpBackward0", inputs=(x,))
    >>> y.grad_fn.name(), y.grad_fn.next_functions  # doctest: +ELLIPSIS
    ('MyOpBackward0', ((<AccumulateGrad object at 0x...>, 0),))
    """
    node = out._node
    if node is not None:
        node.label = name
        if inputs is not None:
            node.composite = tuple([None if t is None else _edge(t) for t in inputs])
    return out


class AccumulateGrad:
    """The node standing for a leaf in ``next_functions`` (one per leaf while it is held)."""

    __slots__ = ("variable", "__weakref__")

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# id(leaf) -> its AccumulateGrad while one is held (which holds the leaf, so the id stays its)
_ACCUMULATORS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _grad_fn(edge) -> Node | AccumulateGrad:
    """What ``next_functions`` shows for an edge: the node (typed), or the leaf's accumulator."""
    if isinstance(edge, Node):
        return edge.typed()
    acc = _ACCUMULATORS.get(id(edge))
    if acc is None or acc.variable is not edge:
        acc = _ACCUMULATORS[id(edge)] = AccumulateGrad(edge)
    return acc
