"""Parametrizations, as PyTorch's ``torch.nn.utils.parametrize``: after
``register_parametrization(module, "weight", P)``, ``module.weight`` is ``P(original)``,
recomputed on each access (or once inside ``cached()``), and the trained parameter is
``module.parametrizations.weight.original``. The module's class becomes a subclass named
``Parametrized<Class>`` whose property ``weight`` does this.

>>> import ember
>>> from ember.nn.utils import parametrize
>>> class Positive(ember.nn.Module):
...     def forward(self, x):
...         return x.abs()
>>> lin = ember.nn.Linear(2, 2)
>>> _ = parametrize.register_parametrization(lin, "weight", Positive())
>>> bool((lin.weight >= 0).all()), type(lin).__name__
(True, 'ParametrizedLinear')
"""

from __future__ import annotations

import contextlib

from ... import _caches
from ..._config import no_grad
from ..._tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

_cache_enabled = 0
_cache: dict = {}
_caches.register("parametrize.cached values", _cache.clear, _cache.__len__)


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, on first access."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register(module: Module, name: str, value) -> None:
    """Register ``value`` as a parameter when it is one, else as a buffer."""
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, chained, and the tensor they act on: ``original``
    (or ``original0``, ``original1``... when the first ``right_inverse`` returns several)."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new = original
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            with no_grad():
                if new is not original:
                    if new.shape == original.shape and new.dtype == original.dtype:
                        original.copy_(new)
                    else:
                        original.data = new
            _register(self, "original", original)
        else:
            for i, value in enumerate(new):
                if isinstance(original, Parameter):
                    value = Parameter(value.detach().clone(), original.requires_grad)
                _register(self, f"original{i}", value)

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value``."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")  # fmt: skip
                value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, v in enumerate(value):
                    getattr(self, f"original{i}").copy_(v)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _property(name: str) -> property:
    def get(self):
        plist = self.parametrizations[name]
        if not _cache_enabled:
            return plist()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def set(self, value) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, set)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module,
                             *, unsafe: bool = False) -> Module:  # fmt: skip
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the original
    tensor (which moves to ``module.parametrizations.<tensor_name>``); a second call on the
    same name chains another parametrization. Returns ``module``."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            x = getattr(module, tensor_name)
            y = parametrization(x)
            if not isinstance(y, Tensor) or y.shape != x.shape or y.dtype != x.dtype:
                raise ValueError("Registering a parametrization may not change the shape or "
                                 "dtype of the tensor")  # fmt: skip
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")  # fmt: skip
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    setattr(type(module), tensor_name, _property(tensor_name))
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before its first parametrization."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:  # fmt: skip
    """Undo the parametrizations of ``module.<tensor_name>``: it becomes a plain parameter
    again, holding the parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                if value.shape == original.shape and value.dtype == original.dtype:
                    original.copy_(value)
                else:
                    original.data = value
    elif leave_parametrized:
        value = getattr(module, tensor_name).detach()
        original = Parameter(value) if plist.original0.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")  # fmt: skip
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]  # fmt: skip
