"""nn.utils.prune against torch.nn.utils.prune: masks, the pruned tensor and its gradient,
parameter/buffer names, iterative pruning, remove, is_pruned, amount checks."""

import numpy as np
import pytest
import torch
import torch.nn.utils.prune

import ember

W = np.cos(np.arange(18.0) * 0.7).reshape(3, 6)


def _pair():
    t, e = torch.nn.Linear(6, 3), ember.nn.Linear(6, 3)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(W))
        t.bias.fill_(0.5)
    with ember.no_grad():
        e.weight.copy_(ember.tensor(W))
        e.bias.fill_(0.5)
    return t, e


def _names(m):
    return [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()]


@pytest.mark.parametrize("amount", [0, 4, 0.25, 0.5, 1.0, 18])
def test_l1_unstructured_matches_torch(amount):
    t, e = _pair()
    torch.nn.utils.prune.l1_unstructured(t, "weight", amount=amount)
    ember.nn.utils.prune.l1_unstructured(e, "weight", amount=amount)
    assert _names(e) == _names(t)
    np.testing.assert_array_equal(e.weight_mask.numpy(), t.weight_mask.numpy())
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy())
    x = np.linspace(-1, 1, 12).reshape(2, 6)
    t(torch.tensor(x, dtype=torch.float32)).pow(2).sum().backward()
    e(ember.tensor(x, dtype=ember.float32)).pow(2).sum().backward()
    np.testing.assert_allclose(e.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(), rtol=1e-6)
    assert ember.nn.utils.prune.is_pruned(e) and torch.nn.utils.prune.is_pruned(t)


def test_iterative_pruning_prunes_among_the_kept_entries():
    t, e = _pair()
    for amount in (3, 0.5):
        torch.nn.utils.prune.l1_unstructured(t, "weight", amount=amount)
        ember.nn.utils.prune.l1_unstructured(e, "weight", amount=amount)
    np.testing.assert_array_equal(e.weight_mask.numpy(), t.weight_mask.numpy())
    assert int(e.weight_mask.sum()) == int(t.weight_mask.sum()) == 7  # 15 kept, round(7.5) pruned
    assert len(e._forward_pre_hooks) == 1


def test_remove_makes_it_permanent():
    t, e = _pair()
    torch.nn.utils.prune.l1_unstructured(t, "weight", amount=0.5)
    ember.nn.utils.prune.l1_unstructured(e, "weight", amount=0.5)
    torch.nn.utils.prune.remove(t, "weight")
    ember.nn.utils.prune.remove(e, "weight")
    assert _names(e) == _names(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert isinstance(e.weight, ember.nn.Parameter) and len(e._forward_pre_hooks) == 0
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy())
    assert not ember.nn.utils.prune.is_pruned(e)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        ember.nn.utils.prune.remove(e, "weight")


@pytest.mark.parametrize("amount", [-1, 1.5, 19])
def test_bad_amounts_raise_as_torch(amount):
    t, e = _pair()
    with pytest.raises(ValueError) as te:
        torch.nn.utils.prune.l1_unstructured(t, "weight", amount=amount)
    with pytest.raises(ValueError) as ee:
        ember.nn.utils.prune.l1_unstructured(e, "weight", amount=amount)
    assert str(ee.value).split(" should")[0] == str(te.value).split(" should")[0]


def test_random_unstructured_and_identity_counts():
    _, e = _pair()
    ember.nn.utils.prune.random_unstructured(e, "weight", amount=5)
    assert int((e.weight_mask == 0).sum()) == 5
    ember.nn.utils.prune.identity(e, "bias")
    np.testing.assert_array_equal(e.bias_mask.numpy(), np.ones(3))
