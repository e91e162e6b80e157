"""Devices: parsing, equality, CUDA queries, and a clear error when CUDA is missing."""

from __future__ import annotations

import pytest

import ember

NO_GPU = not ember.cuda.is_available()


def test_device_parsing():
    assert repr(ember.device("cpu")) == "device(type='cpu')"
    assert repr(ember.device("cuda")) == "device(type='cuda')"
    assert repr(ember.device("cuda:1")) == "device(type='cuda', index=1)"
    assert repr(ember.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert repr(ember.device(1)) == "device(type='cuda', index=1)"
    assert str(ember.device("cuda:1")) == "cuda:1" and str(ember.device("cpu")) == "cpu"
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1
    assert ember.device(d) is d
    assert ember.device("cpu").index is None
    assert ember.device("cpu:0").type == "cpu"


def test_device_equality_and_hash():
    assert ember.device("cpu") == ember.device("cpu")
    assert ember.device("cuda") == ember.device("cuda:0")
    assert ember.device("cuda:0") != ember.device("cuda:1")
    assert ember.device("cpu") != ember.device("cuda")
    assert ember.device("cpu") == "cpu"  # ember compares with strings too
    assert len({ember.device("cuda"), ember.device("cuda:0")}) == 1


@pytest.mark.parametrize(
    "spec, match",
    [
        ("tpu", "unknown device type 'tpu'"),
        ("cuda:x", "bad device index in 'cuda:x'"),
        ("cpu:1", "cpu has only index 0"),
        (1.5, "expected a string like 'cpu' or 'cuda:0', got 1.5"),
    ],
)
def test_device_errors(spec, match):
    with pytest.raises(ember.DeviceError, match=match):
        ember.device(spec)


def test_cuda_queries():
    assert isinstance(ember.cuda.is_available(), bool)
    assert isinstance(ember.cuda.device_count(), int)
    if NO_GPU:
        assert ember.cuda.device_count() == 0


def test_cpu_tensor_device():
    x = ember.ones(2)
    assert x.device == ember.device("cpu") and not x.is_cuda and x.get_device() == -1
    assert x.device.xp.__name__ == "numpy"


@pytest.mark.skipif(not NO_GPU, reason="a GPU is present")
@pytest.mark.parametrize(
    "expr",
    [
        "ember.zeros(2, device='cuda')",
        "ember.ones(2, device=ember.device('cuda:0'))",
        "ember.tensor([1.0], device='cuda')",
        "ember.arange(3, device='cuda')",
        "ember.rand(2, device='cuda')",
        "ember.randn(2, device='cuda')",
        "ember.eye(2, device='cuda')",
        "ember.zeros_like(ember.ones(2), device='cuda')",
        "ember.ones(2).cuda()",
        "ember.ones(2).to('cuda:1')",
        "ember.ones(2).to(device='cuda', dtype=ember.float16)",
        "ember.ones(2).type(ember.cuda.FloatTensor)",
        "ember.cuda.FloatTensor([1.0])",
        "ember.cuda.current_device()",
        "ember.cuda.synchronize()",
        "ember.device('cuda').xp",
    ],
)
def test_cuda_without_gpu_is_a_clear_error(expr):
    with pytest.raises(ember.DeviceError, match=r"cuda is not available: CuPy could not be loaded"):
        eval(expr, {"ember": ember})


@pytest.mark.skipif(not NO_GPU, reason="a GPU is present")
def test_cuda_error_says_how_to_fix():
    with pytest.raises(ember.DeviceError, match=r"install ember\[cuda12\] or ember\[cuda13\]"):
        ember.zeros(1, device="cuda")
    ember.cuda.manual_seed(0)  # a no-op without a GPU
    ember.cuda.manual_seed_all(0)


@pytest.mark.skipif(NO_GPU, reason="needs a GPU")
def test_cuda_roundtrip():
    x = ember.arange(6.0).reshape(2, 3)
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device("cuda:0") and g.get_device() == 0
    assert "device='cuda:0'" in repr(g)
    assert g.cpu().tolist() == x.tolist()
    assert ember.zeros(2, device="cuda").device.type == "cuda"
    assert ember.rand(2, device="cuda").is_cuda
    assert ember.eye(2, device="cuda").cpu().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert isinstance(ember.ones(1, device="cuda"), ember.cuda.FloatTensor)
    w = ember.ones(2, requires_grad=True)
    (w.cuda() * 2).sum().backward()
    assert w.grad.device.type == "cpu" and w.grad.tolist() == [2.0, 2.0]
