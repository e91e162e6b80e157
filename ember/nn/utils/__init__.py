"""``ember.nn.utils``: gradient clipping and flat parameter vectors (PyTorch's ``torch.nn.utils``).

>>> import ember
>>> p = ember.nn.Parameter(ember.zeros(2))
>>> p.grad = ember.tensor([3.0, 4.0])
>>> ember.nn.utils.clip_grad_norm_([p], max_norm=1.0)
tensor(5.)
"""

from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
