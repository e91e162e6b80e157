"""ember.autocast against torch.autocast("cpu", torch.bfloat16): output dtypes and values for a
table of ~45 ops, nesting, ineligible forms, gradient dtypes, the cast cache, threads."""

import threading

import numpy as np
import pytest
import torch

import ember
from ember.functions.inplace import inplace_method

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


A, B, W, BIAS = _arr(4, 5), _arr(5, 3), _arr(3, 5), _arr(3)
X4, CW, B3, C3 = _arr(2, 3, 6, 6), _arr(4, 3, 3, 3), _arr(2, 4, 5), _arr(2, 5, 3)
P = np.abs(_arr(4, 3)) / 4 + 0.1
T = np.array([0, 2, 1, 0])
V, U = _arr(5), _arr(4)

# name -> f(lib, F, t) where t converts a NumPy array to the library's tensor
CASES = {
    "mm": lambda L, F, t: L.mm(t(A), t(B)),
    "matmul": lambda L, F, t: t(A) @ t(B),
    "bmm": lambda L, F, t: L.bmm(t(B3), t(C3)),
    "linear": lambda L, F, t: F.linear(t(A), t(W), t(BIAS)),
    "addmm": lambda L, F, t: L.addmm(t(U[:, None] * B[0]), t(A), t(B)),
    "baddbmm": lambda L, F, t: L.baddbmm(t(C3[:, :4]), t(B3), t(C3)),
    "conv2d": lambda L, F, t: F.conv2d(t(X4), t(CW), t(BIAS[:3].repeat(2)[:4])),
    "conv1d": lambda L, F, t: F.conv1d(t(X4[:, :, 0]), t(CW[:, :, 0])),
    "conv_transpose2d": lambda L, F, t: F.conv_transpose2d(t(X4), t(CW[:3, :2])),
    "einsum": lambda L, F, t: L.einsum("ij,jk->ik", t(A), t(B)),
    "tensordot": lambda L, F, t: L.tensordot(t(A), t(B), 1),
    "inner": lambda L, F, t: L.inner(t(A), t(A)),
    "mv": lambda L, F, t: L.mv(t(A), t(V)),
    "dot": lambda L, F, t: L.dot(t(V), t(V)),
    "outer": lambda L, F, t: L.outer(t(U), t(V)),
    "addmv": lambda L, F, t: L.addmv(t(U), t(A), t(V)),
    "addr": lambda L, F, t: L.addr(t(A), t(U), t(V)),
    "bilinear": lambda L, F, t: F.bilinear(t(A), t(A), t(np.resize(CW, (3, 5, 5)))),
    "prelu": lambda L, F, t: F.prelu(t(A), t(np.float32([0.2]))),
    "sdpa": lambda L, F, t: F.scaled_dot_product_attention(t(B3), t(B3), t(B3)),
    "softmax": lambda L, F, t: F.softmax(t(A), 1),
    "log_softmax": lambda L, F, t: F.log_softmax(t(A), 1),
    "layer_norm": lambda L, F, t: F.layer_norm(t(A), (5,)),
    "group_norm": lambda L, F, t: F.group_norm(t(X4), 3),
    "exp": lambda L, F, t: t(A).exp(),
    "sum": lambda L, F, t: t(A).sum(),
    "relu": lambda L, F, t: F.relu(t(A)),
    "gelu": lambda L, F, t: F.gelu(t(A)),
    "mse_loss": lambda L, F, t: F.mse_loss(t(P), t(P[::-1].copy())),
    "l1_loss": lambda L, F, t: F.l1_loss(t(P), t(P[::-1].copy())),
    "smooth_l1_loss": lambda L, F, t: F.smooth_l1_loss(t(A), t(A * 2)),
    "huber_loss": lambda L, F, t: F.huber_loss(t(A), t(A * 2)),
    "cross_entropy": lambda L, F, t: F.cross_entropy(t(P), L.tensor(T)),
    "nll_loss": lambda L, F, t: F.nll_loss(t(P), L.tensor(T)),
    "binary_cross_entropy": lambda L, F, t: F.binary_cross_entropy(t(P), t(P[::-1].copy())),
    "bce_with_logits": lambda L, F, t: F.binary_cross_entropy_with_logits(t(A), t(np.abs(A) / 3)),
    "kl_div": lambda L, F, t: F.kl_div(t(P).log(), t(P[::-1].copy()), reduction="batchmean"),
    "soft_margin_loss": lambda L, F, t: F.soft_margin_loss(t(A), t(np.sign(A))),
    "cosine_embedding_loss": lambda L, F, t: F.cosine_embedding_loss(
        t(A), t(A[::-1].copy()), t(np.sign(U))
    ),
    "prod": lambda L, F, t: t(P).prod(),
    "cdist": lambda L, F, t: L.cdist(t(A), t(A)),
    "inverse": lambda L, F, t: L.inverse(t(np.eye(3, dtype=np.float32) * 2 + P[:3])),
    "rnn_cell": lambda L, F, t: _cell(L, t, "RNNCell"),
    "gru_cell": lambda L, F, t: _cell(L, t, "GRUCell"),
    "lstm_cell": lambda L, F, t: _cell(L, t, "LSTMCell")[1],
    "mha": lambda L, F, t: _mha(L, t),
    "cat_mixed": lambda L, F, t: L.cat([t(A).bfloat16(), t(A)]),
    "softmax_of_bf16": lambda L, F, t: F.softmax(t(A).bfloat16(), 1),
    "mm_float64": lambda L, F, t: L.mm(t(A).double(), t(B).double()),
    "mm_int": lambda L, F, t: L.mm(t(A).long(), t(B).long()),
    "sum_dtype": lambda L, F, t: t(A).sum(dtype=L.float64),
}


