"""User-defined ops: ember.autograd.Function."""

import re

import numpy as np
import pytest

import ember
from ember import AutogradError
from ember.autograd import Function, gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2


class ScaleShift(Function):
    """Non-tensor arguments, needs_input_grad, a None gradient."""

    @staticmethod
    def forward(ctx, x, scale, shift):
        ctx.scale = scale
        ctx.needs = ctx.needs_input_grad
        return x * scale + shift

    @staticmethod
    def backward(ctx, g):
        gshift = g if ctx.needs_input_grad[2] else None
        return g * ctx.scale, None, gshift


class SinCos(Function):
    """Two outputs; saves both of its outputs."""

    @staticmethod
    def forward(ctx, x):
        s, c = x.sin(), x.cos()
        ctx.save_for_backward(s, c)
        return s, c

    @staticmethod
    def backward(ctx, gs, gc):
        s, c = ctx.saved_tensors
        return gs * c - gc * s


class Exp(Function):
    """Saves its own output."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_forward_backward_and_node_name():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    assert re.fullmatch(
        r"<ember.autograd.function.CubeBackward object at 0x[0-9a-f]+>", repr(y.grad_fn)
    )
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_forward_runs_without_recording():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(ember.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Probe.apply(ember.ones(1, requires_grad=True))
    assert seen == [False]


def test_non_tensor_args_and_needs_input_grad():
    x = ember.ones(2, requires_grad=True)
    b = ember.ones(2)
    y = ScaleShift.apply(x, 3.0, b)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and b.grad is None
    assert y.grad_fn.op.ctx.needs == (True, False, False)


def test_no_history_without_requires_grad_or_under_no_grad():
    assert Cube.apply(ember.ones(2)).grad_fn is None
    with ember.no_grad():
        assert not Cube.apply(ember.ones(2, requires_grad=True)).requires_grad


def test_gradcheck_and_gradgradcheck():
    x = ember.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    assert gradcheck(lambda t: SinCos.apply(t), (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_create_graph_through_user_backward_matches_torch():
    a = np.array([0.5, -1.0, 2.0])
    x = ember.tensor(a, requires_grad=True)
    (g,) = ember.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    tx = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((tx**3).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy())


def test_multiple_outputs_and_unused_output_gets_zero_grad():
    a = np.array([0.3, 1.2])
    x = ember.tensor(a, requires_grad=True)
    s, c = SinCos.apply(x)
    assert s.grad_fn.name() == c.grad_fn.name() == "SinCosBackward"
    (s * 2 + c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(a) - np.sin(a))
    x.grad = None
    s, c = SinCos.apply(x)
    s.sum().backward()  # c got no gradient: backward sees zeros
    np.testing.assert_allclose(x.grad.numpy(), np.cos(a))


def test_saved_output_and_second_backward_is_refused():
    x = ember.ones(2, requires_grad=True)
    y = Exp.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.e * np.ones(2), rtol=1e-6)
    with pytest.raises(AutogradError, match="ExpBackward: trying to backward through the graph"):
        y.backward()


def test_in_place_change_of_saved_tensor_is_detected():
    x = ember.ones(2, requires_grad=True)
    h = x * 1
    y = Cube.apply(h)
    with ember.no_grad():
        h.mul_(2)
    with pytest.raises(
        AutogradError,
        match=r"CubeBackward: .*modified by an inplace .*version 1; "
        r"expected version 0",
    ):
        y.sum().backward()


def test_mark_non_differentiable_and_set_materialize_grads():
    class SortIdx(Function):
        @staticmethod
        def forward(ctx, x):
            idx = ember.tensor(np.argsort(x.detach().numpy()))
            y = x * 2
            mask = y > 0
            ctx.mark_non_differentiable(mask)
            ctx.set_materialize_grads(False)
            return y, mask, idx

        @staticmethod
        def backward(ctx, gy, gmask, gidx):
            assert gmask is None and gidx is None
            return gy * 2

    x = ember.tensor([2.0, -1.0], requires_grad=True)
    y, mask, idx = SortIdx.apply(x)
    assert y.requires_grad and not mask.requires_grad and not idx.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_returning_an_input_gives_a_new_tensor():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ember.ones(2, requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_broadcast_gradient_is_summed_and_dtype_cast():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return ember.ones(3, 2, dtype=ember.float64) * g.double()

    x = ember.ones(2, requires_grad=True)  # float32
    Bad.apply(x).backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype is ember.float32


def test_wrong_gradient_count_shape_and_non_tensor_position():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return ember.ones(5)

    class GradForNumber(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(
        AutogradError,
        match=r"TooFewBackward returned an incorrect number of "
        r"gradients \(expected 2, got 1\)",
    ):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(
        AutogradError,
        match=r"WrongShapeBackward returned an invalid gradient at "
        r"index 0 - got shape \(5,\) but expected shape compatible with \(2,\)",
    ):
        WrongShape.apply(x).sum().backward()
    with pytest.raises(
        AutogradError, match="position 1, but the corresponding forward input was not a Tensor"
    ):
        GradForNumber.apply(x, 2.0).sum().backward()


def test_save_for_backward_only_takes_tensors():
    class SavesNumber(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(AutogradError, match="argument 1 is a int"):
        SavesNumber.apply(ember.ones(1, requires_grad=True))


def test_setup_context_style():
    class Mul(Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = ember.tensor([2.0], requires_grad=True)
    y = ember.tensor([5.0], requires_grad=True)
    Mul.apply(x, y).sum().backward()
    assert (x.grad.item(), y.grad.item()) == (5.0, 2.0)


def test_once_differentiable_backward_records_nothing():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = ember.ones(2, requires_grad=True)
    (g,) = ember.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 2.0] and not g.requires_grad


def test_instantiating_a_function_is_refused():
    with pytest.raises(AutogradError, match=r"call Cube.apply\(...\)"):
        Cube()


def test_ctx_and_graph_are_freed():
    import gc
    import weakref

    x = ember.ones(2, requires_grad=True)
    y = Exp.apply(x)
    ref = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert ref() is None  # no reference cycle through the saved output
    finally:
        gc.enable()


def test_saved_output_of_multi_output_function_is_differentiable():
    # SinCos saves its outputs: their history leads back to its own node
    a = np.array([0.3, 1.2, -0.7])
    x = ember.tensor(a, requires_grad=True)
    s, c = SinCos.apply(x)
    (g,) = ember.autograd.grad((s * 2 + c).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    tx = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((tx.sin() * 2 + tx.cos()).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-10)
