"""Spectral normalization (PyTorch's classic ``torch.nn.utils.spectral_norm``): a parameter
``w`` is divided by its largest singular value ``sigma``, estimated by power iteration.

The trained parameter becomes ``<name>_orig``; the power-iteration vectors ``<name>_u`` and
``<name>_v`` are buffers, updated in place (one or more steps) by every forward in training
mode and left alone in eval mode. The weight is viewed as a matrix with ``dim`` (0, or 1 for
transposed convolutions) as its rows.

>>> import ember
>>> from ember.nn.utils import spectral_norm
>>> m = spectral_norm(ember.nn.Linear(20, 40))
>>> m.weight_u.shape, m.weight_v.shape
(ember.Size([40]), ember.Size([20]))
>>> [name for name, _ in m.named_parameters()], [name for name, _ in m.named_buffers()]
(['bias', 'weight_orig'], ['weight_u', 'weight_v'])
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._config import no_grad
from ..._errors import EmberError
from ..._tensor import Tensor
from ...functions.creation import randn
from .._functional.normalization import normalize
from ..module import Module
from ..parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook that :func:`spectral_norm` registers (recomputes the weight)."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "spectral_norm: Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` as a matrix: dimension ``dim`` as rows, the others flattened."""
        weight_mat = weight
        if self.dim != 0:
            rest = [d for d in range(weight_mat.ndim) if d != self.dim]
            weight_mat = weight_mat.permute(self.dim, *rest)
        return weight_mat.reshape(weight_mat.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma``; in training, first refine ``u`` and ``v`` in place."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                # clones, so that the in-place updates of the next forward leave this
                # forward's graph intact
                u = u.clone()
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Put a plain parameter ``name`` (the current normalized weight) back."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        """Replace parameter ``name`` of ``module`` by ``<name>_orig`` and the buffers."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise EmberError(
                    "spectral_norm: Cannot register two spectral_norm hooks on the same "
                    f"parameter {name} of {type(module).__name__}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(
                f"spectral_norm: `SpectralNorm` cannot be applied as parameter `{name}` is None "
                f"or missing in {type(module).__name__}"
            )
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            u = normalize(randn(h, **kw), dim=0, eps=fn.eps)
            v = normalize(randn(w, **kw), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: T_module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> T_module:
    """Apply spectral normalization to parameter ``name`` of ``module`` (in place; returns
    it). ``dim`` defaults to 1 for ConvTranspose layers and 0 otherwise.

    >>> import ember
    >>> m = spectral_norm(ember.nn.Conv2d(3, 4, 3), n_power_iterations=2)
    >>> m(ember.randn(1, 3, 5, 5)).shape
    ember.Size([1, 4, 3, 3])
    """
    if dim is None:
        transposed = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        dim = 1 if any(c.__name__ in transposed for c in type(module).__mro__) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: ``name`` becomes an ordinary parameter holding the
    normalized weight.

    >>> import ember
    >>> m = remove_spectral_norm(spectral_norm(ember.nn.Linear(3, 2)))
    >>> [name for name, _ in m.named_parameters()], list(m.named_buffers())
    (['bias', 'weight'], [])
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
