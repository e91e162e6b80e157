"""Autograd history: one ``Node`` per recorded op application (what PyTorch calls ``grad_fn``).

A node keeps the op, its input Tensors, the output's array and the version counters it must
check before its vjp runs. The output Tensor is rebuilt from the array when a vjp needs it, so
nodes never hold their output Tensor and history frees by reference counting alone.
"""

from __future__ import annotations

import weakref

from ._errors import AutogradError
from ._tensor import Tensor


class Node:
    """One recorded op: ``op``, ``inputs`` and what backward needs to check and rebuild."""

    __slots__ = (
        "op",
        "inputs",
        "out_data",
        "in_versions",
        "out_version",
        "out_counter",
        "hooks",
        "retained",
        "trace",
        "freed",
        "__weakref__",
    )

    def __init__(self, op, inputs: tuple, out: Tensor) -> None:
        self.op = op
        self.inputs = inputs
        self.out_data = out._data
        self.in_versions = tuple([t._version[0] for t in inputs]) if op.saves_inputs else None
        self.out_counter = out._version
        self.out_version = out._version[0]
        self.hooks = None
        self.retained = None
        self.trace = None
        self.freed = False

    def name(self) -> str:
        """PyTorch-style name, e.g. ``MulBackward0``."""
        return f"{self.op.name}Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()} object>"

    @property
    def next_functions(self) -> tuple:
        """The nodes feeding this one: ``(node, 0)`` per input, ``(None, 0)`` for constants."""
        if self.inputs is None:
            return ()
        return tuple(
            (t._node if t._node is not None else (AccumulateGrad(t) if t._requires_grad else None), 0)
            for t in self.inputs
        )

    def register_hook(self, hook) -> None:
        """Call ``hook(grad_output)`` before this node's vjp runs."""
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
        """Refuse to run a vjp whose saved tensors were changed in place since the forward."""
        if self.freed and (self.in_versions is not None or self.op.saves_output):
            raise AutogradError(
                f"{self.name()}: trying to backward through the graph a second time (or to use "
                "saved tensors after they were freed); pass retain_graph=True to backward() or "
                "autograd.grad() the first time if you need to backward twice"
            )
        if self.in_versions is not None:
            for i, (t, v) in enumerate(zip(self.inputs, self.in_versions)):
                if t._version[0] != v:
                    raise AutogradError(
                        f"{self.name()}: one of the variables needed for gradient computation has "
                        f"been modified by an inplace operation: input {i} of shape "
                        f"{tuple(t.shape)} ({t.dtype}) is at version {t._version[0]}; expected "
                        f"version {v} instead"
                    )
        if self.op.saves_output and self.out_counter[0] != self.out_version:
            raise AutogradError(
                f"{self.name()}: one of the variables needed for gradient computation has been "
                f"modified by an inplace operation: its output of shape {self.out_data.shape} is "
                f"at version {self.out_counter[0]}; expected version {self.out_version} instead"
            )

    def free(self) -> None:
        """Drop the saved tensors once backward is done with them (unless retain_graph)."""
        self.freed = True
        self.out_data = None


class AccumulateGrad:
    """The node standing for a leaf in ``next_functions``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad object>"
