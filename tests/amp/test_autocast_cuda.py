"""ember.autocast("cuda") (float16) output dtypes against PyTorch's CUDA autocast policy, for a
table of functions, with float32 and with float16 inputs.

The reference is torch itself: its AutocastCUDA kernels run on fake cuda tensors
(``_torch_cuda.cuda_autocast``), so each function's dtype is what ``autocast_mode.cpp`` and
torch's composites make of it. That is the documented "CUDA Op-Specific Behavior" of
https://pytorch.org/docs/2.13/amp.html#cuda-ops-that-can-autocast-to-float16 (``linear``,
``matmul``, convolutions, RNN cells...), "...-to-float32" (``softmax``, ``layer_norm``,
``exp``, ``sum``, ``pow``, losses...) and "...-that-promote-to-the-widest-input-type"
(``addcmul``, ``atan2``, ``cross``, ``dot``...); every other function runs in its inputs'
dtypes (``gelu``, ``mean``, ``var``), unless torch builds it from listed ones (``square`` is
``pow``). ember runs on the strict fake CuPy.
"""

import numpy as np
import pytest
import torch

import ember

from ._torch_cuda import cuda_autocast

RNG = np.random.default_rng(1)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


A, B, W, BIAS = _arr(4, 5), _arr(5, 3), _arr(3, 5), _arr(3)
X4, CW, B3, C3 = _arr(2, 3, 6, 6), _arr(4, 3, 3, 3), _arr(2, 4, 5), _arr(2, 5, 3)
V, U, V3 = _arr(5), _arr(4), _arr(4, 3)
P = np.abs(_arr(4, 3)) / 4 + 0.1
T = np.array([0, 2, 1, 0])

