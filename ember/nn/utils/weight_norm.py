"""Weight normalization (PyTorch's classic ``torch.nn.utils.weight_norm``): a parameter
``w`` is re-expressed as ``w = g * v / ||v||``, with the magnitude ``g`` (``<name>_g``) and
the direction ``v`` (``<name>_v``) as the parameters a model trains.

The norm is taken over every dimension except ``dim`` (over the whole tensor when ``dim`` is
None or -1, as in PyTorch). A forward pre-hook recomputes ``w`` (a plain attribute) from the
two parameters before each forward, so gradients reach ``g`` and ``v``.

>>> import ember
>>> from ember.nn.utils import weight_norm
>>> m = weight_norm(ember.nn.Linear(20, 40), name="weight")
>>> m.weight_g.shape, m.weight_v.shape
(ember.Size([40, 1]), ember.Size([40, 20]))
>>> [name for name, _ in m.named_parameters()]
['bias', 'weight_g', 'weight_v']
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._errors import EmberError, EmberIndexError
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]

T_module = TypeVar("T_module", bound=Module)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension except ``dim``, kept as size-1
    dimensions (``dim=-1``: the norm of the whole tensor, 0-d), as ``torch.norm_except_dim``.

    >>> import ember
    >>> norm_except_dim(ember.tensor([[3.0, 4.0], [6.0, 8.0]]), 2, 0)
    tensor([[ 5.],
            [10.]])
    """
    if dim == -1:
        axes = tuple(range(v.ndim))
        keepdim = False
    else:
        keep = dim % v.ndim
        axes = tuple(d for d in range(v.ndim) if d != keep)
        keepdim = True
    magnitude = v.abs()
    if not axes:
        return magnitude
    if pow == 2:
        return (v * v).sum(dim=axes, keepdim=keepdim).sqrt()
    return (magnitude**pow).sum(dim=axes, keepdim=keepdim) ** (1.0 / pow)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that :func:`weight_norm` registers (recomputes the weight)."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """``g * v / ||v||`` from the module's current ``<name>_g`` and ``<name>_v``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Replace parameter ``name`` of ``module`` by ``<name>_g`` and ``<name>_v``."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise EmberError(
                    f"weight_norm: Cannot register two weight_norm hooks on the same parameter "
                    f"{name} of {type(module).__name__}"
                )
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(
                f"weight_norm: {type(module).__name__} has no parameter '{name}' (its "
                f"parameters: {[k for k, p in module._parameters.items() if p is not None]})"
            )
        fn = WeightNorm(name, dim)
        if fn.dim != -1 and not -weight.ndim <= fn.dim < weight.ndim:
            raise EmberIndexError(
                f"weight_norm: dim {fn.dim} is out of range for parameter '{name}' of shape "
                f"{tuple(weight.shape)}"
            )
        del module._parameters[name]
        g = norm_except_dim(weight, 2, fn.dim).detach()
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put a plain parameter ``name`` (the current weight) back in place of ``g`` and
        ``v``."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Apply weight normalization to parameter ``name`` of ``module`` (in place; returns it).

    ``dim`` is the dimension kept when taking the norm (0: one norm per output unit for
    Linear and Conv weights); None (or -1) takes the norm of the whole tensor.

    >>> import ember
    >>> m = weight_norm(ember.nn.Conv1d(2, 3, 3), dim=None)
    >>> m.weight_g.shape
    ember.Size([])
    >>> m(ember.randn(1, 2, 5)).shape
    ember.Size([1, 3, 3])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``name`` becomes an ordinary parameter again.

    >>> import ember
    >>> m = remove_weight_norm(weight_norm(ember.nn.Linear(3, 2)))
    >>> [name for name, _ in m.named_parameters()]
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
