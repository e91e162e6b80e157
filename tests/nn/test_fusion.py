"""nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval (and their *_weights) against torch:
fused weights and biases, outputs equal to bn(layer(x)), the eval-only assertion."""

import numpy as np
import pytest
import torch
import torch.nn.utils.fusion

import ember


def _bn_state(lib, bn, n):
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(np.linspace(-0.3, 0.3, n)))
        bn.running_var.copy_(lib.tensor(np.linspace(0.5, 2.0, n)))
        if bn.weight is not None:
            bn.weight.copy_(lib.tensor(np.cos(np.arange(n))))
            bn.bias.copy_(lib.tensor(np.sin(np.arange(n))))


def _fill(lib, m):
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) * 0.3 + i).reshape(tuple(p.shape))))


CASES = {
    "conv": (lambda nn: nn.Conv2d(2, 3, 3, padding=1), lambda nn: nn.BatchNorm2d(3), (1, 2, 4, 4)),
    "conv-nobias-noaffine": (
        lambda nn: nn.Conv2d(2, 3, 3, bias=False),
        lambda nn: nn.BatchNorm2d(3, affine=False),
        (2, 2, 5, 5),
    ),
    "convT": (lambda nn: nn.ConvTranspose2d(2, 3, 3), lambda nn: nn.BatchNorm2d(3), (1, 2, 3, 3)),
    "linear": (lambda nn: nn.Linear(4, 3), lambda nn: nn.BatchNorm1d(3), (5, 4)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fusion_matches_torch(case):
    make_layer, make_bn, shape = CASES[case]
    x = np.cos(np.arange(np.prod(shape)) * 0.4).reshape(shape)
    results = []
    for lib, fusion in ((torch, torch.nn.utils.fusion), (ember, ember.nn.utils)):
        layer, bn = make_layer(lib.nn).double().eval(), make_bn(lib.nn).double().eval()
        _fill(lib, layer)
        _bn_state(lib, bn, 3)
        if case == "linear":
            fused = fusion.fuse_linear_bn_eval(layer, bn)
        else:
            fused = fusion.fuse_conv_bn_eval(layer, bn, transpose=case == "convT")
        xs = lib.tensor(x)
        out = fused(xs)
        assert isinstance(fused.weight, lib.nn.Parameter) and fused is not layer
        np.testing.assert_allclose(out.detach().numpy(), bn(layer(xs)).detach().numpy(), atol=1e-12)
        results.append([fused.weight.detach().numpy(), fused.bias.detach().numpy()])
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_fusion_only_in_eval():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        ember.nn.utils.fuse_conv_bn_eval(ember.nn.Conv2d(1, 2, 3), ember.nn.BatchNorm2d(2))
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        ember.nn.utils.fuse_linear_bn_eval(
            ember.nn.Linear(2, 3).eval(), ember.nn.BatchNorm1d(2).eval()
        )
