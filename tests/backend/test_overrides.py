"""Device kernels are overrides (``ember.backend.overrides``): every registered one is checked
here against the body it replaces, and the one lookup is what eager ``apply``, graph plans,
the passes and the optimizers use.

The kernels run on the emulated CuPy (``_emulator``: g++ compiles the CUDA sources) and cuDNN on
its stand-in (``_fakecudnn``); the dispatch tests use the fake CuPy (``tests/_fakecupy``) with
spy overrides. A new override without a case in ``OP_CASES`` / ``UPDATE_CASES`` fails
``test_every_override_is_checked_against_its_reference``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _config
from ember.backend import blas as _blas
from ember.backend import overrides
from ember.ops import _winograd
from ember.ops import attention as At
from ember.ops import conv as C
from ember.ops import elementwise as ew
from ember.ops import norm as Nm
from ember.ops import pool as Pl
from ember.ops.base import Spec, apply
from ember.ops.broadcast import SumTo
from ember.ops.checks import CheckRange
from ember.ops.elementwise import Exp
from ember.ops.linalg import MatMul
from ember.ops.loss import NllLoss, NllLossGrad
from ember.ops.movement import Reshape
from ember.ops.norm import LayerNormalize
from ember.ops.reduce import Sum
from ember.ops.softmax import LogSoftmax, Softmax, SoftmaxGrad
from ember.static import passes
from ember.static.ir import Graph

BF16 = np.dtype(ml_dtypes.bfloat16)
F64 = np.float64


def _rand(*shape, dtype=np.float32, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


def _conv(xs, ws, p):
    x, w = _rand(*xs), _rand(*ws, seed=1)
    g = _rand(*C.conv_output_shape(xs, ws, C.Conv2d(*p)), seed=2)
    return x, w, g


def _fused(dtype, build):
    """The ``FusedElementwise`` op the fusion pass makes of ``build(graph, x, y)``'s nodes."""
    g = Graph("f")
    x, y = (g.add_input((4, 9), np.dtype(dtype), n) for n in "xy")
    g.outputs.append(build(lambda op, *a: g.add_node(op, list(a), (4, 9), np.dtype(dtype)), x, y))
    return passes.elementwise_fusion(g).nodes[0].op


_FUSED1 = _fused(np.float32, lambda n, x, y: n(ew.Tanh(), n(ew.NEG, n(ew.EXP, x))))
_FUSED2 = _fused(np.float64, lambda n, x, y: n(ew.ADD, n(ew.EXP, n(ew.MUL, x, y)), y))


_QKV = tuple(_rand(2, 3, 8, 16, seed=s).astype(BF16) / 3 for s in range(3))
_QKV_F16 = tuple(_rand(4, 5, 8, seed=s).astype(np.float16) / 3 for s in range(3))
_O_ATT = At.Attention(0.25, False).forward(np, *_QKV)
_G_ATT = _rand(2, 3, 8, 16, seed=5).astype(BF16) / 3


def _bn(x, *params, g=None):
    """Batch-norm inputs: x's own statistics (BatchMoments), the params, and for the input
    gradient ``g`` and the sums ``BatchNormSums(g, x, stats)`` (what its vjp passes)."""
    stats = Nm.BatchMoments().forward(np, x)
    if g is None:
        return (x, stats) + params
    sums = Nm.BatchNormSums(1e-5, True).forward(np, g, x, stats)
    return (g, x, stats, sums) + params


