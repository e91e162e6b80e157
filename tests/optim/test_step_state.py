"""``state['step']`` as torch.optim keeps it (a float32 0-d tensor, or none), eager and compiled;
the count's dtype leaves the update math as it was (parameters equal to torch's)."""

import numpy as np
import pytest
import torch

import ember

NAMES = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta", "RMSprop",
         "Rprop", "ASGD"]  # fmt: skip
KW = {"SGD": {"lr": 0.1, "momentum": 0.9}}


def _pair(name: str):
    w = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    tp, ep = torch.nn.Parameter(torch.tensor(w)), ember.nn.Parameter(ember.tensor(w))
    kw = KW.get(name, {"lr": 0.01})
    return tp, ep, getattr(torch.optim, name)([tp], **kw), getattr(ember.optim, name)([ep], **kw)


def _step(p, opt):
    opt.zero_grad()
    (p * p).sin().sum().backward()
    opt.step()


@pytest.mark.parametrize("name", NAMES)
def test_step_state_as_torch(name):
    tp, ep, topt, eopt = _pair(name)
    for _ in range(3):
        _step(tp, topt)
        _step(ep, eopt)
    want, got = topt.state[tp].get("step"), eopt.state[ep].get("step")
    assert (got is None) == (want is None)
    if want is not None:
        assert isinstance(got, ember.Tensor) and str(got.dtype) == str(want.dtype).replace(
            "torch", "ember"
        )
        assert repr(got) == repr(want) and got.shape == want.shape
        assert str(eopt.state_dict()["state"][0]["step"]) == str(
            topt.state_dict()["state"][0]["step"]
        )
    np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "RAdam", "NAdam", "Adamax"])
def test_compiled_step_keeps_float32_count_and_eager_math(name):
    _, eager_p, _, eager_opt = _pair(name)
    _, comp_p, _, comp_opt = _pair(name)

    @ember.compile
    def step():
        _step(comp_p, comp_opt)

    for _ in range(4):
        _step(eager_p, eager_opt)
        step()
    count = comp_opt.state[comp_p]["step"]
    assert count.dtype == ember.float32 and count.item() == 4.0
    np.testing.assert_allclose(comp_p.detach().numpy(), eager_p.detach().numpy(), rtol=1e-6)
