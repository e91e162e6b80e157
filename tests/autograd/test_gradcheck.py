"""gradcheck / gradgradcheck: pass on right gradients, fail (with a message) on wrong ones."""

import numpy as np
import pytest

import ember
from ember.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def x64(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a, requires_grad=True)


class WrongBackward(Function):
    """x * y whose backward forgets a factor: d/dx should be g * y."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g, g * x


class WrongSecondOrder(Function):
    """sin with a right first derivative but a backward that is not differentiable correctly:
    it uses cos computed from a detached x, so the second derivative is lost."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.detach().cos()


@pytest.mark.parametrize("fast_mode", [False, True])
def test_passes_on_correct_gradients(fast_mode):
    x, w = x64(3, 4), x64(4, 2, seed=1)
    assert gradcheck(lambda a, b: a.mm(b).tanh(), (x, w), fast_mode=fast_mode)
    assert gradgradcheck(lambda a, b: a.mm(b).tanh(), (x, w), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_detects_a_wrong_backward(fast_mode):
    x, y = x64(3), x64(3, seed=1)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongBackward.apply, (x, y), fast_mode=fast_mode)
    assert (
        gradcheck(WrongBackward.apply, (x, y), raise_exception=False, fast_mode=fast_mode) is False
    )


def test_full_mode_message_names_output_and_input_and_shows_both():
    x, y = x64(2), x64(2, seed=1)
    with pytest.raises(GradcheckError, match=r"output 0 with respect to input 0,\nnumerical:"):
        gradcheck(WrongBackward.apply, (x, y))


def test_input_with_a_correct_gradient_passes_alone():
    x = x64(3)
    y = ember.tensor(np.ones(3))  # only y's gradient is wrong, and y needs none
    assert gradcheck(WrongBackward.apply, (x, y))


def test_gradgradcheck_detects_a_wrong_second_order():
    x = x64(4)
    assert gradcheck(WrongSecondOrder.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(WrongSecondOrder.apply, (x,))


def test_several_outputs_non_tensor_args_and_0d():
    x = x64()
    y = x64(3, seed=2)
    assert gradcheck(lambda a, b, k: (a * b * k, (b * k).exp()), (x, y, 2.0))


def test_inputs_are_restored():
    x = x64(3)
    before = x.detach().numpy().copy()
    gradcheck(lambda a: a.sin(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)


def test_float32_input_warns():
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="not float64"):
        gradcheck(lambda a: a * 2, (x,), atol=0.1, rtol=0.1)


def test_needs_an_input_that_requires_grad():
    with pytest.raises(ember.AutogradError, match="no input requires grad"):
        gradcheck(lambda a: a * 2, (ember.ones(2, dtype=ember.float64),))