def _last(a):
    """``a`` (N, C, ...) in channels-last memory."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)).transpose(
        0, a.ndim - 1, *range(1, a.ndim - 1)
    )


def _masked(a):
    a[0, ::3] = -np.inf
    a[1] = -np.inf
    return a


def _halves(dtype, *shape, seed=0):
    a = np.asarray(_rand(*shape, seed=seed) * 300).astype(dtype)
    if a.size >= 8:
        a.reshape(-1)[:4] = [np.inf, -np.inf, 0.0, -0.0]
    return a


def _relu_grad_inputs(dtype, shape):
    g, y = _rand(*shape, dtype=dtype), _rand(*shape, dtype=dtype, seed=3)
    y.reshape(-1)[:3] = [0.0, -0.0, np.nan]
    return g, y


def _cast_inputs(dtype, *shape):
    """Values that test a conversion's rounding: ties to even in both directions at the 16-bit
    types' last place, the extremes (overflow, float16's subnormals, signed zeros, NaN)."""
    a = _rand(*shape, dtype=np.float32)
    flat = a.reshape(-1)
    ties = np.array([0x3F808000, 0x3F818000, 0xBF808000, 0x3F800001], np.uint32).view(np.float32)
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0, 3.4e38, 70000.0, 1e-6, -3e-8, 65520.0]
    flat[: len(ties) + len(specials)] = np.concatenate([ties, specials])
    flat[-3:] = [1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8]  # float16 ties, a bfloat16 tie
    with np.errstate(over="ignore"):
        return a if dtype == np.float32 else a.astype(dtype)


_P1 = ((1, 1), (1, 1), (1, 1), 1)
_P2 = ((2, 1), (2, 1), (2, 1), 2)
_X1, _W1, _G1 = _conv((2, 3, 6, 6), (4, 3, 3, 3), _P1)
_X2, _W2, _G2 = _conv((2, 4, 9, 8), (6, 2, 3, 3), _P2)
_P4 = ((2, 1), (1, 0), (1, 1), 1)  # a stride: scatters
_P5 = ((1, 2), (2, 1), (1, 2), 1)  # a dilated row: the kernel's general loop
_X3, _W3, _G3 = _conv((2, 3, 6, 5), (8, 3, 3, 3), _P1)  # more output channels: scatters
_X4, _W4, _G4 = _conv((3, 4, 9, 7), (4, 4, 3, 2), _P4)
_X5, _W5, _G5 = (a.astype(np.float64) for a in _conv((2, 3, 8, 9), (5, 3, 2, 3), _P5))

# qualified name of the overridden class -> [(op, input arrays, tolerance)]
OP_CASES = {
    "ember.ops.softmax.Softmax": [
        (Softmax(1), (_rand(5, 70),), 1e-6),
        (Softmax(0), (_rand(3, 4, 9, dtype=np.float64),), 1e-14),
        (Softmax(-1), (_rand(4, 50, dtype=BF16),), 1e-2),
        (Softmax(-1), (_rand(3, 700),), 1e-6),  # 128 threads a row, two pieces each in registers
        (Softmax(-1), (_rand(6, 512, dtype=BF16),), 1e-2),  # attention's rows: one piece a thread
        (Softmax(-1), (_masked(_rand(4, 64)),), 1e-6),  # -inf entries, a row of them
    ],
    "ember.ops.softmax.LogSoftmax": [
        (LogSoftmax(-1), (_rand(5, 70),), 1e-5),
        (LogSoftmax(1), (_rand(3, 4, 9, dtype=np.float64),), 1e-13),
        (LogSoftmax(-1), (_rand(3, 64, dtype=np.float64),), 1e-13),  # in registers
        (LogSoftmax(-1), (_rand(2, 8192),), 1e-5),  # too long for registers
    ],
    "ember.ops.softmax.SoftmaxGrad": [
        (SoftmaxGrad(1, False), (_rand(5, 70), Softmax(1).forward(np, _rand(5, 70, seed=1))), 1e-6),
        (
            SoftmaxGrad(1, True),
            (_rand(3, 4, 9, dtype=F64), LogSoftmax(1).forward(np, _rand(3, 4, 9, dtype=F64))),
            1e-13,
        ),
        (
            SoftmaxGrad(1, True),
            (_rand(4, 700, dtype=BF16), LogSoftmax(1).forward(np, _rand(4, 700, dtype=BF16))),
            2e-2,
        ),
        (SoftmaxGrad(0, False), (_rand(6, 3), Softmax(0).forward(np, _rand(6, 3, seed=2))), 1e-6),
    ],
    "ember.ops.norm.LayerNormalize": [
        (LayerNormalize(1, 1e-5), (_rand(4, 33),), 2e-6),
        (LayerNormalize(1, 1e-5), (_rand(2, 1500),), 2e-6),
        (LayerNormalize(2, 1e-3), (_rand(2, 3, 5, 7, dtype=np.float64),), 1e-12),
        (LayerNormalize(1, 1e-5), (_rand(4, 64),), 2e-6),  # rows in registers
        (LayerNormalize(1, 1e-5), (_rand(3, 768, dtype=BF16),), 2e-2),  # 3 pieces a thread
    ],
    "ember.ops.reduce.Sum": [
        (Sum((0,), False), (_rand(40, 7),), 1e-5),
        (Sum((0, 1), True), (_rand(3, 5, 6, dtype=F64),), 1e-12),
        (Sum((0,), False), (_rand(300, 4, dtype=BF16),), 1e-2),
        (Sum((1,), True), (_rand(6, 300, dtype=BF16),), 1e-2),  # a row kernel per row
        (Sum((2,), False), (_rand(2, 3, 70, dtype=BF16),), 1e-2),
    ],
    "ember.ops.broadcast.SumTo": [
        (SumTo((7,)), (_rand(5, 8, 7),), 1e-5),
        (SumTo((1, 6)), (_rand(4, 3, 6, dtype=F64),), 1e-12),
        (SumTo((4,)), (_rand(300, 4, dtype=BF16),), 1e-2),
    ],
    "ember.ops.elementwise.cast.Cast": [  # bit-exact: rounded once to nearest even
        (ew.Cast(ember.bfloat16), (_cast_inputs(np.float32, 7, 9),), 0.0),  # a tail of 3
        (ew.Cast(ember.float16), (_cast_inputs(np.float32, 2, 3, 64),), 0.0),
        (ew.Cast(ember.float32), (_cast_inputs(BF16, 5, 13),), 0.0),
        (ew.Cast(ember.float32), (_cast_inputs(np.float16, 40),), 0.0),
    ],
    "ember.ops.elementwise.activations.Relu": [  # bit-exact: -0.0 gives +0.0, NaN stays
        (ew.Relu(), (_relu_grad_inputs(np.float32, (3, 4, 5, 6))[1],), 0.0),
        (ew.Relu(), (_relu_grad_inputs(np.float32, (4, 8, 64, 64))[1],), 0.0),
        (ew.Relu(), (_last(_relu_grad_inputs(F64, (2, 3, 4, 5))[1]),), 0.0),
        (ew.Relu(), (_relu_grad_inputs(BF16, (7, 9))[1][:, ::2],), 0.0),
    ],
    "ember.ops.elementwise.activations.ReluGrad": [
        (ew.ReluGrad(), _relu_grad_inputs(np.float32, (3, 4, 5, 6)), 0.0),
        (ew.ReluGrad(), tuple(_last(a) for a in _relu_grad_inputs(F64, (2, 3, 4, 5))), 0.0),
        (ew.ReluGrad(), _relu_grad_inputs(BF16, (7, 9)), 0.0),
        (ew.ReluGrad(), _relu_grad_inputs(np.float16, (33,)), 0.0),
    ],
    "ember.ops.norm.Affine": [  # layer norm's (trailing dims) and group norm's (dim 1)
        (Nm.Affine(2, True, True), (_rand(4, 3, 5, 7), _rand(5, 7), _rand(5, 7)), 1e-5),
        (Nm.Affine(1, True, False), (_rand(2, 3, 4, 5, dtype=F64), _rand(3, dtype=F64)), 1e-13),
        (
            Nm.Affine(2, True, True),
            tuple(_rand(*s, dtype=BF16) for s in ((4, 6, 40), (40,), (40,))),
            4e-2,  # the body rounds the product and the sum; the kernel once
        ),
        (Nm.Affine(1, False, True), (_rand(2, 3, 4), _rand(3)), 1e-6),
        (
            Nm.Affine(1, True, True),
            tuple(_rand(*s, dtype=BF16) for s in ((9, 40), (40,), (40,))),
            1e-1,
        ),  # fmt: skip
    ],
    "ember.ops.norm.RunningAverage": [
        (Nm.RunningAverage(0, 0.1), (_rand(7), _rand(2, 7, seed=1)), 1e-6),
        (Nm.RunningAverage(1, 0.3, 64 / 63), (_rand(5, dtype=F64), _rand(2, 5, dtype=F64)), 1e-14),
    ],
    "ember.ops.norm.AffineSums": [
        (Nm.AffineSums(2, 1), (_rand(3, 70, 37), _rand(3, 70, 37, seed=1)), 1e-4),
        (Nm.AffineSums(1, 2), (_rand(5, 3, 4, dtype=F64), _rand(5, 3, 4, dtype=F64)), 1e-12),
        (Nm.AffineSums(1, 1), (_rand(300, 33, dtype=BF16), _rand(300, 33, dtype=BF16)), 1e-2),
    ],
    "ember.ops.norm.BatchMoments": [
        (Nm.BatchMoments(), (_rand(4, 5) + 100,), 1e-5),
        (Nm.BatchMoments(), (_rand(3, 4, 5, 6),), 1e-5),
        (Nm.BatchMoments(), (_rand(2, 3, 33, dtype=F64),), 1e-12),
        (Nm.BatchMoments(), (_rand(2, 3, 4, dtype=BF16),), 1e-5),
        (Nm.BatchMoments(), (_rand(70, 2, 40),), 1e-5),
        (Nm.BatchMoments(), (_rand(64, 1, 300) + 5,), 1e-5),  # 10 blocks merged by the last
    ],
    "ember.ops.norm.BatchNormSums": [
        (Nm.BatchNormSums(1e-5), _bn(_rand(64, 1, 300), g=_rand(64, 1, 300, seed=1))[:3], 1e-4),
        (Nm.BatchNormSums(1e-5), _bn(_rand(4, 5), g=_rand(4, 5, seed=1))[:3], 1e-5),
        (Nm.BatchNormSums(1e-3), _bn(_rand(3, 4, 5, 6), g=_rand(3, 4, 5, 6, seed=1))[:3], 1e-5),
        (
            Nm.BatchNormSums(1e-5),
            _bn(_rand(2, 3, 33, dtype=F64), g=_rand(2, 3, 33, dtype=F64, seed=1))[:3],
            1e-12,
        ),
        (
            Nm.BatchNormSums(1e-5),
            _bn(_rand(2, 3, 4, dtype=BF16), g=_rand(2, 3, 4, dtype=BF16, seed=1))[:3],
            1e-4,
        ),
    ],
    "ember.ops.norm.BatchNormalize": [
        (Nm.BatchNormalize(1e-5, True), _bn(_rand(4, 5)), 1e-5),
        (
            Nm.BatchNormalize(1e-5, True, True, True),
            _bn(_rand(3, 4, 5, 6), _rand(4), _rand(4)),
            1e-5,
        ),
        (Nm.BatchNormalize(1e-3, False, True), _bn(_rand(2, 3, 5, dtype=F64), _rand(3)), 1e-12),
        (
            Nm.BatchNormalize(1e-5, True, False, True),
            _bn(_rand(2, 3, 4, dtype=BF16), _rand(3)),
            2e-2,
        ),
        # a model cast to 16 bits: weight and bias read in their own dtype, no cast first
        (
            Nm.BatchNormalize(1e-5, True, True, True),
            _bn(_rand(2, 3, 4, dtype=BF16), _rand(3, dtype=BF16), _rand(3, dtype=BF16, seed=1)),
            2e-2,
        ),
        (
            Nm.BatchNormalize(1e-5, False, True),
            _bn(_rand(3, 2, 5, dtype=np.float16), _rand(2, dtype=np.float16)),
            2e-3,
        ),
    ],
    "ember.ops.norm.BatchNormGradInput": [
        (Nm.BatchNormGradInput(1e-5), _bn(_rand(4, 5), g=_rand(4, 5, seed=1)), 1e-5),
        (
            Nm.BatchNormGradInput(1e-5, True),
            _bn(_rand(3, 4, 2, 5, dtype=F64), _rand(4, dtype=F64), g=_rand(3, 4, 2, 5, dtype=F64)),
            1e-12,
        ),
        (
            Nm.BatchNormGradInput(1e-5),
            _bn(_rand(2, 3, 4, dtype=BF16), g=_rand(2, 3, 4, dtype=BF16)),
            2e-2,
        ),
        (
            Nm.BatchNormGradInput(1e-5, True),
            _bn(_rand(2, 3, 4, dtype=BF16), _rand(3, dtype=BF16), g=_rand(2, 3, 4, dtype=BF16)),
            2e-2,
        ),
        (  # a weight in neither dtype: cast to float32 first
            Nm.BatchNormGradInput(1e-5, True),
            _bn(_rand(2, 3, 4, dtype=BF16), _rand(3, dtype=F64), g=_rand(2, 3, 4, dtype=BF16)),
            2e-2,
        ),
    ],
    # float16 / bfloat16: rounded once from float32, so bit for bit (NaN and inf included)
    **{
        f"ember.ops.elementwise.arithmetic.{type(op).__name__}": [
            (op, (_halves(d, 7, 33), _halves(d, 7, 33, seed=1)), 0)  # a tail after the vectors
            for d in (BF16, np.float16)
        ]
        + [
            (op, (_halves(BF16, 4, 6, 16), _halves(BF16, 16, seed=2)), 0),  # a trailing bias
            (op, (_halves(BF16, 4, 1, 1), _halves(BF16, 4, 6, 16, seed=3)), 0),  # one a row
            (op, (_halves(BF16, 5, 1), _halves(BF16, 1, 8, seed=4)), 0),  # an outer sum
            (op, (_halves(BF16, 3, 8), _halves(BF16, seed=5)), 0),  # one value
            (op, (_halves(BF16, 6, 2, 16).transpose(1, 0, 2), _halves(BF16, 2, 6, 16)), 0),
        ]
        for op in (ew.Add(), ew.Sub(), ew.Mul())
    },
    "ember.ops.elementwise.arithmetic.Neg": [
        (ew.Neg(), (_halves(BF16, 7, 33),), 0),
        (ew.Neg(), (_halves(np.float16, 4, 16),), 0),
    ],
    "ember.ops.movement.Reshape": [  # copies that move whole rows; a view stays a view
        (Reshape((2, 4, 24)), (_rand(2, 3, 4, 8).transpose(0, 2, 1, 3),), 0),
        (Reshape((8, 48)), (_rand(2, 3, 4, 16, dtype=BF16).transpose(0, 2, 1, 3),), 0),
        (Reshape((12,)), (_rand(3, 10)[:, 2:6],), 0),  # rows of 16 bytes at 8-byte offsets
        (Reshape((2, 6)), (_rand(4, 3),), 0),
    ],
    "ember.ops.linalg.MatMul": [
        (MatMul(), (_rand(3, 4), _rand(4, 5)), 1e-5),
        (MatMul(), (_rand(2, 3, 4), _rand(4, 5)), 1e-5),
        (MatMul(), (_rand(2, 3, 4), _rand(2, 4, 5)), 1e-5),
        (MatMul(), (_rand(2, 3, 4, dtype=BF16), _rand(2, 4, 5, dtype=BF16)), 0),
    ],
    "ember.ops.conv.Conv2d": [
        (C.Conv2d(*_P1), (_X1, _W1), 1e-4),
        (C.Conv2d(*_P2), (_X2, _W2), 1e-4),
    ],
    "ember.ops.attention.Attention": [  # cuDNN's flash attention (16-bit only)
        (At.Attention(0.25, False), _QKV, 2e-2),
        (At.Attention(0.125, True), _QKV_F16, 2e-2),
    ],
    "ember.ops.attention.AttentionGrad": [
        (At.AttentionGrad(0.25, False), (_G_ATT, _O_ATT, *_QKV), 3e-2),
    ],
    "ember.ops.conv.Conv2dGradInput": [
        (C.Conv2dGradInput(_X1.shape, *_P1), (_G1, _W1), 1e-4),
        (C.Conv2dGradInput(_X2.shape, *_P2), (_G2, _W2), 1e-4),
    ],
    "ember.static.passes.fuse.FusedElementwise": [
        (_FUSED1, (_rand(4, 9) / 3, _rand(4, 9)), 1e-6),
        (
            _FUSED2,
            (_rand(4, 9, dtype=np.float64) / 3, _rand(4, 9, dtype=np.float64, seed=1)),
            1e-13,
        ),
    ],
    "ember.ops.conv.Conv2dGradWeight": [
        (C.Conv2dGradWeight(_W1.shape, *_P1), (_X1, _G1), 1e-3),
        (C.Conv2dGradWeight(_W2.shape, *_P2), (_X2, _G2), 1e-3),
    ],
}

# qualified name of the optimizer whose update rule is overridden -> [(class, hyperparameters)]
UPDATE_CASES = {
    "ember.optim.adam.Adam": [
        (ember.optim.Adam, dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
        (ember.optim.Adam, dict(lr=1e-2, amsgrad=True)),
        (ember.optim.AdamW, dict(lr=1e-2, weight_decay=0.01, amsgrad=True)),
    ],
    "ember.optim.sgd.SGD": [
        (ember.optim.SGD, dict(lr=0.1, weight_decay=0.1)),
        (ember.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
        (ember.optim.SGD, dict(lr=0.1, momentum=0.5, dampening=0.3)),
    ],
    "ember.optim.rmsprop.RMSprop": [
        (ember.optim.RMSprop, dict(lr=1e-2, alpha=0.9)),
        (ember.optim.RMSprop, dict(lr=1e-2, centered=True, momentum=0.9, weight_decay=0.1)),
    ],
    "ember.optim.adagrad.Adagrad": [
        (ember.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
    ],
    "ember.optim.adamax.Adamax": [(ember.optim.Adamax, dict(lr=0.1, weight_decay=0.1))],
    "ember.optim.nadam.NAdam": [
        (ember.optim.NAdam, dict(lr=0.1, weight_decay=0.1)),
        (ember.optim.NAdam, dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ],
    "ember.optim.radam.RAdam": [(ember.optim.RAdam, dict(lr=0.1, weight_decay=0.1))],
    "ember.optim.adadelta.Adadelta": [(ember.optim.Adadelta, dict(lr=1.0, weight_decay=0.1))],
    "ember.optim.rprop.Rprop": [(ember.optim.Rprop, dict(lr=0.1))],
    "ember.optim.asgd.ASGD": [(ember.optim.ASGD, dict(lr=0.1, t0=2.0, weight_decay=0.1))],
}
# the rules with one CUDA kernel (ember.backend.kernels.optim); every rule has a NumPy override
CUDA_UPDATES = {"ember.optim.adam.Adam", "ember.optim.sgd.SGD", "ember.optim.rmsprop.RMSprop"}


def _pool(dtype, shape, seed=3):
    """A 2x2 MaxPool2d case (the kernel's) on one input with a NaN and ties."""
    x = _rand(*shape, dtype=dtype, seed=seed)
    x[0, 0, 0, 0] = np.nan
    x[-1, -1, 1, :] = 0
    tol = 1e-6 if dtype == np.float32 else 1e-13
    return (Pl.MaxPool2d((2, 2), (2, 2), (0, 0), (1, 1), False), (x,), tol)


def _scatter(dtype, shape, seed=4):
    """A 2x2 MaxPoolScatter case: ``g`` and ``x`` (ties; a NaN where ``seed`` is odd)."""
    _, (x,), tol = _pool(dtype, shape, seed)
    if seed % 2 == 0:
        x[0, 0, 0, 0] = 0.5
    g = _rand(shape[0], shape[1], shape[2] // 2, shape[3] // 2, dtype=dtype, seed=seed + 1)
    return (Pl.MaxPoolScatter((2, 2), (2, 2), (0, 0), (1, 1), False), (g, x), tol)


def _bn_cpu(dtype, shape, last):
    """One case of each batch-norm op for the CPU kernels (float32 / float64, NCHW or
    channels-last memory)."""
    x = _rand(*shape, dtype=dtype) * 2 + 1
    g = _rand(*shape, dtype=dtype, seed=1)
    w, b = _rand(shape[1], dtype=dtype, seed=2) + 2, _rand(shape[1], dtype=dtype, seed=3)
    if last:
        x, g = _last(x), _last(g)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    return {
        "ember.ops.norm.BatchMoments": (Nm.BatchMoments(), (x,), tol),
        "ember.ops.norm.BatchNormalize": (
            Nm.BatchNormalize(1e-5, True, True, True),
            _bn(x, w, b),
            tol,
        ),
        "ember.ops.norm.BatchNormSums": (Nm.BatchNormSums(1e-5, True), _bn(x, g=g)[:3], tol),
        "ember.ops.norm.BatchNormGradInput": (
            Nm.BatchNormGradInput(1e-5, True),
            _bn(x, w, g=g),
            tol,
        ),
    }


_BN_CPU = [
    _bn_cpu(np.float32, (4, 3, 5, 6), False),
    _bn_cpu(np.float32, (4, 3, 5, 6), True),
    _bn_cpu(F64, (3, 4, 7), False),
    _bn_cpu(F64, (2, 5, 3, 3), True),
    _bn_cpu(np.float32, (6, 5), False),
]

_BIG = _rand(1000, 100)
_BIG[0, :4] = [np.inf, -np.inf, np.nan, 0.0]
_ARITH = {  # same shapes, a 0-d operand on either side, float64
    c: [
        (c(), (_BIG, _rand(1000, 100, seed=1)), 0.0),
        (c(), (_BIG, np.asarray(0.3, np.float32)), 0.0),
        (c(), (np.asarray(-2.5, np.float32), _BIG), 0.0),
        (c(), (_rand(256, 300, dtype=F64), _rand(256, 300, dtype=F64, seed=2)), 0.0),
    ]
    for c in (ew.Add, ew.Sub, ew.Mul, ew.Div)
}

# ops with a CPU override: 2x2 max pooling and its gradient (numba), odd sizes leaving a row
# uncovered; batch normalization's four ops (numba), in NCHW and channels-last memory;
# convolution (numba's patch gather) and its scattering input gradient (numba's scatter-add)
CPU_OP_CASES = {
    "ember.ops.pool.MaxPool2d": [
        _pool(np.float32, (2, 3, 8, 8)),
        _pool(F64, (2, 3, 7, 9)),
        _pool(np.float32, (1, 2, 9, 7)),
    ],
    "ember.ops.pool.MaxPoolScatter": [
        _scatter(np.float32, (2, 3, 8, 8)),
        _scatter(F64, (2, 3, 7, 9), seed=5),
        _scatter(np.float32, (1, 2, 9, 7)),
    ],
    **{name: [case[name] for case in _BN_CPU] for name in _BN_CPU[0]},
    "ember.ops.conv.Conv2d": [  # numba's gather for channels-last inputs; NumPy's for others
        (C.Conv2d(*_P1), (_X1, _W1), 1e-4),
        (C.Conv2d(*_P2), (_X2, _W2), 1e-4),
        (C.Conv2d(*_P1), (_last(_X1), _W1), 1e-4),
        (C.Conv2d(*_P2), (_last(_X2), _W2), 1e-4),
        (
            C.Conv2d((1, 2), (2, 0), (1, 1), 1),
            (_last(_rand(3, 5, 7, 6, dtype=F64)), _rand(4, 5, 3, 2, dtype=F64)),
            1e-12,
        ),
        (C._GradInputConv(*_P1), (_last(_G1), _W1[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)), 1e-4),
        (C.Conv2d(*_P1), (_X1.astype(BF16), _W1.astype(BF16)), 3e-2),  # in float32, rounded once
    ],
    "ember.ops.elementwise.activations.Relu": [  # -0.0 gives +0.0; NaN stays (numba from
        (ew.Relu(), (_relu_grad_inputs(np.float32, (3, 4, 32, 32))[1],), 0.0),  # 8192 values,
        (ew.Relu(), (_relu_grad_inputs(np.float32, (4, 8, 64, 64))[1],), 0.0),  # threads 65536)
        (ew.Relu(), (_last(_relu_grad_inputs(F64, (2, 3, 40, 40))[1]),), 0.0),
        (ew.Relu(), (_relu_grad_inputs(np.float32, (20000,))[1][::2],), 0.0),
    ],
    "ember.ops.elementwise.activations.ReluGrad": [  # masked: +0.0; a NaN output passes g
        (ew.ReluGrad(), _relu_grad_inputs(np.float32, (3, 4, 5, 6)), 0.0),
        (ew.ReluGrad(), _relu_grad_inputs(np.float32, (4, 8, 64, 64)), 0.0),  # on the threads
        (ew.ReluGrad(), tuple(_last(a) for a in _relu_grad_inputs(F64, (2, 3, 4, 5))), 0.0),
        (ew.ReluGrad(), _relu_grad_inputs(np.float32, (7,)), 0.0),
    ],
    "ember.ops.conv.Conv2dGradWeight": [  # Winograd (opened to small products in the test)
        (C.Conv2dGradWeight((32, 32, 3, 3), *_P1), (_rand(2, 32, 6, 6), _rand(2, 32, 6, 6)), 1e-4),
        (
            C.Conv2dGradWeight((40, 32, 3, 3), (1, 1), (0, 0), (1, 1), 1),
            (_last(_rand(2, 32, 7, 5, dtype=F64)), _rand(2, 40, 5, 3, dtype=F64)),
            1e-12,
        ),
        (C.Conv2dGradWeight(_W1.shape, *_P1), (_X1.astype(BF16), _G1.astype(BF16)), 5e-2),
    ],
    "ember.ops.linalg.MatMul": [  # split by rows, or by matrices of a stack (backend.blas)
        (MatMul(), (_rand(300, 100), _rand(100, 60)), 1e-4),
        (MatMul(), (_rand(100, 300).T, _rand(60, 100, dtype=F64).astype(np.float32).T), 1e-4),
        (MatMul(), (_rand(16, 64, 40, dtype=F64), _rand(16, 40, 70, dtype=F64)), 1e-12),
        (MatMul(), (_rand(3, 400, 50), _rand(50, 30)), 1e-4),
        (MatMul(), (_rand(300, 100, dtype=F64), _rand(100, 60, dtype=F64)), 1e-12),
        # bfloat16 through float32 BLAS (NumPy's own bfloat16 product has no BLAS loop)
        (MatMul(), (_rand(300, 100, dtype=BF16), _rand(100, 60, dtype=BF16)), 2e-2),
        (MatMul(), (_rand(4, 30, 50, dtype=BF16), _rand(50, 20, dtype=BF16)), 2e-2),
    ],
    "ember.ops.broadcast.SumTo": [  # matrix-vector products with ones (ops._layout_sums)
        (SumTo((1, 6, 1, 1)), (_last(_rand(16, 6, 16, 16)),), 1e-4),
        (SumTo((1, 6, 1, 1)), (_rand(16, 6, 16, 16, dtype=F64),), 1e-12),
        (SumTo((1, 1, 16, 16)), (_last(_rand(16, 6, 16, 16)),), 1e-4),
        (SumTo((256, 1)), (_rand(256, 120),), 1e-4),
        (SumTo((64, 1)), (_rand(64, 300, dtype=F64),), 1e-12),
        (SumTo((64, 1, 32)), (_rand(16, 32, 64).transpose(2, 0, 1),), 1e-4),
    ],
    "ember.ops.elementwise.arithmetic.Add": [  # a bias along the fastest axis (ops._layout_sums)
        (ew.Add(), (_last(_rand(16, 6, 16, 16)), _rand(1, 6, 1, 1)), 0.0),
        (ew.Add(), (_rand(6, 1, 1, dtype=F64), _last(_rand(16, 6, 16, 16, dtype=F64))), 0.0),
        (ew.Add(), (_rand(2048, 10), _rand(10)), 0.0),
        (ew.Add(), (_rand(2430, 1, 7, dtype=F64), _rand(1, 1, 7, dtype=F64)), 0.0),
        *_ARITH[ew.Add],
    ],
    # large arrays on numba's threads (ops._arith_numba): the same bits as NumPy's loops
    **{
        f"ember.ops.elementwise.arithmetic.{c.__name__}": _ARITH[c]
        for c in (ew.Sub, ew.Mul, ew.Div)
    },
    "ember.ops.conv.Conv2dGradInput": [  # where it scatters: more outputs than inputs, strides
        (C.Conv2dGradInput(_X3.shape, *_P1), (_G3, _W3), 1e-4),
        (C.Conv2dGradInput(_X3.shape, *_P1), (_last(_G3), _W3), 1e-4),
        (C.Conv2dGradInput(_X4.shape, *_P4), (_G4, _W4), 1e-4),
        (C.Conv2dGradInput(_X5.shape, *_P5), (_G5, _W5), 1e-12),
        # bfloat16 in float32, rounded once (the body rounds each kernel offset's products)
        (C.Conv2dGradInput(_X3.shape, *_P1), ((_G3 / 64).astype(BF16), _W3.astype(BF16)), 3e-2),
    ],
}

_T = np.array([[2, 0, 1], [1, -100, 2]])  # targets of (2, 3, 3, 2) log-probabilities
_NLL = np.log(_rand(2, 3, 3, 2) + 0.1)
CPU_OP_CASES |= {
    "ember.ops.loss.NllLoss": [  # numba, any spatial size; 'mean' over the targets not ignored
        *((NllLoss(r, -100), (_NLL[:, :, :, 0], _T), 1e-6) for r in ("none", "sum", "mean")),
        (NllLoss("mean", None), (_NLL[:, :, 0, 0].copy(), np.array([2, 0])), 1e-6),
        (NllLoss("sum", 1), (_NLL.astype(F64), np.stack([_T, _T], -1)), 1e-12),
    ],
    "ember.ops.loss.NllLossGrad": [
        (NllLossGrad("mean", -100), (np.asarray(0.5, np.float32), _NLL[:, :, :, 0], _T), 1e-6),
        (NllLossGrad("none", -100), (_rand(2, 3), _NLL[:, :, :, 0], _T), 1e-6),
        (
            NllLossGrad("sum", None),
            (np.asarray(2.0), _NLL.astype(F64), np.abs(_T % 3)[..., None].repeat(2, -1)),
            0.0,
        ),
    ],
    "ember.ops.checks.CheckRange": [  # where every target is in range (else the body runs)
        (CheckRange("{value}", 0, 3), (np.array([0, 2, 1]),), 0.0),
        (CheckRange("{value}", -1, 5, -100), (np.arange(-1, 5),), 0.0),
    ],
}

_STEM = ((3, 3), (2, 2), (1, 1), (1, 1), False)  # ResNet's pool
_ODD = ((3, 2), (2, 1), (1, 0), (2, 1), True)  # dilation, ceil mode (a window over the edge)


def _gpu_pool(params, dtype, shape, seed, nan=True):
    """MaxPool2d and MaxPoolScatter cases of one geometry: ties, -inf, and a NaN."""
    x = _rand(*shape, dtype=dtype, seed=seed)
    x[..., 1, :] = 0  # ties
    x[0, 0, 2, 2] = -np.inf
    if nan:
        x[-1, -1, 0, 0] = np.nan
    op = Pl.MaxPool2d(*params)
    g = _rand(*op.infer(Spec(x.shape, None)).shape, dtype=dtype, seed=seed + 1)
    tol = {np.float32: 1e-6, F64: 1e-13}.get(dtype, 1e-2)
    return (op, (x,), tol), (Pl.MaxPoolScatter(*params), (g, x), tol)


_GPU_POOLS = [
    _gpu_pool(((2, 2), (2, 2), (0, 0), (1, 1), False), np.float32, (2, 3, 8, 8), 3),
    _gpu_pool(_STEM, np.float32, (2, 3, 9, 8), 4),
    _gpu_pool(_STEM, F64, (1, 2, 7, 7), 5, nan=False),
    _gpu_pool(_ODD, np.float32, (2, 2, 9, 7), 6),
    _gpu_pool(_STEM, BF16, (2, 2, 6, 6), 7),
]
OP_CASES["ember.ops.pool.MaxPool2d"] = [fwd for fwd, _ in _GPU_POOLS]
OP_CASES["ember.ops.pool.MaxPoolScatter"] = [bwd for _, bwd in _GPU_POOLS]

_TB = np.where(np.arange(5000) % 7 == 3, -100, np.arange(5000) % 5)  # 5 blocks' partials
_NLLB = np.log(np.abs(_rand(5000, 5)) + 0.1)
OP_CASES["ember.ops.loss.NllLoss"] = [  # one launch; partial sums merged by the last block
    *((NllLoss(r, -100), (_NLL[:, :, :, 0].copy(), _T), 1e-6) for r in ("none", "sum", "mean")),
    (NllLoss("mean", None), (_NLL[:, :, 0, 0].copy(), np.array([2, 0])), 1e-6),
    (NllLoss("sum", 1), (_NLL.astype(F64), np.stack([_T, _T], -1)), 1e-12),
    (NllLoss("mean", -100), (_NLLB, _TB), 1e-6),
    (NllLoss("mean", -100), (_NLLB.astype(BF16), _TB), 1e-2),
    (NllLoss("mean", -100), (_NLLB[:2], np.array([-100, -100])), 0.0),  # all ignored: NaN
]
OP_CASES["ember.ops.loss.NllLossGrad"] = [
    (NllLossGrad("mean", -100), (np.asarray(0.5, np.float32), _NLL[:, :, :, 0].copy(), _T), 1e-6),
    (NllLossGrad("none", -100), (_rand(2, 3), _NLL[:, :, :, 0].copy(), _T), 1e-6),
    (NllLossGrad("sum", None), (np.asarray(2.0), _NLL.astype(F64), np.stack([_T % 3] * 2, -1)), 0),
    (NllLossGrad("mean", None), (np.asarray(3.0, np.float32), _NLLB, _TB % 5), 1e-6),
    (NllLossGrad("mean", -100), (np.asarray(1.0, np.float32), _NLLB, _TB), 1e-6),
    (NllLossGrad("mean", -100), (np.asarray(1.5, BF16), _NLLB.astype(BF16), _TB), 0),
]

OP_CASES["ember.ops.checks.CheckRange"] = [  # in range: the flag is False (one block's loop)
    (CheckRange("{value}", 0, 3), (np.arange(600) % 3,), 0.0),
    (CheckRange("{value}", -1, 5, -100), (np.r_[np.arange(-1, 5), -100, 4],), 0.0),
]


def test_the_gpu_range_check_names_the_first_bad_value(xp):
    """One kernel finds a bad element past the first block's share; the error (raised at once
    for a host flag, at the next device read on a GPU) names the first bad one, ignore
    excepted."""
    fn = overrides.registered("cuda")["ember.ops.checks.CheckRange"]
    op = CheckRange("bad {value} in {shape}", 0, 3, -100)
    t = np.r_[np.zeros(300, np.int64), -100, 7, 9]
    with pytest.raises(ember.EmberIndexError, match=r"bad 7 in \[303\]"):
        fn(op, xp, t)
    assert fn(op, xp, t.astype(np.int32)) is NotImplemented  # the body serves other dtypes


def test_one_launch_reductions_leave_their_counters_at_zero(xp):
    """Batch norm's statistics and sums, and layer norm's column sums, finish in one launch:
    each channel's (column tile's) last block merges the partials (blocks run in a shuffled
    order here) and resets its counter, so a second launch gives the same bits."""
    from ember.backend.kernels import batchnorm as kbn
    from ember.backend.kernels.counters import counters

    x, g = _rand(64, 3, 300) + 2, _rand(64, 3, 300, seed=1)
    stats = kbn.moments(xp, x)
    sums = kbn.sums(xp, g, x, stats, 1e-5)
    assert not counters(xp, x, 3)[:3].any()
    np.testing.assert_array_equal(kbn.moments(xp, x), stats)
    np.testing.assert_array_equal(kbn.sums(xp, g, x, stats, 1e-5), sums)
    np.testing.assert_allclose(stats, Nm.BatchMoments().forward(np, x), rtol=1e-5)
    from ember.backend.kernels import sums as ksums  # layer norm's column sums: one tile each

    g2, y2 = _rand(300, 70), _rand(300, 70, seed=2)
    once = ksums.affine_sums(xp, g2, y2, 300, 70)
    assert not counters(xp, y2, 3)[:3].any()
    np.testing.assert_array_equal(ksums.affine_sums(xp, g2, y2, 300, 70), once)


# the CPU's overrides: compiled graphs' fused elementwise programs (numba, or NumPy out= steps),
# max pooling, batch normalization and convolution (numba)
CPU_CASES = {"ember.static.passes.fuse.FusedElementwise"} | set(CPU_OP_CASES)


def test_every_override_is_checked_against_its_reference():
    assert set(overrides.registered("cuda")) == set(OP_CASES) | CUDA_UPDATES
    assert set(overrides.registered("cpu")) == CPU_CASES | set(UPDATE_CASES)


@pytest.mark.parametrize("name", sorted(CPU_CASES))
def test_cpu_override_matches_the_forward(name, monkeypatch):  # the optimizers' are below
    from ember.backend import jit as _jit

    monkeypatch.setattr(_jit, "_mode", "sync" if _jit.mode() == "auto" else _jit.mode())
    _jit.wait()  # a kernel an earlier test asked for may still compile in the background
    if name == "ember.ops.conv.Conv2dGradWeight":  # Winograd's, from a forward pass's tiles
        monkeypatch.setattr(_blas, "one_thread", lambda: True)
        monkeypatch.setattr(_winograd, "MIN_WORK", 0)
        monkeypatch.setattr(_winograd, "MIN_OUTPUTS", 0)
        for op, (x, _), _ in CPU_OP_CASES[name]:
            w = np.zeros(op.w_shape, x.dtype)
            out = _winograd.conv3x3(np, x, w, op.padding, keep=True)
            if out is not NotImplemented:  # bfloat16: the override widens to float32 first
                C._keep(x, ("winograd", op.padding), out[1])
    if name == "ember.ops.linalg.MatMul":  # split over two threads wherever numba serves
        monkeypatch.setattr(_config.settings, "num_threads", 2)
    fn = overrides.registered("cpu")[name]
    for op, arrays, tol in {**OP_CASES, **CPU_OP_CASES}[name]:
        want = op.forward(np, *arrays)
        got = fn(op, np, *(arrays if "GradWeight" in name else [a.copy(order="K") for a in arrays]))
        if got is NotImplemented:  # numba's kernels decline only where numba is off
            assert not _jit.enabled(), op
            continue
        assert got.dtype == want.dtype and got.shape == want.shape, op
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(op))


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_override_matches_the_forward(name, xp, fake_cudnn):
    fn = overrides.registered("cuda")[name]
    for op, arrays, tol in OP_CASES[name]:
        assert overrides.qualname(type(op)) == name
        got = fn(op, xp, *arrays)
        assert got is not NotImplemented, f"{op} declined on the emulated GPU"
        want = op.forward(np, *arrays)
        assert got.dtype == want.dtype and got.shape == want.shape, op
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, err_msg=str(op)
        )
    if "conv" in name or "attention" in name:
        assert fake_cudnn.log, "cuDNN was not asked"


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_override_declines_or_matches_without_kernels(name, fake_cudnn, monkeypatch):
    """On an array module that builds no kernels (the fake CuPy) an override declines, or
    computes what the forward does (MatMul: cuBLAS is CuPy's own matmul)."""
    from ember.backend.kernels import conv as kconv

    monkeypatch.setattr(kconv, "fused", lambda xp: False)
    fn = overrides.registered("cuda")[name]
    for op, arrays, tol in OP_CASES[name]:
        got = fn(op, np, *arrays)
        if got is not NotImplemented:
            want = op.forward(np, *arrays)
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), tol, tol)
        got = overrides.run(op, np, *arrays)
        assert got.dtype == op.forward(np, *arrays).dtype


