"""The in-place forms of the activation and dropout functionals (``inplace=True``,
``F.relu_``, ``F.leaky_relu_``...): one path, ``inplace_form``.

The result is computed from a copy of the input's old value (``apply_inplace`` with
``saves_inputs``), so the gradient is the out-of-place one and the overwritten input is never
read again; leaves that require grad are refused as PyTorch refuses them. The node takes
PyTorch's name for the in-place kernel (``LeakyReluBackward1``), and where PyTorch's in-place
backward is unsupported (a negative slope: it recovers the input from the output) the backward
is refused with PyTorch's reason.

>>> import ember
>>> import ember.nn.functional as F
>>> x = ember.tensor([-2.0, 3.0], requires_grad=True) * 1
>>> F.leaky_relu(x, 0.5, inplace=True)
tensor([-1.,  3.], grad_fn=<LeakyReluBackward1>)
"""

from __future__ import annotations

from collections.abc import Callable

from ..._node import named
from ..._tensor import Tensor
from ...functions.inplace import apply_inplace
from ...ops.base import apply
from ...ops.elementwise.activations import RefusedGrad

# the out-of-place node's name -> the name PyTorch gives the in-place kernel's node
_INPLACE_NODE = {
    "LeakyReluBackward0": "LeakyReluBackward1",
    "EluBackward0": "EluBackward1",
    "CeluBackward0": "CeluBackward1",
    "ThresholdBackward0": "ThresholdBackward1",
    "RreluWithNoiseBackward0": "RreluWithNoiseBackward1",
}

_REFUSED = (
    "{name}: in-place {kind} backward with a negative slope ({slope}) is not supported (the "
    "input is recovered from the output, which a negative slope makes ambiguous); call the "
    "out-of-place {base} instead"
)


def inplace_form(
    input: Tensor,
    fn: Callable[..., Tensor],
    *args,
    name: str,
    negative_slope: float | None = None,
) -> Tensor:
    """``fn(input, *args)`` written into ``input`` (PyTorch's in-place ``name``); a
    ``negative_slope`` below 0 makes the backward fail as PyTorch's does.

    >>> import ember
    >>> x = ember.tensor([1.0, -1.0])
    >>> inplace_form(x, lambda t: t * 2, name="double_"), x
    (tensor([ 2., -2.]), tensor([ 2., -2.]))
    """

    def written(src: Tensor, *a) -> Tensor:
        out = fn(src, *a)
        node = out._node
        if node is None:
            return out
        label = _INPLACE_NODE.get(node.name(), node.name())
        if negative_slope is not None and negative_slope < 0:
            kind = "elu" if label.startswith(("Elu", "Celu")) else "leaky_relu"
            message = _REFUSED.format(
                name=name, kind=kind, slope=negative_slope, base=name.rstrip("_")
            )
            out = apply(RefusedGrad(message), out)
        return named(out, label)

    return apply_inplace(input, written, *args, name=name, saves_inputs=True)
