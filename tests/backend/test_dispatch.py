"""The GPU paths' plumbing on the fake CuPy (``tests/_fakecupy``, no kernels): cuda
tensors reach the ops' CUDA overrides, which decline there (no kernels to build), so the
reference bodies run and give the CPU's results.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops.norm import LayerNormalize


def _to(t, device):
    return t.detach().to(device).requires_grad_()


def test_layer_norm_on_cuda_is_the_primitive_and_matches_cpu(fake_cuda):
    x = ember.randn(4, 3, 5)
    w, b = ember.randn(3, 5), ember.randn(3, 5)
    xc, wc, bc = (_to(t, "cpu") for t in (x, w, b))
    xg, wg, bg = (_to(t, "cuda") for t in (x, w, b))
    yc = F.layer_norm(xc, (3, 5), wc, bc)
    yg = F.layer_norm(xg, (3, 5), wg, bg)
    node = yg._node
    while node is not None and not isinstance(node.op, LayerNormalize):
        node = node.inputs[0]._node
    assert node is not None and node.op == LayerNormalize(2, 1e-5)
    np.testing.assert_allclose(yg.cpu().detach().numpy(), yc.detach().numpy(), 1e-5, 1e-6)
    r = ember.randn(4, 3, 5)
    (yc * r).sum().backward()
    (yg * r.to("cuda")).sum().backward()
    for a, c in ((xg, xc), (wg, wc), (bg, bc)):
        np.testing.assert_allclose(a.grad.cpu().numpy(), c.grad.numpy(), 1e-4, 1e-5)


def test_layer_norm_primitive_gradcheck():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    ember.autograd.gradcheck(lambda t: ember.ops.base.apply(LayerNormalize(1, 1e-5), t), (x,))
    ember.autograd.gradgradcheck(lambda t: ember.ops.base.apply(LayerNormalize(1, 1e-5), t), (x,))


def test_cross_entropy_on_cuda_checks_targets_without_a_copy(fake_cuda, monkeypatch):
    from ember.backend import cuda

    copies = []
    to_host = cuda.to_host
    monkeypatch.setattr(cuda, "to_host", lambda a: copies.append(a.shape) or to_host(a))
    x = ember.randn(6, 4)
    for t in (ember.tensor([0, 3, 1, 2, 2, 1]), ember.tensor([0, 3, 1, 0, 0, 1])):
        want = F.cross_entropy(x, t, ignore_index=2)
        copies.clear()
        got = F.cross_entropy(x.to("cuda"), t.to("cuda"), ignore_index=2)
        assert not copies  # the check is queued on the device (ember.backend.checks)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), 1e-6)
    loss = F.cross_entropy(x.to("cuda"), ember.tensor([0, 4, 1, 2, 2, 1]).to("cuda"))
    with pytest.raises(Exception, match="Target 4 is out of bounds"):
        loss.item()  # the next read from the device reports it


def test_fake_cuda_runs_the_reference_paths(fake_cuda):
    """No kernels on the fake: softmax, matmul, conv and the optimizers take the NumPy code."""
    x = ember.randn(3, 8)
    np.testing.assert_allclose(
        F.log_softmax(x.to("cuda"), 1).cpu().numpy(), F.log_softmax(x, 1).numpy(), 1e-6
    )
    w = ember.nn.Parameter(ember.randn(8, 2).to("cuda"))
    opt = ember.optim.Adam([w], lr=0.1)
    (x.to("cuda") @ w).sum().backward()
    opt.step()
    assert w.device.type == "cuda"
    y = F.conv2d(ember.randn(1, 2, 5, 5).to("cuda"), ember.randn(3, 2, 3, 3).to("cuda"))
    assert tuple(y.shape) == (1, 3, 3, 3) and y.device.type == "cuda"
