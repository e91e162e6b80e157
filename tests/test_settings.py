"""Process-wide settings against torch's: deterministic algorithms, thread counts, and
the anomaly flag at the package root (ember/_config.py)."""

import pytest
import torch

import ember
from ember import _config


@pytest.fixture(autouse=True)
def _restore_settings():
    saved = dict(vars(_config.settings))
    t_det, t_warn = (
        torch.are_deterministic_algorithms_enabled(),
        (torch.is_deterministic_algorithms_warn_only_enabled()),
    )
    t_threads = torch.get_num_threads()
    yield
    for k, v in saved.items():
        setattr(_config.settings, k, v)
    for k in list(vars(_config.settings)):
        if k not in saved:
            delattr(_config.settings, k)
    torch.use_deterministic_algorithms(t_det, warn_only=t_warn)
    torch.set_num_threads(t_threads)


@pytest.mark.parametrize("mode, warn_only", [(True, False), (True, True), (False, True)])
def test_deterministic_algorithms_flags_as_torch(mode, warn_only):
    for m in (torch, ember):
        m.use_deterministic_algorithms(mode, warn_only=warn_only)
    assert (
        ember.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    )
    assert (
        ember.is_deterministic_algorithms_warn_only_enabled()
        == torch.is_deterministic_algorithms_warn_only_enabled()
    )


def test_deterministic_algorithms_want_a_bool():
    for m in (torch, ember):
        with pytest.raises(TypeError, match="must be bool, not int"):
            m.use_deterministic_algorithms(1)


def test_set_num_threads_is_read_back_and_caps_the_copy_workers(monkeypatch):
    from ember.ops import conv

    for m in (torch, ember):
        m.set_num_threads(1)
    assert ember.get_num_threads() == torch.get_num_threads() == 1
    monkeypatch.setattr(conv, "_WORKERS", 4)
    monkeypatch.setattr(conv, "_PARALLEL_BYTES", 0)
    used = []
    monkeypatch.setattr(conv, "_pool", None)

    class Pool:
        def submit(self, fn, i):
            used.append(i)
            fn(i)

            class Done:
                def result(self):
                    return None

            return Done()

    monkeypatch.setattr(conv, "_pool", Pool())
    monkeypatch.setattr(conv, "_pool_pid", __import__("os").getpid())
    import numpy as np

    src = np.arange(64.0).reshape(8, 8)
    dst = np.zeros_like(src)
    conv._copy(dst, src)  # capped at one thread: no pool work
    assert used == [] and (dst == src).all()
    ember.set_num_threads(2)
    dst[...] = 0
    conv._copy(dst, src)
    assert used == [1] and (dst == src).all()


def test_set_num_threads_rejects_zero():
    for m in (torch, ember):
        with pytest.raises(RuntimeError):
            m.set_num_threads(0)


def test_is_anomaly_enabled_at_the_root():
    for m in (torch, ember):
        assert m.is_anomaly_enabled() is False
        with m.autograd.detect_anomaly():
            assert m.is_anomaly_enabled() is True
        assert m.is_anomaly_enabled() is False
