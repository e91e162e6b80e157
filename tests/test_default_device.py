"""``ember.set_default_device`` / ``get_default_device`` against PyTorch's on this machine, and
creation functions following the default on the fake CuPy's GPUs."""

from __future__ import annotations

import threading

import pytest
import torch

import ember

MAKERS = {
    "zeros": lambda m: m.zeros(2, 3),
    "ones": lambda m: m.ones(2),
    "empty": lambda m: m.empty(2),
    "full": lambda m: m.full((2,), 1.5),
    "tensor": lambda m: m.tensor([1.0, 2.0]),
    "as_tensor": lambda m: m.as_tensor([1, 2]),
    "arange": lambda m: m.arange(4),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "eye": lambda m: m.eye(3),
    "rand": lambda m: m.rand(2),
    "randn": lambda m: m.randn(2),
    "randint": lambda m: m.randint(0, 5, (3,)),
    "randperm": lambda m: m.randperm(4),
    "linear weight": lambda m: m.nn.Linear(2, 3).weight,
}


@pytest.fixture(autouse=True)
def _reset():
    yield
    ember.set_default_device(None)
    torch.set_default_device(None)


def test_get_default_as_torch():
    assert str(ember.get_default_device()) == str(torch.get_default_device()) == "cpu"
    for spec in ("cpu", torch.device("cpu"), None):
        torch.set_default_device(spec)
        ember.set_default_device(spec if not isinstance(spec, torch.device) else "cpu")
        assert repr(ember.get_default_device()) == repr(torch.get_default_device())
    ember.set_default_device(ember.device("cpu"))
    assert ember.get_default_device() == ember.device("cpu")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_cpu_default_as_torch(name):
    torch.set_default_device("cpu")
    ember.set_default_device("cpu")
    assert str(MAKERS[name](ember).device) == str(MAKERS[name](torch).device) == "cpu"


def test_cuda_without_gpu_fails_at_creation():
    """As PyTorch's CPU build: setting "cuda" succeeds, making a tensor fails."""
    if ember.cuda.is_available():
        pytest.skip("needs a machine without a GPU")
    torch.set_default_device("cuda")
    ember.set_default_device("cuda")
    with pytest.raises(AssertionError):  # "Torch not compiled with CUDA enabled"
        torch.zeros(1)
    for make in MAKERS.values():
        with pytest.raises(ember.DeviceError, match="cuda is not available"):
            make(ember)
    with pytest.raises(ember.DeviceError):
        ember.get_default_device()
    ember.set_default_device(None)
    torch.set_default_device(None)
    assert ember.zeros(1).device == ember.device("cpu")
    assert torch.zeros(1).device == torch.device("cpu")


def test_bad_spelling_fails_when_set():
    with pytest.raises(RuntimeError):
        torch.set_default_device("gpu")
    with pytest.raises(ember.DeviceError, match="unknown device type 'gpu'"):
        ember.set_default_device("gpu")
    assert ember.get_default_device() == ember.device("cpu")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_cuda_default(fake_cuda, name):
    ember.set_default_device("cuda")
    assert MAKERS[name](ember).device == ember.device("cuda:0")
    ember.set_default_device("cuda:1")
    # a layer's init runs ops on its parameters, and ember's ops run on the current GPU
    with ember.cuda.device(1 if name == "linear weight" else 0):
        assert MAKERS[name](ember).device == ember.device("cuda:1")
    ember.set_default_device(None)
    assert MAKERS[name](ember).device == ember.device("cpu")


def test_cuda_default_details(fake_cuda):
    ember.set_default_device("cuda")
    assert ember.get_default_device() == ember.device("cuda:0")
    assert ember.get_default_device().index == 0
    with ember.cuda.device(1):
        assert ember.get_default_device() == ember.device("cuda:1")
        assert ember.zeros(1).device == ember.device("cuda:1")
    assert ember.zeros(1, device="cpu").device == ember.device("cpu")  # explicit wins
    cpu = ember.ones(2, device="cpu")
    assert ember.zeros_like(cpu).device == ember.device("cpu")  # *_like keep the input's
    assert ember.from_numpy(cpu.numpy()).device == ember.device("cpu")  # shares memory
    ember.set_default_device("cuda:5")  # accepted; creation fails, as in PyTorch
    with pytest.raises(ember.DeviceError, match="cuda:5 does not exist"):
        ember.zeros(1)


def test_per_thread():
    ember.set_default_device("cpu")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(ember.get_default_device()))
    thread.start()
    thread.join()
    assert seen == [ember.device("cpu")]
