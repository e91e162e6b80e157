"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap``, ``functional_call``, ``stack_module_state``.

They are built on ember's reverse-mode autograd (see ``levels`` for how they nest) and run
``vmap`` one batch element at a time; docs/transforms.md says what differs from PyTorch.

>>> import ember
>>> from ember.func import grad, vmap
>>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> vmap(grad(lambda r: (r ** 2).sum()))(x)
tensor([[2., 4.],
        [6., 8.]])
"""

from .functional_call import functional_call, stack_module_state
from .grad import grad, grad_and_value, jvp, vjp
from .jacobian import hessian, jacfwd, jacrev
from .vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stack_module_state",
    "vjp",
    "vmap",
]
