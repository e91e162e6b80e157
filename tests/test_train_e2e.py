"""End to end: a small CNN trained a few steps in ember and in PyTorch from the same initial
weights (copied through state_dict) on the same batches: losses must agree step by step,
and so must the final parameters, batch-norm statistics and eval-mode outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

STEPS = 5
N, C_IN, H = 16, 1, 12  # conv(pad 1) 12 -> pool 6 -> conv 4 -> pool 2: 8 * 2 * 2 features


def make_cnn(lib, batchnorm: bool):
    nn = lib.nn
    # no conv bias before batch norm: its gradient is rounding noise, which Adam would amplify
    layers = [nn.Conv2d(C_IN, 4, 3, padding=1, bias=not batchnorm)]
    if batchnorm:
        layers.append(nn.BatchNorm2d(4))
    layers += [
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 16),
        nn.ReLU(),
        nn.Linear(16, 5),
    ]
    return nn.Sequential(*layers)


def _batches(dtype):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((STEPS, N, C_IN, H, H)).astype(dtype)
    ys = rng.integers(0, 5, (STEPS, N))
    return xs, ys


def _pair(batchnorm: bool, dtype: str):
    torch.manual_seed(0)
    tnet = make_cnn(torch, batchnorm)
    enet = make_cnn(ember, batchnorm)
    if dtype == "float64":
        tnet, enet = tnet.double(), enet.double()
    state = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()}
    enet.load_state_dict(state)
    return enet, tnet


OPTIMIZERS = {
    "sgd-momentum": lambda lib, params: lib.optim.SGD(
        params, lr=0.1, momentum=0.9, weight_decay=1e-3
    ),
    "sgd-nesterov": lambda lib, params: lib.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True),
    "adam": lambda lib, params: lib.optim.Adam(params, lr=1e-2),
}
TOL = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-4, atol=2e-5)}


@pytest.mark.parametrize("batchnorm", [True, False], ids=["bn", "nobn"])
@pytest.mark.parametrize("opt_name", OPTIMIZERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cnn_training_matches_torch(dtype, opt_name, batchnorm):
    if dtype == "float32" and opt_name == "sgd-nesterov":
        pytest.skip("covered in float64; keeps the file fast")
    enet, tnet = _pair(batchnorm, dtype)
    eopt = OPTIMIZERS[opt_name](ember, enet.parameters())
    topt = OPTIMIZERS[opt_name](torch, tnet.parameters())
    xs, ys = _batches(dtype)
    tol = TOL[dtype]
    e_losses, t_losses = [], []
    for x, y in zip(xs, ys):
        for net, opt, lib, losses in ((enet, eopt, ember, e_losses), (tnet, topt, torch, t_losses)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(net(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        np.testing.assert_allclose(
            e_losses[-1], t_losses[-1], err_msg=f"step {len(e_losses)}", **tol
        )

    t_state = tnet.state_dict()
    for k, v in enet.state_dict().items():
        np.testing.assert_allclose(v.numpy(), t_state[k].numpy(), err_msg=k, **tol)
    enet.eval()
    tnet.eval()
    with ember.no_grad(), torch.no_grad():
        out_e, out_t = enet(ember.tensor(xs[0])), tnet(torch.tensor(xs[0]))
    np.testing.assert_allclose(out_e.numpy(), out_t.numpy(), **tol)


def test_training_with_loss_module_and_clipping_float64():
    """CrossEntropyLoss (label smoothing), clip_grad_norm_ and Adam together."""
    enet, tnet = _pair(True, "float64")
    eopt, topt = (
        ember.optim.Adam(enet.parameters(), 1e-2),
        torch.optim.Adam(tnet.parameters(), 1e-2),
    )
    eloss = ember.nn.CrossEntropyLoss(label_smoothing=0.1)
    tloss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    xs, ys = _batches("float64")
    for x, y in zip(xs[:3], ys[:3]):
        results = []
        for net, opt, lib, crit in ((enet, eopt, ember, eloss), (tnet, topt, torch, tloss)):
            opt.zero_grad()
            loss = crit(net(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            norm = lib.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
            results.append((loss.item(), norm.item()))
        np.testing.assert_allclose(results[0], results[1], rtol=1e-9)
