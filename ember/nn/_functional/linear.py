"""linear and bilinear.

>>> import ember
>>> import ember.nn.functional as F
>>> F.linear(ember.ones(2, 3), ember.ones(4, 3), ember.zeros(4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from ..._errors import DTypeError, ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.linalg import einsum


@_autocast_rule("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dimension.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.linear(ember.ones(1, 2), ember.ones(3, 2))
    tensor([[2., 2., 2.]])
    """
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ShapeError(
            f"linear: input shape {tuple(input.shape)} and weight shape {tuple(weight.shape)} "
            f"cannot be multiplied ({input.shape[-1] if input.ndim else 'scalar'} != "
            f"{weight.shape[-1]})"
        )
    if weight.dtype is not input.dtype or (bias is not None and bias.dtype is not input.dtype):
        raise DTypeError(
            f"linear: expected input, weight and bias of one dtype, got input {input.dtype}, "
            f"weight {weight.dtype}" + (f", bias {bias.dtype}" if bias is not None else "")
        )
    out = input.matmul(weight.t())
    if bias is None:
        return out
    if input.ndim != 2:
        return named(out + bias, "ViewBackward0")
    return named(out + bias, "AddmmBackward0", (bias, input, weight))  # torch: weight.t()


@_autocast_rule("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x1^T A x2 + b`` for each output feature.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.bilinear(ember.ones(1, 2), ember.ones(1, 3), ember.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    # PyTorch's node is a view of its _trilinear product (a bias adds an AddBackward0)
    out = named(einsum("...i,oij,...j->...o", input1, weight, input2), "ViewBackward0")
    return out if bias is None else out + bias
