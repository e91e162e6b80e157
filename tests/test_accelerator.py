"""``ember.accelerator`` and ``ember.backends.mps`` against PyTorch's answers on this machine
(PyTorch's CPU build, no GPU), and ``ember.accelerator`` on the fake CuPy's two GPUs."""

from __future__ import annotations

import pytest
import torch

import ember

NAMES = ("is_available", "current_accelerator", "device_count")
NEEDS_DEVICE = (
    ("current_device_index", ()),
    ("set_device_index", (0,)),
    ("synchronize", ()),
)


def _no_gpu():
    if ember.cuda.is_available():
        pytest.skip("compares with PyTorch's CPU build: needs a machine without a GPU")


def test_module_paths():
    import ember.accelerator
    import ember.backends.mps
    from ember.backends import mps

    assert ember.accelerator is ember.backend.accelerator
    assert mps is ember.backends.mps is ember.backend.mps


@pytest.mark.parametrize("name", NAMES)
def test_answers_as_torch(name):
    _no_gpu()
    assert getattr(ember.accelerator, name)() == getattr(torch.accelerator, name)()


def test_current_accelerator_check_available():
    _no_gpu()
    assert ember.accelerator.current_accelerator(check_available=True) is None
    assert torch.accelerator.current_accelerator(check_available=True) is None


@pytest.mark.parametrize("name,args", NEEDS_DEVICE)
def test_no_device_raises_as_torch(name, args):
    _no_gpu()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.accelerator, name)(*args)
    with pytest.raises(ember.DeviceError) as got:
        getattr(ember.accelerator, name)(*args)
    assert str(got.value) == str(expected.value)


def test_device_index_context():
    _no_gpu()
    with torch.accelerator.device_index(None), ember.accelerator.device_index(None):
        pass
    with pytest.raises(RuntimeError) as expected, torch.accelerator.device_index(0):
        pass
    with pytest.raises(ember.DeviceError) as got, ember.accelerator.device_index(0):
        pass
    assert str(got.value) == str(expected.value)


def test_mps_as_torch():
    for name in ("is_available", "is_built"):
        assert getattr(ember.backends.mps, name)() is getattr(torch.backends.mps, name)() is False


def test_with_gpus(fake_cuda):
    acc = ember.accelerator
    assert acc.is_available()
    assert acc.current_accelerator() == ember.device("cuda")
    assert acc.current_accelerator(check_available=True).type == "cuda"
    assert acc.device_count() == ember.cuda.device_count() == 2
    assert acc.current_device_index() == 0
    with acc.device_index(1):
        assert acc.current_device_index() == ember.cuda.current_device() == 1
        assert ember.zeros(1, device="cuda").device == ember.device("cuda:1")
    assert acc.current_device_index() == 0
    acc.set_device_index("cuda:1")
    assert ember.cuda.current_device() == 1
    acc.synchronize()
    acc.synchronize(ember.device("cuda:0"))
    acc.set_device_index(0)
    with pytest.raises(ember.DeviceError, match="doesn't match the current accelerator"):
        acc.set_device_index("cpu")


def test_typical_script():
    """The device choice every current pytorch/examples script makes."""
    torch_ = ember
    use = torch_.accelerator.is_available()
    device = torch_.accelerator.current_accelerator() if use else torch_.device("cpu")
    assert torch_.ones(2, device=device).device == device
