"""inference_mode and is_inference_mode_enabled as PyTorch's: nested in no_grad, enable_grad,
inference_mode(False), as a decorator, restored on exit and on an exception."""

import pytest
import torch

import ember


def _trace(lib):
    """What each mode says inside: (is_grad_enabled, is_inference_mode_enabled) at each step."""
    seen = [(lib.is_grad_enabled(), lib.is_inference_mode_enabled())]

    def look():
        seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))

    with lib.inference_mode():
        look()
        with lib.inference_mode(False):
            look()
        look()
        with lib.enable_grad():
            look()
    look()
    with lib.no_grad():
        with lib.inference_mode(mode=False):
            look()
        with lib.inference_mode():
            look()
        look()

    @lib.inference_mode()
    def f():
        look()

    @lib.inference_mode
    def g():
        look()

    f()
    g()
    look()
    with pytest.raises(ValueError):
        with lib.inference_mode():
            raise ValueError
    look()
    return seen


def test_inference_mode_flags_match_torch():
    assert _trace(ember) == _trace(torch)


def test_inference_mode_records_no_history():
    x = ember.ones(2, requires_grad=True)
    with ember.inference_mode():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with ember.inference_mode(False):
        assert (x * 2).requires_grad
