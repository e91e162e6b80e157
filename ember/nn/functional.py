"""``ember.nn.functional``: the functional forms of layers, activations and losses.

>>> import ember
>>> import ember.nn.functional as F
>>> F.relu(ember.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from ._functional import activation_inplace as _activation_inplace
from ._functional import attention as _attention
from ._functional import conv3d as _conv3d
from ._functional import distance as _distance
from ._functional import dropout as _dropout
from ._functional import embedding as _embedding
from ._functional import loss_likelihood as _loss_likelihood
from ._functional import loss_margin as _loss_margin
from ._functional import resampling as _resampling
from ._functional.activation import (  # noqa: F401
    celu,
    elu,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    rrelu,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from ._functional.activation_inplace import *  # noqa: F403
from ._functional.attention import *  # noqa: F403
from ._functional.conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from ._functional.conv3d import *  # noqa: F403
from ._functional.distance import *  # noqa: F403
from ._functional.dropout import *  # noqa: F403
from ._functional.dropout import dropout  # noqa: F401  (ember.functions.dropout)
from ._functional.embedding import *  # noqa: F403
from ._functional.embedding_bag import embedding_bag
from ._functional.linear import bilinear, linear  # noqa: F401
from ._functional.loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ._functional.loss_likelihood import *  # noqa: F403
from ._functional.loss_margin import *  # noqa: F403
from ._functional.normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from ._functional.padding import (  # noqa: F401
    pad,
)
from ._functional.pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    lp_pool2d,
    max_pool1d,
    max_pool2d,
)
from ._functional.resampling import *  # noqa: F403

__all__ = [
    *_activation_inplace.__all__,
    *_conv3d.__all__,
    *_attention.__all__,
    *_distance.__all__,
    *_dropout.__all__,
    *_embedding.__all__,
    "embedding_bag",
    *_loss_likelihood.__all__,
    *_loss_margin.__all__,
    *_resampling.__all__,
    "relu",
    "relu6",
    "hardtanh",
    "leaky_relu",
    "elu",
    "selu",
    "celu",
    "gelu",
    "silu",
    "mish",
    "sigmoid",
    "tanh",
    "logsigmoid",
    "softplus",
    "softmax",
    "log_softmax",
    "softmin",
    "glu",
    "gumbel_softmax",
    "hardsigmoid",
    "hardswish",
    "prelu",
    "rrelu",
    "softsign",
    "tanhshrink",
    "hardshrink",
    "softshrink",
    "threshold",
    "conv2d",
    "conv1d",
    "conv_transpose2d",
    "conv_transpose1d",
    "unfold",
    "fold",
    "max_pool2d",
    "max_pool1d",
    "avg_pool2d",
    "avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool1d",
    "lp_pool2d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d",
    "pad",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "normalize",
    "rms_norm",
    "local_response_norm",
    "linear",
    "bilinear",
    "dropout",
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