def _updates(xp, device_type, cls, group, dtype, steps=3):
    """Run the override and the rule (ember ops) side by side: same parameter, state and
    gradients, the step count advanced as ``Optimizer.step`` does."""
    fn = overrides.table(device_type, "update")[cls]  # the override of the rule cls runs
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal((7, 5)).astype(dtype)
    w = ember.nn.Parameter(ember.tensor(p0.copy()))
    opt = cls([w], **group)
    group = opt.param_groups[0]
    p, p_ref = p0.copy(), ember.tensor(p0.copy())
    state, st_ref = opt.init_state(w, group), opt.init_state(w, group)
    declined = 0
    for _ in range(steps):
        g = rng.standard_normal(p.shape).astype(dtype)
        for st in (state, st_ref):
            if "step" in st:
                st["step"]._data += 1
        opt._rule(p_ref, ember.tensor(g), st_ref, group)
        if fn(opt, xp, p, g, state, group) is NotImplemented:
            declined += 1
            opt._rule(ember.from_numpy(p), ember.tensor(g), state, group)
    return p, state, p_ref.numpy(), st_ref, declined


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "device_type,name",
    [("cpu", n) for n in sorted(UPDATE_CASES)] + [("cuda", n) for n in sorted(CUDA_UPDATES)],
)
def test_update_override_matches_the_rule_bit_for_bit(device_type, name, dtype, request):
    xp = np if device_type == "cpu" else request.getfixturevalue("xp")
    for cls, group in UPDATE_CASES[name]:
        p, state, p_ref, st_ref, declined = _updates(xp, device_type, cls, group, dtype)
        first_momentum = device_type == "cuda" and cls is ember.optim.SGD and group.get("momentum")
        assert declined == (1 if first_momentum else 0)  # SGD copies g into a new buffer first
        np.testing.assert_array_equal(p, p_ref, err_msg=f"{cls.__name__} {group}")
        assert set(state) == set(st_ref)
        for k, v in st_ref.items():
            if v is None:
                assert state[k] is None, k
            else:
                np.testing.assert_array_equal(state[k].numpy(), v.numpy(), err_msg=k)


