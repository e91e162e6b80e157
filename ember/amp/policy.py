"""Autocast's policy tables: per device type, what each op does under autocast.

PyTorch keeps one list per device type (``aten/src/ATen/autocast_mode.cpp``); ember keeps the
same lists, under the same names, and follows the CPU one and the CUDA one separately:

- ``LOWER``: cast floating inputs to the region's dtype (matmuls, convolutions, ``linear``);
- ``FLOAT32``: cast them to float32 (losses, linear algebra; on CUDA also ``softmax``,
  ``log_softmax``, ``layer_norm``, ``exp``, ``log``, ``pow``, ``sum``, ``cumsum``);
- ``PROMOTE``: cast them to the widest floating dtype among them;
- ``NATIVE``: run as given, with autocast off inside (a function PyTorch computes in one kernel
  that ember builds from ops which would otherwise be cast one by one, such as ``mv`` on the CPU);
- ``FLOAT16``: cast them to float16 whatever the region's dtype (cuDNN's RNN kernel
  ``_cudnn_rnn``, whose autocast wrapper in ``aten/src/ATen/cudnn/AutocastRNN.cpp`` casts to
  half even under bfloat16 autocast).

The recurrent layers (``nn.RNN``, ``nn.GRU``, ``nn.LSTM``) take the rule of the PyTorch kernel
that runs them: ``_cudnn_rnn`` on cuda, oneDNN's ``mkldnn_rnn`` for a CPU LSTM without
projections or packed input; elsewhere PyTorch's native cells, which are ``linear`` calls
(``RNNBase._autocast_kernel``).

Names are PyTorch's function names. ``OP_NAMES`` says which ember primitive is which name, so
``apply`` (``ember/ops/base.py``) finds a primitive's rule with one dict lookup; public
composite functions (``F.linear``, the losses) name themselves with ``autocast_mode.rule``.
float64 and integer inputs are never cast.

>>> from ember.amp.policy import rule_for
>>> rule_for("cpu", "linear"), rule_for("cpu", "softmax"), rule_for("cuda", "softmax")
('lower', None, 'float32')
"""

from __future__ import annotations

from ..ops import dense as _dense
from ..ops import elementwise as _E
from ..ops import linalg as _linalg
from ..ops import reduce as _reduce
from ..ops import softmax as _softmax
from ..ops.conv import Conv2d, Conv2dGradInput
from ..ops.loss import BinaryCrossEntropy
from ..ops.norm import LayerNormalize

LOWER, FLOAT32, PROMOTE, NATIVE, FLOAT16 = "lower", "float32", "promote", "native", "float16"

_LOSSES = (
    "mse_loss l1_loss smooth_l1_loss huber_loss nll_loss cross_entropy kl_div "
    "binary_cross_entropy_with_logits cosine_embedding_loss hinge_embedding_loss "
    "poisson_nll_loss margin_ranking_loss soft_margin_loss triplet_margin_loss "
    "multi_margin_loss multilabel_margin_loss ctc_loss"
)

# PyTorch 2.13's CPU lists (lower_precision_fp, fp32, promote), for what ember has.
_CPU = {
    LOWER: "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d bmm mm "
    "matmul einsum baddbmm addmm addbmm linear prelu scaled_dot_product_attention "
    "linalg_vecdot tensordot inner multi_dot mkldnn_rnn",
    FLOAT32: _LOSSES + " binary_cross_entropy prod cdist pdist trace inverse cholesky solve "
    "linalg_inv linalg_solve linalg_cholesky linalg_eigh linalg_svd linalg_det slogdet "
    "grid_sample",
    PROMOTE: "stack cat index_copy",
    NATIVE: "mv dot addmv addr outer kron bilinear gru_cell",
}

# PyTorch 2.13's CUDA lists. softmax, log_softmax, sum, cumsum and prod run in float32 unless
# the call gives dtype= (PyTorch's fp32_set_opt_dtype); binary_cross_entropy is refused there.
# NATIVE here: PyTorch's kernels, unlisted, that ember builds from float32-listed ops (mean
# and var from sum, elu and mish from exp, instance_norm from mean and rsqrt...): they run in
# their inputs' dtype, as PyTorch's. inner is tensordot in PyTorch, so it promotes.
_CUDA = {
    LOWER: "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu addmm "
    "addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm multi_dot "
    "lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention",
    FLOAT32: _LOSSES + " acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal "
    "rsqrt sinh tan pow softplus layer_norm group_norm norm cosine_similarity cdist pdist "
    "renorm logsumexp softmax log_softmax sum cumsum prod cumprod linalg_vector_norm "
    "linalg_matrix_norm __rtruediv__",
    PROMOTE: "addcdiv addcmul atan2 bilinear cross dot grid_sample index_put scatter_add "
    "stack cat index_copy tensordot inner",
    NATIVE: "outer kron mean var std elu selu celu gelu mish log_sigmoid instance_norm",
    FLOAT16: "_cudnn_rnn",
}


def _table(lists: dict) -> dict:
    return {name: rule for rule, names in lists.items() for name in names.split()}


TABLES = {"cpu": _table(_CPU), "cuda": _table(_CUDA)}

# The primitives that are PyTorch functions of their own (the rest are parts of composites).
OP_NAMES = {
    _linalg.MatMul: "matmul",
    _linalg.Einsum: "einsum",
    Conv2d: "conv2d",
    Conv2dGradInput: "conv_transpose2d",
    _reduce.Prod: "prod",
    _reduce.Sum: "sum",
    _reduce.Cumsum: "cumsum",
    _reduce.Cumprod: "cumprod",
    _softmax.Softmax: "softmax",
    _softmax.LogSoftmax: "log_softmax",
    LayerNormalize: "layer_norm",
    BinaryCrossEntropy: "binary_cross_entropy",
    _dense.Inv: "inverse",
    _dense.Solve: "solve",
    _dense.Cholesky: "cholesky",
    _dense.LogAbsDet: "slogdet",
    _dense.EighValues: "linalg_eigh",
    _dense.EighVectors: "linalg_eigh",
    _dense.SingularValues: "linalg_svd",
    _dense.SvdU: "linalg_svd",
    _dense.SvdVh: "linalg_svd",
    _E.Exp: "exp",
    _E.Expm1: "expm1",
    _E.Log: "log",
    _E.Log1p: "log1p",
    _E.Log2: "log2",
    _E.Log10: "log10",
    _E.Reciprocal: "reciprocal",
    _E.Rsqrt: "rsqrt",
    _E.Sinh: "sinh",
    _E.Cosh: "cosh",
    _E.Tan: "tan",
    _E.Asin: "asin",
    _E.Acos: "acos",
    _E.Pow: "pow",
    _E.PowScalar: "pow",
    _E.Atan2: "atan2",
}


def _op_rules() -> dict:
    """op class -> {device type: rule}, only for classes with a rule on some device."""
    rules: dict = {}
    for cls, name in OP_NAMES.items():
        per_device = {dev: t[name] for dev, t in TABLES.items() if name in t}
        if per_device:
            rules[cls] = per_device
    return rules


OP_RULES = _op_rules()


def rule_for(device_type: str, name: str) -> str | None:
    """The rule for PyTorch function ``name`` on ``device_type``, or None (run as called).

    >>> rule_for("cpu", "mse_loss")
    'float32'
    """
    return TABLES.get(device_type, {}).get(name)


__all__ = [
    "FLOAT16",
    "FLOAT32",
    "LOWER",
    "NATIVE",
    "OP_NAMES",
    "OP_RULES",
    "PROMOTE",
    "TABLES",
    "rule_for",
]
