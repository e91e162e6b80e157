"""``ember.nn.utils``: gradient clipping, flat parameter vectors, weight and spectral
normalization and (in ``ember.nn.utils.rnn``) packed sequences, as PyTorch's ``torch.nn.utils``.

>>> import ember
>>> p = ember.nn.Parameter(ember.zeros(2))
>>> p.grad = ember.tensor([3.0, 4.0])
>>> ember.nn.utils.clip_grad_norm_([p], max_norm=1.0)
tensor(5.)
"""

from . import parametrize, prune, rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "vector_to_parameters",
    "rnn",
    "prune",
    "parametrize",
    "weight_norm",
    "remove_weight_norm",
    "spectral_norm",
    "remove_spectral_norm",
]
