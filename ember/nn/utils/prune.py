"""Magnitude and random pruning, as PyTorch's ``torch.nn.utils.prune``: a pruned tensor
``name`` becomes ``name_orig`` (the parameter) times the buffer ``name_mask``, recomputed by a
forward pre-hook; ``remove`` makes the pruning permanent.

>>> import ember
>>> from ember.nn.utils import prune
>>> fc = ember.nn.Linear(2, 2)
>>> _ = ember.nn.init.constant_(fc.weight, 1.0)
>>> with ember.no_grad():
...     fc.weight[0, 0] = 0.5
>>> _ = prune.l1_unstructured(fc, "weight", amount=1)
>>> fc.weight_mask
tensor([[0., 1.],
        [1., 1.]])
"""

from __future__ import annotations

import numbers

from ..._config import no_grad
from ..module import Module


def _nparams_to_prune(amount, size: int) -> int:
    """How many of ``size`` entries ``amount`` (a count, or a fraction in [0, 1]) prunes."""
    if isinstance(amount, numbers.Integral):
        if amount < 0:
            raise ValueError(f"amount={amount} should either be a float in the range [0, 1] "
                             "or a non-negative integer")  # fmt: skip
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")  # fmt: skip
        return int(amount)
    if not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")  # fmt: skip
    return round(float(amount) * size)


class BasePruningMethod:
    """A pruning method: ``compute_mask(t, default_mask)`` gives the new mask; an instance is
    the forward pre-hook that keeps ``module.<name>`` equal to ``name_orig * name_mask``."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t, default_mask):
        raise NotImplementedError

    def apply_mask(self, module: Module):
        """``name_orig * name_mask`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * getattr(module, self._tensor_name + "_mask").to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``; on a tensor already
        pruned, only the entries still kept are candidates (the masks multiply)."""
        method = cls(*args, **kwargs)
        method._tensor_name = name
        earlier = [k for k, h in module._forward_pre_hooks.items()
                   if isinstance(h, BasePruningMethod) and h._tensor_name == name]  # fmt: skip
        orig = getattr(module, name)
        if earlier:
            orig = module._parameters[name + "_orig"]
            default_mask = getattr(module, name + "_mask").detach().clone()
            del module._forward_pre_hooks[earlier[0]]
        else:
            from ...functions.creation import ones_like

            default_mask = ones_like(orig)
        scores = (importance_scores if importance_scores is not None else orig).detach()
        with no_grad():
            mask = method._masked_compute(scores, default_mask)
        if not earlier:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def _masked_compute(self, t, default_mask):
        """The mask over the entries ``default_mask`` still keeps (all of them at first)."""
        keep = default_mask.reshape(-1) == 1
        if bool(keep.all()):
            return self.compute_mask(t, default_mask)
        mask = default_mask.clone().reshape(-1)
        sub = t.reshape(-1)[keep]
        from ...functions.creation import ones_like

        mask[keep] = self.compute_mask(sub, ones_like(sub))
        return mask.reshape(default_mask.shape)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``name`` becomes a parameter again, masked."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        with no_grad():
            orig.copy_(weight.detach())
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class Identity(BasePruningMethod):
    """Prunes nothing (an all-ones mask)."""

    def compute_mask(self, t, default_mask):
        return default_mask.clone()


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of the tensor), first in ``_order``."""

    def __init__(self, amount) -> None:
        _nparams_to_prune(amount, amount if isinstance(amount, numbers.Integral) else 1)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _nparams_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.reshape(-1)[self._order(t)[:k]] = 0
        return mask


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries of smallest absolute value."""

    def _order(self, t):
        return t.abs().reshape(-1).argsort(stable=True)


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries drawn at random."""

    def _order(self, t):
        from ...functions.creation import rand

        return rand(t.numel()).argsort()


def identity(module: Module, name: str) -> Module:
    """Attach an all-ones mask to ``module.<name>``."""
    Identity.apply(module, name)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Zero the ``amount`` (count or fraction) entries of ``module.<name>`` smallest in absolute
    value (or in ``importance_scores``); returns ``module``."""
    L1Unstructured.apply(module, name, amount, importance_scores=importance_scores)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Zero ``amount`` (count or fraction) entries of ``module.<name>`` drawn at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent and drop its mask and hook."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")  # fmt: skip


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` carries a pruning hook."""
    return any(isinstance(h, BasePruningMethod)
               for m in module.modules() for h in m._forward_pre_hooks.values())  # fmt: skip


__all__ = ["BasePruningMethod", "Identity", "L1Unstructured", "RandomUnstructured",
           "identity", "l1_unstructured", "random_unstructured", "remove", "is_pruned"]  # fmt: skip