# -- the one lookup -------------------------------------------------------------------------


@pytest.fixture
def spy():
    """Register a recording override for a class on cuda (``decline=True``: it declines); the
    registrations it replaced come back afterwards."""
    calls: list = []
    registered = []

    def install(target, decline=False, device_type="cuda"):
        key = target if isinstance(target, str) else overrides.qualname(target)
        registered.append((target, device_type, overrides.registered(device_type).get(key)))

        @overrides.register(target, device_type)
        def _spy(obj, xp, *args):
            calls.append((type(obj).__name__, overrides.device_type(xp)))
            if decline:
                return NotImplemented
            if hasattr(obj, "forward") and not hasattr(obj, "param_groups"):
                return obj.forward(xp, *args) * 0 + 7  # recognisably the override's result
            return None  # an update rule: "done" (nothing changed)

        return calls

    yield install
    for target, device_type, previous in reversed(registered):
        overrides.unregister(target, device_type)
        if previous is not None:
            overrides.register(target, device_type)(previous)


def test_apply_runs_the_override_of_the_inputs_device(fake_cuda, spy):
    calls = spy(Exp)
    x = ember.zeros(3)
    assert apply(Exp(), x).tolist() == [1.0, 1.0, 1.0] and calls == []  # cpu: the forward
    y = apply(Exp(), x.to("cuda"))
    assert calls == [("Exp", "cuda")] and y.cpu().tolist() == [7.0, 7.0, 7.0]