# name -> f(lib, F, t): t makes the library's cuda tensor of an array (floats in the dtype
# under test, integers as they are)
CASES = {
    "linear": lambda L, F, t: F.linear(t(A), t(W), t(BIAS)),
    "matmul": lambda L, F, t: t(A) @ t(B),
    "mm": lambda L, F, t: L.mm(t(A), t(B)),
    "bmm": lambda L, F, t: L.bmm(t(B3), t(C3)),
    "addmm": lambda L, F, t: L.addmm(t(U[:, None] * B[0]), t(A), t(B)),
    "baddbmm": lambda L, F, t: L.baddbmm(t(C3[:, :4]), t(B3), t(C3)),
    "mv": lambda L, F, t: L.mv(t(A), t(V)),
    "addmv": lambda L, F, t: L.addmv(t(U), t(A), t(V)),
    "addr": lambda L, F, t: L.addr(t(A), t(U), t(V)),
    "outer": lambda L, F, t: L.outer(t(U), t(V)),
    "dot": lambda L, F, t: L.dot(t(V), t(V)),
    "einsum": lambda L, F, t: L.einsum("ij,jk->ik", t(A), t(B)),
    "tensordot": lambda L, F, t: L.tensordot(t(A), t(B), 1),
    "conv2d": lambda L, F, t: F.conv2d(t(X4), t(CW)),
    "conv1d": lambda L, F, t: F.conv1d(t(X4[:, :, 0]), t(CW[:, :, 0])),
    "conv_transpose2d": lambda L, F, t: F.conv_transpose2d(t(X4), t(CW[:3, :2])),
    "prelu": lambda L, F, t: F.prelu(t(A), t(np.float32([0.2]))),
    "sdpa": lambda L, F, t: F.scaled_dot_product_attention(t(B3), t(B3), t(B3)),
    "bilinear": lambda L, F, t: F.bilinear(t(A), t(A), t(np.resize(CW, (3, 5, 5)))),
    "softmax": lambda L, F, t: F.softmax(t(A), 1),
    "log_softmax": lambda L, F, t: F.log_softmax(t(A), 1),
    "softmin": lambda L, F, t: F.softmin(t(A), 1),
    "layer_norm": lambda L, F, t: F.layer_norm(t(A), (5,)),
    "group_norm": lambda L, F, t: F.group_norm(t(X4), 3),
    "batch_norm": lambda L, F, t: F.batch_norm(t(X4), None, None, training=True),
    "instance_norm": lambda L, F, t: F.instance_norm(t(X4)),
    "normalize": lambda L, F, t: F.normalize(t(A)),
    "cosine_similarity": lambda L, F, t: F.cosine_similarity(t(A), t(A[::-1].copy())),
    "exp": lambda L, F, t: t(A).exp(),
    "expm1": lambda L, F, t: t(A).expm1(),
    "log": lambda L, F, t: t(P).log(),
    "log1p": lambda L, F, t: t(P).log1p(),
    "log2": lambda L, F, t: t(P).log2(),
    "reciprocal": lambda L, F, t: t(P).reciprocal(),
    "rsqrt": lambda L, F, t: t(P).rsqrt(),
    "sqrt": lambda L, F, t: t(P).sqrt(),
    "square": lambda L, F, t: t(A).square(),
    "pow_scalar": lambda L, F, t: t(A) ** 2,
    "rpow": lambda L, F, t: 2 ** t(A),
    "rdiv": lambda L, F, t: 2 / t(P),
    "div": lambda L, F, t: t(A) / t(P[:, :1] + 1),
    "div_scalar": lambda L, F, t: t(A) / 3,
    "sinh": lambda L, F, t: t(A).sinh(),
    "tan": lambda L, F, t: t(A).tan(),
    "sin": lambda L, F, t: t(A).sin(),
    "tanh": lambda L, F, t: t(A).tanh(),
    "sigmoid": lambda L, F, t: t(A).sigmoid(),
    "erf": lambda L, F, t: t(A).erf(),
    "sum": lambda L, F, t: t(A).sum(),
    "mean": lambda L, F, t: t(A).mean(),
    "mean_dim": lambda L, F, t: t(A).mean(1),
    "var": lambda L, F, t: t(A).var(),
    "std": lambda L, F, t: t(A).std(1),
    "prod": lambda L, F, t: t(P).prod(),
    "cumsum": lambda L, F, t: t(A).cumsum(1),
    "cumprod": lambda L, F, t: t(P).cumprod(1),
    "logsumexp": lambda L, F, t: t(A).logsumexp(1),
    "norm": lambda L, F, t: t(A).norm(),
    "vector_norm": lambda L, F, t: L.linalg.vector_norm(t(A)),
    "dist": lambda L, F, t: L.dist(t(A), t(A[::-1].copy())),
    "inner": lambda L, F, t: L.inner(t(A), t(A)),
    "cdist": lambda L, F, t: L.cdist(t(A), t(A)),
    "amax": lambda L, F, t: t(A).amax(1),
    "relu": lambda L, F, t: F.relu(t(A)),
    "gelu": lambda L, F, t: F.gelu(t(A)),
    "gelu_tanh": lambda L, F, t: F.gelu(t(A), approximate="tanh"),
    "silu": lambda L, F, t: F.silu(t(A)),
    "elu": lambda L, F, t: F.elu(t(A)),
    "selu": lambda L, F, t: F.selu(t(A)),
    "celu": lambda L, F, t: F.celu(t(A)),
    "softplus": lambda L, F, t: F.softplus(t(A)),
    "mish": lambda L, F, t: F.mish(t(A)),
    "logsigmoid": lambda L, F, t: F.logsigmoid(t(A)),
    "hardswish": lambda L, F, t: F.hardswish(t(A)),
    "softsign": lambda L, F, t: F.softsign(t(A)),
    "leaky_relu": lambda L, F, t: F.leaky_relu(t(A)),
    "glu": lambda L, F, t: F.glu(t(V3[:, :2])),
    "atan2": lambda L, F, t: L.atan2(t(A), t(A[::-1].copy())),
    "addcmul": lambda L, F, t: L.addcmul(t(A), t(A), t(A)),
    "addcdiv": lambda L, F, t: L.addcdiv(t(A), t(A), t(P[:, :1] + 1)),
    "cross": lambda L, F, t: L.linalg.cross(t(V3), t(V3[::-1].copy())),
    "lerp": lambda L, F, t: L.lerp(t(A), t(A[::-1].copy()), 0.3),
    "where": lambda L, F, t: L.where(t(A) > 0, t(A), t(A[::-1].copy())),
    "mse_loss": lambda L, F, t: F.mse_loss(t(A), t(A[::-1].copy())),
    "l1_loss": lambda L, F, t: F.l1_loss(t(A), t(A[::-1].copy())),
    "smooth_l1_loss": lambda L, F, t: F.smooth_l1_loss(t(A), t(A * 2)),
    "cross_entropy": lambda L, F, t: F.cross_entropy(t(P), t(T)),
    "nll_loss": lambda L, F, t: F.nll_loss(t(P), t(T)),
    "kl_div": lambda L, F, t: F.kl_div(t(P), t(P[::-1].copy()), reduction="batchmean"),
    "bce_with_logits": lambda L, F, t: F.binary_cross_entropy_with_logits(t(A), t(np.abs(A) / 3)),
    "dropout_eval": lambda L, F, t: F.dropout(t(A), 0.5, training=False),
    "cat": lambda L, F, t: L.cat([t(A), t(A)]),
}


def _ember(name, float_dtype):
    def t(a):
        a = np.asarray(a)
        return ember.tensor(a.astype(float_dtype) if a.dtype.kind == "f" else a, device="cuda")

    with ember.autocast("cuda", dtype=ember.float16):
        return CASES[name](ember, ember.nn.functional, t)


def _torch(name, float_dtype):
    with cuda_autocast(torch.float16) as fake:

        def t(a):
            a = np.asarray(a)
            return fake(a.astype(float_dtype) if a.dtype.kind == "f" else a)

        return CASES[name](torch, torch.nn.functional, t).dtype


@pytest.mark.parametrize("float_dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_dtype_matches_torch_cuda_autocast(fake_cuda, name, float_dtype):
    want = str(_torch(name, float_dtype)).split(".")[1]
    got = _ember(name, float_dtype)
    assert got.device.type == "cuda"
    assert got.dtype.name == want, f"{name}({float_dtype}): ember {got.dtype.name}, torch {want}"
