"""detect_anomaly: stop at the first op making NaN/Inf, naming the op and the user's line."""

import pytest

import ember
from ember import AutogradError
from ember.autograd import detect_anomaly, is_anomaly_enabled, set_detect_anomaly


def test_forward_nan_names_op_and_line():
    x = ember.tensor([1.0, -1.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AutogradError) as info:
            x.log()  # the line the message must show
    msg = str(info.value)
    assert "Log produced NaN values in its forward output of shape (2,)" in msg
    assert __file__ in msg and "x.log()  # the line the message must show" in msg
    assert "test_forward_nan_names_op_and_line" in msg
    assert "NaN" in msg and not is_anomaly_enabled()


def test_backward_inf_names_node_and_forward_line():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()  # finite forward; the gradient at 0 is Inf
        with pytest.raises(AutogradError) as info:
            y.sum().backward()
    msg = str(info.value)
    assert "function 'SqrtBackward0' returned Inf values in its gradient for input 0" in msg
    assert "y = x.sqrt()  # finite forward" in msg and __file__ in msg


def test_backward_nan_in_user_function():
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = ember.ones(2, requires_grad=True)
    with detect_anomaly():
        y = Bad.apply(x)
        with pytest.raises(AutogradError, match=r"'BadBackward' returned NaN.*y = Bad.apply\(x\)"):
            y.sum().backward()


def test_without_anomaly_mode_nan_passes_silently():
    x = ember.tensor([-1.0], requires_grad=True)
    y = x.log()
    y.sum().backward()
    assert x.grad.tolist() == [-1.0]


def test_set_detect_anomaly_plain_call_and_context():
    try:
        set_detect_anomaly(True)
        assert is_anomaly_enabled()
    finally:
        set_detect_anomaly(False)
    assert not is_anomaly_enabled()
    with set_detect_anomaly(True):
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()


def test_detect_anomaly_as_decorator():
    @detect_anomaly()
    def f(x):
        return x.log()

    with pytest.raises(AutogradError, match="Log produced NaN"):
        f(ember.tensor([-1.0]))
    assert not is_anomaly_enabled()


def test_no_false_alarm_on_finite_values():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        (x.log() * x).sum().backward()
    assert x.grad is not None


def test_check_nan_false_keeps_anomaly_mode_on_as_torch():
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in (torch, ember):
            assert m.is_anomaly_check_nan_enabled() is True
            with m.autograd.detect_anomaly(check_nan=False):
                assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (True, False)
                x = m.tensor([0.0, 1.0], requires_grad=True)
                y = x.log()  # -inf: no error without check_nan
                y.sum().backward()  # the gradient 1/0 = inf: no error either
                assert m.isinf(x.grad[0])
            with m.autograd.set_detect_anomaly(True, check_nan=False):
                assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (True, False)
            assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (False, True)