def _cell(L, t, kind):
    cell = getattr(L.nn, kind)(5, 3)
    with L.no_grad():
        for i, p in enumerate(cell.parameters()):
            p.copy_(t(np.resize(B.ravel() * 0.3 + 0.05 * i, tuple(p.shape))))
    return cell(t(A))


def _mha(L, t):
    m = L.nn.MultiheadAttention(5, 1, batch_first=True)
    with L.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(t(np.resize(A.ravel() * 0.2 + i * 0.01, tuple(p.shape))))
    return m(t(B3), t(B3), t(B3))[0]


def _run(lib, name):
    F = lib.nn.functional
    with lib.autocast("cpu", dtype=lib.bfloat16):
        return CASES[name](lib, F, lambda a: lib.tensor(np.ascontiguousarray(a)))


def _numpy(x):
    return x.detach().float().numpy() if x.is_floating_point() else x.numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_dtype_and_values_match_torch_cpu_autocast(name):
    e, t = _run(ember, name), _run(torch, name)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    tol = 3e-2 if t.dtype == torch.bfloat16 else 2e-2  # bfloat16 has 8 significant bits
    np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=tol, atol=tol * np.abs(_numpy(t)).max())


def test_outside_a_region_nothing_changes():
    assert _run_plain("linear").dtype is ember.float32
    assert not ember.is_autocast_enabled("cpu")


def _run_plain(name):
    return CASES[name](ember, ember.nn.functional, lambda a: ember.tensor(a))


def test_nesting_and_inner_disable():
    a, b = ember.tensor(A), ember.tensor(B)
    with ember.autocast("cpu"):
        assert (a @ b).dtype is ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert (a @ b).dtype is ember.float32 and not ember.is_autocast_enabled("cpu")
            with ember.autocast("cpu", dtype=ember.float16):
                assert (a @ b).dtype is ember.float16
                assert ember.get_autocast_dtype("cpu") is ember.float16
        assert (a @ b).dtype is ember.bfloat16 and ember.get_autocast_dtype("cpu") is ember.bfloat16
        with ember.autocast("cuda"):  # another device type: the CPU policy holds
            assert (a @ b).dtype is ember.bfloat16
    assert (a @ b).dtype is ember.float32


def test_aliases_and_decorator():
    a, b = ember.tensor(A), ember.tensor(B)
    with ember.cpu.amp.autocast():
        assert (a @ b).dtype is ember.bfloat16
    with ember.amp.autocast("cpu", dtype=ember.float16):
        assert (a @ b).dtype is ember.float16

    @ember.autocast("cpu")
    def f(x, y):
        return x @ y

    assert f(a, b).dtype is ember.bfloat16 and (a @ b).dtype is ember.float32
    assert ember.cuda.amp.autocast().fast_dtype is ember.float16