def test_a_declining_override_falls_back_to_the_forward(fake_cuda, spy):
    calls = spy(Exp, decline=True)
    y = apply(Exp(), ember.zeros(2).to("cuda"))
    assert calls and y.cpu().tolist() == [1.0, 1.0]


def test_subclasses_inherit_an_override_unless_they_define_their_own_body():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Inherits(Exp):
        pass

    @dataclass(frozen=True)
    class Own(Exp):
        def forward(self, xp, x):
            return x

    table = overrides.table("cuda")
    assert table[LayerNormalize] is overrides.registered("cuda")["ember.ops.norm.LayerNormalize"]
    assert table[Inherits] is table[Exp] is None
    assert table[Own] is None
    rule = overrides.table("cuda", "update")
    assert rule[ember.optim.AdamW] is rule[ember.optim.Adam] is not None
    assert rule[ember.optim.NAdam] is None  # its own rule: no kernel


def test_registering_again_replaces_and_refreshes_the_tables(spy):
    table = overrides.table("cpu")
    assert table[Exp] is None
    spy(Exp, device_type="cpu")
    assert table[Exp] is not None
    assert overrides.run(Exp(), np, np.zeros(2)).tolist() == [7.0, 7.0]
    assert apply(Exp(), ember.zeros(2)).tolist() == [7.0, 7.0]  # apply looks on the CPU now
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        overrides.register(Exp, "tpu")


