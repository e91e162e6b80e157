"""Losses: mse, l1, smooth_l1, huber, cross_entropy, nll, binary cross-entropy, kl_div.

Every loss takes ``reduction='none'|'mean'|'sum'`` (kl_div also ``'batchmean'``) and, where
PyTorch still accepts them, the legacy ``size_average`` / ``reduce`` arguments. Values,
gradients and result dtypes follow PyTorch; all are composites of ember ops (so they
differentiate twice) except binary cross-entropy, whose PyTorch gradient needs a primitive
(``ember.ops.loss``). On a GPU, cross-entropy's log-softmax is one fused kernel per row
(``ember.ops.softmax``) and its target check one device-to-host copy.

The losses live by kind: ``loss_reduction`` (the ``reduction`` argument), ``loss_regression``,
``loss_classification`` and ``loss_divergence``, beside ``loss_margin`` and
``loss_likelihood``; this module gathers the first four under their old names.

>>> import ember
>>> import ember.nn.functional as F
>>> F.mse_loss(ember.tensor([1.0, 3.0]), ember.tensor([0.0, 0.0]))
tensor(5.)
"""

from __future__ import annotations

from .loss_classification import (  # noqa: F401  (private names other modules import)
    _check_class_weight,
    _check_float_input,
    _class_target,
    _classes,
    _cross_entropy_probs,
    _log_sigmoid,
    _nll,
    _scan_targets,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    nll_loss,
)
from .loss_divergence import kl_div
from .loss_reduction import (  # noqa: F401
    _REDUCTIONS,
    _reduce,
    _reduction,
    _weighted_reduce,
    legacy_reduction,
)
from .loss_regression import (  # noqa: F401
    _broadcastable,
    _check_elementwise_weight,
    _elementwise_reduce,
    _regression,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)

__all__ = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]
