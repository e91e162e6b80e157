"""cuDNN's fused attention as the CUDA overrides of ``Attention`` and ``AttentionGrad``
(``ember.backend.kernels.attention``), run through the stand-in frontend (``_fakecudnn``: PyTorch
computes, and checks the statistics the backward is given), against the ops' bodies."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.backend.kernels import attention as katt
from ember.backend.overrides import run
from ember.ops.attention import Attention, AttentionGrad

from . import _fakecudnn

BF16 = ember.bfloat16.np
CASES = {  # q, k, v shapes
    "4-D": ((2, 3, 8, 16), (2, 3, 8, 16), (2, 3, 8, 16)),
    "4-D, longer keys, value width 8": ((1, 2, 5, 16), (1, 2, 9, 16), (1, 2, 9, 8)),
    "3-D": ((4, 6, 8), (4, 6, 8), (4, 6, 8)),
}


def _arrays(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32).astype(dtype) for s in shapes]


def _executed(log):
    return [d for e, d in log if e == "execute"]


@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_backward_match_the_bodies(xp, fake_cudnn, name, causal, dtype):
    q, k, v = _arrays(CASES[name], dtype)
    op, grad = Attention(0.25, causal), AttentionGrad(0.25, causal)
    out = run(op, xp, q, k, v)
    tol = dict(rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(out.astype(np.float32), op.forward(np, q, k, v).astype(np.float32),
                               **tol)  # fmt: skip
    g = _arrays([out.shape], dtype, seed=1)[0]
    packed = run(grad, xp, g, out, q, k, v)
    want = grad.forward(np, g, out, q, k, v)
    assert packed.shape == want.shape and packed.dtype == dtype
    np.testing.assert_allclose(packed.astype(np.float32), want.astype(np.float32), **tol)
    assert _executed(fake_cudnn.log) == ["sdpa", "sdpa", "sdpa_backward"]


def test_the_output_takes_the_querys_memory_order(xp, fake_cudnn):
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((6, 2, 3 * 32)).astype(BF16)  # (L, N, 3E): a packed projection
    q, k, v = (rows[..., i * 32 : (i + 1) * 32].reshape(6, 2, 4, 8).transpose(1, 2, 0, 3)
               for i in range(3))  # fmt: skip
    out = run(Attention(0.3, False), xp, q, k, v)
    assert out.shape == (2, 4, 6, 8)
    assert out.transpose(2, 0, 1, 3).flags.c_contiguous  # (L, N, H, D) rows: heads merge free
    want = Attention(0.3, False).forward(np, q, k, v)
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), 2e-2, 2e-2)
    graph = next(iter(katt._graphs.values()))[0]
    q_desc = graph.op[1][0]
    assert q_desc.dim == [2, 4, 6, 8] and q_desc.stride == [96, 8, 192, 1]


def test_gradients_of_one_projections_heads_are_laid_out_as_that_projection(xp, fake_cudnn):
    """dq, dk and dv of heads that are views of one (L, N, 3E) projection are written as views
    of one array of that layout (the projection's gradient, which the autograd engine then takes
    without a copy); separate inputs get the stack in C order. Values as the body's both ways."""
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((6, 2, 3 * 32)).astype(BF16)
    heads = [rows[..., i * 32 : (i + 1) * 32].reshape(6, 2, 4, 8).transpose(1, 2, 0, 3)
             for i in range(3)]  # fmt: skip
    grad = AttentionGrad(0.3, False)
    for q, k, v in (heads, [np.ascontiguousarray(h) for h in heads]):
        out = Attention(0.3, False).forward(np, q, k, v)
        g = rng.standard_normal(out.shape).astype(BF16)
        packed = run(grad, xp, g, out, q, k, v)
        want = grad.forward(np, g, out, q, k, v)
        assert packed.shape == (3, 2, 4, 6, 8)
        np.testing.assert_allclose(packed.astype(np.float32), want.astype(np.float32), 2e-2, 2e-2)
        if q.base is rows:
            whole = packed.base
            assert whole.shape == rows.shape and whole.flags.c_contiguous
            for d, h in zip(packed, heads):  # each gradient where its head lies
                assert d.strides == h.strides
                assert d.ctypes.data - whole.ctypes.data == h.ctypes.data - rows.ctypes.data
            if _fakecudnn._real is not None:  # the real frontend's graph, built the same way
                real = [d for e, d in fake_cudnn.log if e == "real"][-1]
                assert real["nodes"][0]["type"] == "SDPA_BWD"
                for name in ("Q", "dQ", "dK", "dV"):
                    t = next(t for n, t in real["tensors"].items() if n.split(":")[-1] == name)
                    assert t["stride"] == [s // 2 for s in heads[0].strides], name
        else:
            assert packed.flags.c_contiguous


def test_plans_are_cached_per_layout(xp, fake_cudnn):
    q, k, v = _arrays(CASES["4-D"], BF16)
    for _ in range(3):
        run(Attention(0.25, False), xp, q, k, v)
    assert [e for e, _ in fake_cudnn.log].count("graph") == 1


@pytest.mark.parametrize(
    "why,shapes,dtype",
    [
        ("float32 (cuDNN has no float32 flash attention)", CASES["4-D"], np.float32),
        ("head size not a multiple of 8", ((1, 2, 4, 12),) * 3, BF16),
        ("5-D", ((1, 1, 2, 4, 8),) * 3, BF16),
    ],
)
def test_what_cudnn_does_not_serve_runs_the_body(xp, fake_cudnn, why, shapes, dtype):
    q, k, v = _arrays(shapes, dtype)
    assert katt.forward(xp, q, k, v, 0.5, False) is NotImplemented
    out = run(Attention(0.5, False), xp, q, k, v)
    np.testing.assert_array_equal(out, Attention(0.5, False).forward(np, q, k, v))
    assert not fake_cudnn.log


def test_a_refused_plan_warns_once_and_runs_the_body(xp, fake_cudnn):
    fake_cudnn.fail_build[0] = True
    q, k, v = _arrays(CASES["3-D"], BF16)
    with pytest.warns(RuntimeWarning, match="cuDNN has no attention forward plan"):
        out = run(Attention(0.5, False), xp, q, k, v)
    np.testing.assert_array_equal(out, Attention(0.5, False).forward(np, q, k, v))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(Attention(0.5, False), xp, q, k, v)  # remembered: no second build, no warning
    assert [e for e, _ in fake_cudnn.log].count("graph") == 1


def test_multi_head_attention_on_a_gpu_takes_its_projections_gradient_without_copies(
    fake_cuda, monkeypatch
):
    """Eagerly on the fake GPU with the stand-in cuDNN: the heads' gradients come back as one
    array laid out as the (L, N, 3E) projection, which the engine hands on whole (no pieces
    written into zeros, ``BasicIndexGrads``); the weights' gradients are the CPU's."""
    from ember.ops import indexing
    from tests.backend import _fakecudnn

    monkeypatch.setattr(ember.backends.cudnn, "_module", [_fakecudnn])
    _fakecudnn.fail_build[0] = False  # a test before may have set it
    _fakecudnn.log.clear()
    katt.clear()
    tiled, forward = [], indexing.BasicIndexGrads.forward

    def spy(op, xp, *gs):
        tiled.append(xp is not np)
        return forward(op, xp, *gs)

    monkeypatch.setattr(indexing.BasicIndexGrads, "forward", spy)
    grads = {}
    for device in ("cpu", "cuda"):
        ember.manual_seed(0)
        mha = ember.nn.MultiheadAttention(32, 4, batch_first=True).to(device)
        x = ember.randn(2, 6, 32).to(device)
        if device == "cuda":
            mha, x = mha.to(ember.bfloat16), x.to(ember.bfloat16)
        mha(x, x, x, need_weights=False)[0].float().square().sum().backward()
        grads[device] = {n: p.grad.float().cpu().numpy() for n, p in mha.named_parameters()}
    assert tiled == [False]  # the CPU's formula tiles its pieces; the GPU had one array
    assert "sdpa_backward" in [d for e, d in _fakecudnn.log if e == "execute"]
    for name, want in grads["cpu"].items():
        scale = np.abs(want).max()
        np.testing.assert_allclose(grads["cuda"][name], want, atol=5e-2 * scale, err_msg=name)
    katt.clear()