def test_graph_plans_run_the_override(fake_cuda, spy):
    from ember.static import Graph
    from ember.static.executor import Plan

    calls = spy(Exp)
    g = Graph()
    x = g.add_input((2,), np.float32)
    y = g.add_node(Exp(), [x], (2,), np.float32)
    plan = Plan(g, [y])
    out, _ = plan.run([np.zeros(2, np.float32)], [])
    assert out[0].tolist() == [1.0, 1.0] and calls == []
    out, _ = plan.run([ember.zeros(2).to("cuda")._data], [])
    assert calls == [("Exp", "cuda")] and float(out[0][0]) == 7.0


def test_compiled_step_runs_the_override(fake_cuda, spy):
    calls = spy(Softmax)
    f = ember.compile(lambda t: F.softmax(t, 1), mode="max-autotune-no-cudagraphs")
    y = f(ember.randn(2, 3).to("cuda"))
    assert calls and ("Softmax", "cuda") in calls and float(y.cpu()[0, 0]) == 7.0


def test_folding_uses_the_override(spy):
    from ember.static import Graph
    from ember.static.passes.fold import constant_folding

    calls = spy(Exp, device_type="cpu")
    g = Graph()
    c = g.add_constant(np.zeros(2, np.float32))
    g.outputs.append(g.add_node(Exp(), [c], (2,), np.float32))
    folded = constant_folding(g)
    assert calls == [("Exp", "cpu")] and folded.outputs[0].data.tolist() == [7.0, 7.0]


