"""Autograd misuse gives errors that name the cause (each message is checked)."""

import pytest

import ember
from ember import AutogradError


def test_in_place_on_leaf_that_requires_grad():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(AutogradError, match=r"add_: a leaf tensor that requires grad .*\(3,\)"):
        x.add_(1)
    with pytest.raises(AutogradError, match="leaf tensor that requires grad"):
        x *= 2
    with ember.no_grad():
        x.add_(1)  # allowed: the optimizer's update
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_in_place_change_of_a_saved_input_names_op_shape_and_versions():
    x = ember.ones(2, 3, requires_grad=True)
    a = x * 2
    y = a * a  # MulBackward0 saves a
    a.add_(1)
    with pytest.raises(
        AutogradError,
        match=r"MulBackward0: .*modified by an inplace operation: input 0 \[ember.float32 of "
        r"shape \(2, 3\)\] \(output of AddBackward0\) is at version 1; expected version 0",
    ):
        y.sum().backward()


def test_in_place_change_of_a_saved_output():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its output
    z = y.sum()
    with ember.no_grad():
        y.mul_(2)
    with pytest.raises(
        AutogradError,
        match=r"ExpBackward0: .*its output .*shape \(3,\).*version 1; expected "
        r"version 0",
    ):
        z.backward()


def test_version_counter_is_shared_by_views():
    x = ember.ones(4, requires_grad=True)
    a = x * 1
    y = a * a
    v = a[1:]  # a view: shares a's version counter
    with ember.no_grad():
        v.mul_(3)
    assert a._version[0] == 1
    with pytest.raises(AutogradError, match=r"MulBackward0: .*shape \(4,\).*at version 1"):
        y.sum().backward()


def test_second_backward_through_freed_graph():
    x = ember.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(
        AutogradError, match="backward through the graph a second time.*retain_graph"
    ):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = ember.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_backward_on_non_scalar_without_gradient_names_the_shape():
    x = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(
        AutogradError, match=r"only for scalar outputs\noutput 0 has shape \(2, 3\)"
    ):
        (x * 2).backward()


def test_gradient_of_wrong_shape():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(
        AutogradError, match=r"gradient 0 has shape \(2,\).*output 0 has shape \(3,\)"
    ):
        (x * 2).backward(ember.ones(2))


def test_backward_of_tensor_that_does_not_require_grad():
    with pytest.raises(AutogradError, match="does not require grad and does not have a grad_fn"):
        (ember.ones(2) * 2).sum().backward()
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        y = (x * 2).sum()
    with pytest.raises(AutogradError, match="does not require grad"):
        y.backward()


def test_grad_wrt_tensor_that_does_not_require_grad():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match=r"does not require grad: input 1 \(shape \(3,\)\)"):
        ember.autograd.grad((x * 2).sum(), [x, ember.ones(3)])


def test_unused_input_without_allow_unused():
    x = ember.ones(2, requires_grad=True)
    z = ember.ones(3, requires_grad=True)
    with pytest.raises(AutogradError, match=r"input 1 \(shape \(3,\)\) .*not .*used.*allow_unused"):
        ember.autograd.grad((x * 2).sum(), [x, z])


def test_requires_grad_on_non_leaf():
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(AutogradError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(AutogradError, match="leaf"):
        y.requires_grad_(False)


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.bool])
def test_requires_grad_on_integer_tensor(dtype):
    with pytest.raises(ember.DTypeError, match="floating point"):
        ember.zeros(2, dtype=dtype).requires_grad_()
    with pytest.raises(ember.DTypeError, match="floating point"):
        ember.tensor([1, 2], dtype=dtype, requires_grad=True)


def test_grad_requires_inputs():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match="at least one input"):
        ember.autograd.grad((x * 2).sum(), [])


def test_backward_inputs_must_not_be_empty():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match="should not be empty"):
        (x * 2).sum().backward(inputs=[])


def test_too_many_gradients():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match="2 gradients for 1 outputs"):
        ember.autograd.backward([(x * 2).sum()], [ember.ones(()), ember.ones(())])
