"""F.embedding_bag and nn.EmbeddingBag.from_pretrained against torch: values, gradients,
grad_fn names, frozen weights; F.bilinear's grad_fn name."""

import numpy as np
import pytest
import torch

import ember

W = np.sin(np.arange(30.0) * 0.3).reshape(10, 3)
IDX = [1, 2, 4, 5, 4, 3, 2, 9]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", [[0, 4], [0, 3, 3], None])
def test_embedding_bag_matches_torch(mode, offsets):
    tw = torch.tensor(W, requires_grad=True)
    ew = ember.tensor(W, requires_grad=True)
    if offsets is None:
        ti, ei, to, eo = (
            torch.tensor(IDX).reshape(2, 4),
            ember.tensor(IDX).reshape(2, 4),
            None,
            None,
        )
    else:
        ti, ei = torch.tensor(IDX), ember.tensor(IDX)
        to, eo = torch.tensor(offsets), ember.tensor(offsets)
    t = torch.nn.functional.embedding_bag(ti, tw, to, mode=mode)
    e = ember.nn.functional.embedding_bag(ei, ew, eo, mode=mode)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    assert e.grad_fn.name() == t.grad_fn.name() == "EmbeddingBagBackward0"
    if mode != "max":  # max's gradient on ties is not compared
        t.pow(2).sum().backward()
        e.pow(2).sum().backward()
        np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_per_sample_weights_and_include_last_offset():
    psw = np.linspace(0.5, 2.0, 8)
    t = torch.nn.functional.embedding_bag(
        torch.tensor(IDX), torch.tensor(W), torch.tensor([0, 3, 8]), mode="sum",
        per_sample_weights=torch.tensor(psw), include_last_offset=True,
    )  # fmt: skip
    e = ember.nn.functional.embedding_bag(
        ember.tensor(IDX), ember.tensor(W), ember.tensor([0, 3, 8]), mode="sum",
        per_sample_weights=ember.tensor(psw), include_last_offset=True,
    )  # fmt: skip
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained(freeze):
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), freeze=freeze, mode="max")
    e = ember.nn.EmbeddingBag.from_pretrained(ember.tensor(W), freeze=freeze, mode="max")
    assert e.weight.requires_grad == t.weight.requires_grad == (not freeze)
    assert repr(e) == repr(t)
    out_t = t(torch.tensor(IDX), torch.tensor([0, 5]))
    out_e = e(ember.tensor(IDX), ember.tensor([0, 5]))
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="2-dimensional"):
        ember.nn.EmbeddingBag.from_pretrained(ember.ones(3))


def test_module_keeps_its_error_prefix():
    with pytest.raises(ember.EmberError, match="^EmbeddingBag: offsets has to be"):
        ember.nn.EmbeddingBag(3, 2)(ember.tensor([0, 1]))


@pytest.mark.parametrize("shapes", [((2, 2), (2, 3)), ((2,), (3,)), ((4, 2, 2), (4, 2, 3))])
@pytest.mark.parametrize("bias", [False, True])
def test_bilinear_grad_fn_name(shapes, bias):
    a, b = shapes
    names = []
    for lib in (torch, ember):
        w = lib.ones(2, 2, 3, requires_grad=True)
        args = (lib.ones(*a), lib.ones(*b), w) + ((lib.ones(2),) if bias else ())
        names.append(lib.nn.functional.bilinear(*args).grad_fn.name())
    assert names[0] == names[1]