def test_optimizer_steps_run_the_update_override(fake_cuda, spy):
    calls = spy("ember.optim.sgd.SGD")
    w = ember.nn.Parameter(ember.ones(3).to("cuda"))
    opt = ember.optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    assert calls == [("SGD", "cuda")] and w.detach().cpu().tolist() == [1.0, 1.0, 1.0]
    wc = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.SGD([wc], lr=0.5)
    (wc * wc).sum().backward()
    opt.step()  # on the CPU: the NumPy rule
    assert len(calls) == 1 and wc.detach().tolist() == [0.0, 0.0, 0.0]


def test_optimizer_override_declines_to_the_rule(fake_cuda, spy):
    calls = spy("ember.optim.adam.Adam", decline=True)
    w = ember.nn.Parameter(ember.ones(3).to("cuda"))
    opt = ember.optim.AdamW([w], lr=0.1)  # inherits Adam's rule, hence its override
    (w * w).sum().backward()
    opt.step()
    assert calls == [("AdamW", "cuda")]
    assert np.allclose(w.detach().cpu().numpy(), 0.9 - 0.1 * 0.01 * 1.0, atol=1e-6)


def test_layer_norm_is_one_graph_on_every_device(fake_cuda):
    """F.layer_norm applies LayerNormalize everywhere (no device-dependent graph)."""
    x = ember.randn(4, 3, 5)
    graphs = []
    for dev in ("cpu", "cuda"):
        y = F.layer_norm(x.to(dev).requires_grad_(), (3, 5))
        assert y._node.op == LayerNormalize(2, 1e-5)
        graphs.append(y._node.op)
    assert graphs[0] == graphs[1]


