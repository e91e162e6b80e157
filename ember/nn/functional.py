"""``ember.nn.functional``: the functional forms of layers, activations and losses.

>>> import ember
>>> import ember.nn.functional as F
>>> F.relu(ember.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from ._functional import conv3d as _conv3d
from ._functional import extra as _extra
from ._functional import loss_extra as _loss_extra
from ._functional import resampling as _resampling
from ._functional.activation import (  # noqa: F401
    celu,
    elu,
    gelu,
    glu,
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
from ._functional.conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from ._functional.conv3d import *  # noqa: F403
from ._functional.extra import *  # noqa: F403
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
from ._functional.loss_extra import *  # noqa: F403
from ._functional.misc import (  # noqa: F401
    alpha_dropout,
    bilinear,
    cosine_similarity,
    dropout,
    dropout2d,
    embedding,
    linear,
    one_hot,
    pairwise_distance,
    scaled_dot_product_attention,
)
from ._functional.normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    normalize,
)
from ._functional.padding import (  # noqa: F401
    pad,
)
from ._functional.pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    lp_pool2d,
    max_pool1d,
    max_pool2d,
)
from ._functional.resampling import *  # noqa: F403

__all__ = [
    *_conv3d.__all__,
    *_extra.__all__,
    *_loss_extra.__all__,
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
    "pad",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "normalize",
    "linear",
    "bilinear",
    "dropout",
    "alpha_dropout",
    "dropout2d",
    "embedding",
    "one_hot",
    "scaled_dot_product_attention",
    "cosine_similarity",
    "pairwise_distance",
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
