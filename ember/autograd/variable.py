"""``Variable``: the pre-0.4 PyTorch wrapper, kept so old tutorials run.

>>> import ember
>>> from ember.autograd import Variable
>>> v = Variable(ember.ones(2), requires_grad=True)
>>> v.requires_grad, type(v).__name__
(True, 'Tensor')
"""

from __future__ import annotations

from .._tensor import Tensor


def Variable(data, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # noqa: N802
    """The tensor itself (detached), with ``requires_grad`` set: Variables and Tensors are one."""
    if not isinstance(data, Tensor):
        from ..functions.creation import tensor

        data = tensor(data)
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t