def test_unsupported_dtype_warns_like_torch_and_disables():
    with pytest.warns(UserWarning, match="Disabling autocast"):
        ctx = ember.autocast("cpu", dtype=ember.float64)
    with ctx:
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32
    with pytest.raises(ember.EmberError, match="device_type"):
        ember.autocast(0)


def test_inplace_forms_keep_float32():
    a, b = ember.tensor(A), ember.tensor(B)
    out = ember.zeros(4, 3)
    ref = torch.zeros(4, 3)
    addmm_ = inplace_method(ember.addmm, "addmm_")  # how ember makes an in-place form
    with ember.autocast("cpu"):
        addmm_(out, a, b)
    with torch.autocast("cpu", torch.bfloat16):
        ref.addmm_(torch.tensor(A), torch.tensor(B))
    assert out.dtype is ember.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)  # not bf16 math


def test_gradients_come_back_in_the_parameters_dtype():
    w = ember.nn.Parameter(ember.tensor(W))
    bias = ember.nn.Parameter(ember.tensor(BIAS))
    tw = torch.nn.Parameter(torch.tensor(W))
    tb = torch.nn.Parameter(torch.tensor(BIAS))
    with ember.autocast("cpu"):
        y = ember.nn.functional.linear(ember.tensor(A), w, bias)
        loss = ember.nn.functional.cross_entropy(y, ember.tensor(T))
    with torch.autocast("cpu", torch.bfloat16):
        ty = torch.nn.functional.linear(torch.tensor(A), tw, tb)
        tloss = torch.nn.functional.cross_entropy(ty, torch.tensor(T))
    loss.backward()
    tloss.backward()
    assert w.grad.dtype is ember.float32 and bias.grad.dtype is ember.float32
    assert str(y.grad_fn is not None) == "True"
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=3e-2, atol=1e-2)
    np.testing.assert_allclose(float(loss), tloss.item(), rtol=1e-2)


def test_backward_runs_with_autocast_off():
    x = ember.tensor(A, requires_grad=True)
    seen = []

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            seen.append(ember.is_autocast_enabled("cpu"))
            return g

    with ember.autocast("cpu"):
        Probe.apply(x).sum().backward()
    assert seen == [False]


def test_custom_fwd_bwd():
    x = ember.tensor(A, requires_grad=True)
    seen = []

    class Mm(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            return a @ a.T

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(ember.is_autocast_enabled("cpu"))
            return g.float() @ ember.tensor(A) * 2

    with ember.autocast("cpu"):
        y = Mm.apply(x)
    assert y.dtype is ember.bfloat16
    y.float().sum().backward()
    assert seen == [True] and x.grad.dtype is ember.float32


class TestCastCache:
    def test_reused_within_a_region(self):
        from ember.amp.autocast_mode import _local

        w = ember.nn.Parameter(ember.tensor(W))
        with ember.autocast("cpu"):
            ember.nn.functional.linear(ember.tensor(A), w)
            first = _local.cache[id(w)][-1]
            ember.nn.functional.linear(ember.tensor(A), w)
            assert _local.cache[id(w)][-1] is first and len(_local.cache) == 1
        assert not _local.cache  # cleared when the outermost region ends

    def test_never_stale_after_an_inplace_update(self):
        w = ember.nn.Parameter(ember.tensor(W))
        x = ember.tensor(A)
        with ember.autocast("cpu"):
            before = ember.nn.functional.linear(x, w).float()
            with ember.no_grad():
                w.mul_(2)  # an optimizer step inside the region
            after = ember.nn.functional.linear(x, w).float()
        np.testing.assert_allclose(after.detach().numpy(), 2 * before.detach().numpy(), rtol=1e-2)

    def test_no_grad_cast_is_not_served_to_grad_mode(self):
        w = ember.nn.Parameter(ember.tensor(W))
        x = ember.tensor(A)
        with ember.autocast("cpu"):
            with ember.no_grad():
                ember.nn.functional.linear(x, w)
            y = ember.nn.functional.linear(x, w)
        assert y.requires_grad
        y.float().sum().backward()
        assert w.grad is not None

    def test_threads_have_their_own_state(self):
        a, b = ember.tensor(A), ember.tensor(B)
        out = {}

        def other():
            out["dtype"] = (a @ b).dtype

        with ember.autocast("cpu"):
            th = threading.Thread(target=other)
            th.start()
            th.join()
        assert out["dtype"] is ember.float32
