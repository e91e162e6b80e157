"""Training steps on a GPU wait for no host: device checks (ember/backend/checks.py), cached
constants, no data-dependent branches.

On the strict fake CuPy every host transfer is counted (and refused while a CUDA graph is being
captured, as CuPy refuses it): a training step makes none, eager or compiled, and a bad class
index is still reported, with eager's message, at the next read from the device.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.backend import checks
from ember.models import resnet18
from tests._fakecupy import _gpu

MESSAGE = (
    "cross_entropy: Target 12 is out of bounds: expected class indices in [0, 10) or "
    "ignore_index=-100 (target of shape [2])"
)


@pytest.fixture
def transfers(fake_cuda, monkeypatch):
    """Counts of the fake GPU's host transfers by kind ('d2h', 'h2d', 'sync')."""
    counts: collections.Counter = collections.Counter()
    check = _gpu.check_transfer

    def counting(kind):
        counts[kind] += 1
        check(kind)

    monkeypatch.setattr(_gpu, "check_transfer", counting)
    yield counts
    checks.take()  # leave no queued check to the next test


def _resnet_step():
    model = resnet18(num_classes=10).to("cuda")
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = ember.randn(2, 3, 32, 32).to("cuda")
    y = ember.tensor([1, 2]).to("cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step, y


def test_a_resnet18_step_makes_no_host_transfer(transfers):
    step, _ = _resnet_step()
    step()  # the first step creates the optimizer state and the cached constants
    transfers.clear()
    step()
    assert not transfers, dict(transfers)


def test_a_compiled_resnet18_step_replays_as_one_graph_without_host_transfers(transfers):
    step, y = _resnet_step()
    compiled = ember.compile(step)
    for _ in range(3):  # trace and warm up, capture, replay
        compiled()
    transfers.clear()
    loss = compiled()
    assert not transfers, dict(transfers)
    runner = compiled._latest.runner
    assert runner.disabled is None and runner.captures == 1 and runner.replays == 2
    assert compiled.traces == 2  # SGD's first momentum step copies the gradient: one retrace
    assert np.isfinite(loss.item())
    y.copy_(ember.tensor([1, 12]))  # a class index out of range, written into the argument
    compiled()  # the replay does not wait to check it...
    with pytest.raises(ember.EmberIndexError) as err:
        compiled().item()  # ...the next read from the device reports it
    assert str(err.value) == MESSAGE


def test_a_bad_target_is_reported_at_the_next_read(transfers):
    logits = ember.randn(2, 10).to("cuda")
    target = ember.tensor([1, 12]).to("cuda")
    transfers.clear()
    loss = F.cross_entropy(logits, target)  # no wait for the device here
    assert not transfers
    with pytest.raises(ember.EmberIndexError) as err:
        loss.item()
    assert str(err.value) == MESSAGE
    assert F.cross_entropy(logits, target.clamp(0, 9)).item() > 0  # the queue was emptied


def test_synchronize_decides_the_queued_checks(fake_cuda):
    loss = F.nll_loss(ember.randn(2, 10).to("cuda"), ember.tensor([1, 12]).to("cuda"))
    with pytest.raises(ember.EmberIndexError, match="nll_loss: Target 12 is out of bounds"):
        ember.cuda.synchronize()
    assert loss.shape == ()


def test_on_the_cpu_the_call_itself_raises():
    with pytest.raises(ember.EmberIndexError) as err:
        F.cross_entropy(ember.randn(2, 10), ember.tensor([1, 12]))
    assert str(err.value) == MESSAGE


def test_index_checks_wait_for_no_host(transfers):
    x = ember.arange(6.0).reshape(2, 3).to("cuda")
    index = ember.tensor([0, 6]).to("cuda")
    transfers.clear()
    out = ember.take(x, index)
    assert not transfers
    with pytest.raises(ember.EmberIndexError, match="take: index 6 is out of range"):
        out.cpu()