def test_the_spies_gave_back_what_they_replaced():
    """(Runs after the spy tests.) Every registered override is ember's own again."""
    assert set(overrides.registered("cuda")) == set(OP_CASES) | CUDA_UPDATES
    for name, fn in overrides.registered("cuda").items():
        assert fn.__module__.startswith("ember."), (name, fn)
    assert set(overrides.registered("cpu")) == CPU_CASES | set(UPDATE_CASES)


# -- layer normalization's backward op (CUDA row kernel) and both layer-norm ops' numba
# kernels: cases added here, checked by the tests above through the functions below ----------


def _ln_grad(shape, axes, dtype, eps=1e-5):
    x, g = _rand(*shape, dtype=dtype) + 1, _rand(*shape, dtype=dtype, seed=1)
    return Nm.LayerNormGradInput(axes, eps), (g, x)


_LN_GRAD_CUDA = {
    "ember.ops.norm.LayerNormGradInput": [
        (*_ln_grad((4, 33), 1, np.float32), 2e-6),
        (*_ln_grad((2, 3, 5, 7), 2, F64, 1e-3), 1e-12),
        (*_ln_grad((3, 40), 1, BF16), 3e-2),
        (*_ln_grad((2, 900), 1, np.float32), 2e-6),
    ],
}
_LN_CPU = {
    "ember.ops.norm.LayerNormalize": [
        (LayerNormalize(1, 1e-5), (_rand(4, 33),), 2e-6),
        (LayerNormalize(2, 1e-3), (_rand(2, 3, 5, 7, dtype=F64),), 1e-12),
        (LayerNormalize(1, 1e-5), (_rand(5, 7).T,), 2e-6),  # not contiguous: a copy
    ],
    "ember.ops.norm.LayerNormGradInput": [
        (*_ln_grad((4, 33), 1, np.float32), 2e-6),
        (*_ln_grad((2, 3, 5, 7), 2, F64, 1e-3), 1e-12),
    ],
    "ember.ops.norm.Affine": [  # layer norm's (trailing dims) and group norm's (dim 1)
        (Nm.Affine(2, True, True), (_rand(4, 3, 5, 7), _rand(5, 7), _rand(5, 7)), 1e-6),
        (Nm.Affine(1, True, False), (_rand(2, 3, 4, 5, dtype=F64), _rand(3, dtype=F64)), 1e-13),
        (Nm.Affine(1, False, True), (_rand(2, 3, 4), _rand(3)), 1e-6),
    ],
    "ember.ops.norm.AffineSums": [
        (Nm.AffineSums(1, 1), (_rand(6, 33, seed=1), _rand(6, 33)), 1e-4),
        (Nm.AffineSums(1, 1), (_rand(2, 3, 4, 5, seed=1), _rand(2, 3, 4, 5)), 1e-4),
        (
            Nm.AffineSums(2, 2),
            (_rand(2, 3, 4, 5, dtype=F64, seed=1), _rand(2, 3, 4, 5, dtype=F64)),
            1e-12,
        ),
    ],
}
OP_CASES.update(_LN_GRAD_CUDA)
CPU_OP_CASES.update(_LN_CPU)
CPU_CASES |= set(_LN_CPU)


@pytest.mark.parametrize("name", sorted(_LN_GRAD_CUDA))
def test_layer_norm_grad_cuda_override_matches_the_forward(name, xp, fake_cudnn, monkeypatch):
    test_op_override_matches_the_forward(name, xp, fake_cudnn)
    test_op_override_declines_or_matches_without_kernels(name, fake_cudnn, monkeypatch)


@pytest.mark.parametrize("name", sorted(_LN_CPU))
def test_layer_norm_cpu_overrides_match_the_forward(name, monkeypatch):
    from ember.backend import jit as _jit

    _jit.wait()  # a compile an earlier test started in the background
    test_cpu_override_matches_the_forward(name, monkeypatch)


@pytest.mark.parametrize("name", ["Relu", "ReluGrad"])
def test_relu_overrides_keep_the_bodies_bits(name, xp):
    """+0.0 where masked (from -0.0 too), NaN passed through: compared bit for bit."""
    qualname = f"ember.ops.elementwise.activations.{name}"
    fn = overrides.registered("cuda")[qualname]
    for op, arrays, _ in OP_CASES[qualname]:
        got, want = np.asarray(fn(op, xp, *arrays)), op.forward(np, *arrays)
        bits = np.dtype(f"uint{8 * want.dtype.itemsize}")
        np.testing.assert_array_equal(got.view(bits), want.view(bits), err_msg=str(arrays[0].dtype))


def test_cast_override_rounds_as_the_body_bit_for_bit(xp):
    """Each value converted to the body's bits (ties to even, overflow to infinity, float16's
    subnormals, signed zeros); a NaN stays a NaN (its payload is the hardware's), also into
    ``out`` (``copy_``)."""
    fn = overrides.registered("cuda")["ember.ops.elementwise.cast.Cast"]
    for op, (x,), _ in OP_CASES["ember.ops.elementwise.cast.Cast"]:
        want = op.forward(np, x)
        for got in (fn(op, xp, x), fn(op, xp, x, out=np.empty_like(want))):
            bits = np.dtype(f"uint{8 * want.dtype.itemsize}")
            nan = np.isnan(want.astype(np.float32))
            np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
            np.testing.assert_array_equal(got.view(bits)[~nan], want.view(bits)[~nan], str(op))


@pytest.mark.parametrize(
    "x,dtype,out",
    [
        (_rand(4, 8, dtype=F64), ember.bfloat16, None),  # float64: CuPy's own conversion
        (_rand(4, 8, dtype=BF16), ember.float16, None),  # between the 16-bit types
        (_rand(4, 8), ember.int32, None),
        (_rand(8, 4).T, ember.bfloat16, None),  # astype keeps a view's memory order
        (_rand(4, 8), ember.bfloat16, np.empty((8, 4), BF16).T),
        (_rand(4, 8), ember.bfloat16, np.empty((1, 8), BF16)),  # a broadcasting copy_
        (_rand(0, 8), ember.bfloat16, None),
    ],
)
def test_cast_override_declines_what_it_does_not_serve(xp, x, dtype, out):
    fn = overrides.registered("cuda")["ember.ops.elementwise.cast.Cast"]
    assert fn(ew.Cast(dtype), xp, x, out=out) is NotImplemented
