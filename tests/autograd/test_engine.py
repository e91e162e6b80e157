"""The autograd engine and the Tensor autograd API, against PyTorch where it has an answer."""

import threading
import warnings
import weakref

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def pair(*arrays, requires_grad=True):
    """The same float64 data as ember and torch leaves."""
    e = [ember.tensor(a).requires_grad_(requires_grad) for a in arrays]
    t = [torch.tensor(a).requires_grad_(requires_grad) for a in arrays]
    return e, t


def close(e, t, tol=1e-10):
    assert e is not None and t is not None
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=tol, rtol=tol)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- backward / grad ------------------------------------------------------------------------


def net(m, x, w1, w2):
    return ((x.mm(w1).tanh().mm(w2) - 1) ** 2).sum()


def test_backward_matches_torch_on_a_small_net():
    (ex, ew1, ew2), (tx, tw1, tw2) = pair(rnd(4, 5), rnd(5, 3, seed=1), rnd(3, 2, seed=2))
    net(ember, ex, ew1, ew2).backward()
    net(torch, tx, tw1, tw2).backward()
    for e, t in [(ex, tx), (ew1, tw1), (ew2, tw2)]:
        close(e.grad, t.grad)


def test_grad_returns_and_does_not_touch_dot_grad():
    (ex, ew), (tx, tw) = pair(rnd(3), rnd(3, seed=1))
    ge = ember.autograd.grad((ex * ew).sin().sum(), [ex, ew])
    gt = torch.autograd.grad((tx * tw).sin().sum(), [tx, tw])
    for a, b in zip(ge, gt):
        close(a, b)
    assert ex.grad is None and ew.grad is None


def test_grad_with_grad_outputs_and_several_outputs():
    (ex,), (tx,) = pair(rnd(3))
    v1, v2 = rnd(3, seed=4), rnd(3, seed=5)
    (ge,) = ember.autograd.grad(
        [ex * 2, ex.exp()], ex, grad_outputs=[ember.tensor(v1), ember.tensor(v2)]
    )
    (gt,) = torch.autograd.grad([tx * 2, tx.exp()], tx, [torch.tensor(v1), torch.tensor(v2)])
    close(ge, gt)


def test_gradient_argument_of_backward():
    (ex,), (tx,) = pair(rnd(2, 3))
    v = rnd(2, 3, seed=3)
    (ex * ex).backward(ember.tensor(v))
    (tx * tx).backward(torch.tensor(v))
    close(ex.grad, tx.grad)


def test_gradient_of_other_dtype_is_cast_to_the_output_dtype():
    x = ember.ones(2, requires_grad=True)  # float32
    (x * 2).backward(ember.ones(2, dtype=ember.float64))
    assert x.grad.dtype is ember.float32


def test_one_element_non_scalar_output_needs_no_gradient():
    x = ember.ones(1, requires_grad=True)
    (x * 3).backward()
    assert x.grad.tolist() == [3.0]


def test_grad_accumulates_across_backward_calls():
    (ex,), (tx,) = pair(rnd(3))
    for _ in range(3):
        (ex * ex).sum().backward()
        (tx * tx).sum().backward()
    close(ex.grad, tx.grad)


def test_grad_of_output_wrt_itself_and_a_non_leaf():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    gh, gx = ember.autograd.grad(y, [h, x])
    assert gh.tolist() == [6.0, 12.0] and gx.tolist() == [18.0, 36.0]
    (gy,) = ember.autograd.grad(y, y)
    assert gy.item() == 1.0


def test_pruning_skips_branches_that_do_not_reach_inputs():
    calls = []
    x = ember.ones(2, requires_grad=True)
    w = ember.ones(2, requires_grad=True)
    a = x * 2
    b = w.exp()
    b.register_hook(lambda g: calls.append("b"))
    (a + b).sum()
    ember.autograd.grad((a + b).sum(), x)
    assert calls == []  # the w branch was never walked
    ember.autograd.grad((a + b).sum(), w)
    assert calls == ["b"]


def test_backward_inputs_restricts_accumulation():
    (ex, ew), (tx, tw) = pair(rnd(3), rnd(3, seed=1))
    h = ex * ew
    (h * h).sum().backward(inputs=[ew])
    th = tx * tw
    (th * th).sum().backward(inputs=[tw])
    assert ex.grad is None and tx.grad is None
    close(ew.grad, tw.grad)


def test_backward_inputs_non_leaf_gets_grad():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [6.0, 12.0] and x.grad is None


def test_unused_input_allow_unused_and_materialize():
    x = ember.ones(2, requires_grad=True)
    z = ember.ones(3, requires_grad=True)
    y = (x * 2).sum()
    gx, gz = ember.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and gx.tolist() == [2.0, 2.0]
    gx, gz = ember.autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0, 0.0, 0.0]


def test_shared_subexpression_and_repeated_input():
    (ex,), (tx,) = pair(rnd(4))
    for x in (ex, tx):
        h = x * x
        (h * h + h.sin() * x).sum().backward()
    close(ex.grad, tx.grad)


def test_broadcast_leaf_gets_reduced_gradient():
    (eb, ex), (tb, tx) = pair(rnd(3), rnd(2, 3, seed=1))
    ((ex * eb).sum()).backward()
    ((tx * tb).sum()).backward()
    close(eb.grad, tb.grad)


def test_deep_chain_is_not_recursive():
    x = ember.ones(2, requires_grad=True)
    h = x
    for _ in range(5000):  # deeper than the recursion limit
        h = h * 1.0
    h.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_graph_is_freed_by_refcounting():
    x = ember.ones(2, requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    y.sum().backward()
    del y
    assert node() is None


def test_backward_under_no_grad_still_works():
    x = ember.ones(2, requires_grad=True)
    y = (x * 3).sum()
    with ember.no_grad():
        y.backward()
    assert x.grad.tolist() == [3.0, 3.0]


# -- .grad semantics ------------------------------------------------------------------------


def test_first_grad_does_not_alias_another_tensors_buffer():
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    v = ember.tensor([1.0, 2.0, 3.0])
    (x + w).backward(v)  # Add's vjp hands the same gradient to both inputs
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())
    assert not np.shares_memory(x.grad.numpy(), v.numpy())
    x.grad.zero_()
    assert w.grad.tolist() == [1.0, 2.0, 3.0] and v.tolist() == [1.0, 2.0, 3.0]


def _identity_with_backward(backward):
    """``x * 1`` as an ``autograd.Function`` whose backward returns ``backward(g)``."""

    class Identity(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return backward(g)

    return Identity


def test_first_grad_takes_over_a_private_buffer():
    seen = {}

    def twice(g):
        r = g * 2
        seen["array"] = weakref.ref(r._data)
        return r

    x = ember.ones(3, requires_grad=True)
    _identity_with_backward(twice).apply(x).sum().backward()
    assert x.grad._data is seen["array"]()  # no copy when nothing else can see it


@pytest.mark.parametrize("x_shape", [(5, 3), (2, 5, 3)], ids=["2-d", "batched"])
def test_linear_weight_grad_takes_over_its_product_in_the_weights_layout(x_shape):
    """F.linear's weight gradient is a transposed view of a product computed in the weight's
    layout: the leaf takes it over (no copy), C-contiguous as the weight, with PyTorch's values;
    for a batched input too (one product over all its rows)."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape), rng.standard_normal((4, 3))
    ew, tw = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ember.nn.functional.linear(ember.tensor(x), ew).square().sum().backward()
    torch.nn.functional.linear(torch.tensor(x), tw).square().sum().backward()
    g = ew.grad.numpy()
    assert g.flags.c_contiguous and not g.flags.owndata  # the product's memory, not a copy
    np.testing.assert_allclose(g, tw.grad.numpy(), rtol=1e-12)


def test_a_view_gradient_another_tensor_can_see_is_copied():
    kept = {}

    def transposed(g):
        kept["source"] = g.t().contiguous() * 1  # a tensor the caller keeps
        return kept["source"].t()  # a view of it

    x = ember.ones(2, 3, requires_grad=True)
    _identity_with_backward(transposed).apply(x).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), kept["source"].numpy())
    x.grad.zero_()
    assert kept["source"].tolist() == [[1.0, 1.0]] * 3


def _pair_with_backward(backward):
    """``(x * 1, y * 1)`` summed, as an ``autograd.Function`` whose backward returns
    ``backward(g)`` for (x, y): the pieces of a packed gradient, as a normalization's kernel
    writes its weight and bias gradients."""

    class Pair(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 1 + y * 1

        @staticmethod
        def backward(ctx, g):
            return backward(g)

    x, y = ember.zeros(3, requires_grad=True), ember.zeros(3, requires_grad=True)
    Pair.apply(x, y).sum().backward()
    return x, y


def test_disjoint_pieces_of_one_packed_gradient_are_taken_over():
    def packed(g):
        both = ember.stack([g * 2, g * 3])  # one array; each leaf gets a row of it
        return both[0], both[1]

    x, y = _pair_with_backward(packed)
    assert x.grad.tolist() == [2.0] * 3 and y.grad.tolist() == [3.0] * 3
    xa, ya = x.grad.numpy(), y.grad.numpy()
    assert xa.base is not None and xa.base is ya.base  # no copies
    x.grad.mul_(10)  # in place on one piece leaves the other alone
    assert y.grad.tolist() == [3.0] * 3 and x.grad.tolist() == [20.0] * 3


@pytest.mark.parametrize("case", ["overlapping", "kept"])
def test_pieces_others_can_see_or_that_overlap_are_copied(case):
    kept = {}

    def packed(g):
        both = kept["both"] = ember.stack([g * 2, g * 3])
        if case == "overlapping":  # two views of the same row
            del kept["both"]
            return both[0], both[0].view(3)
        return both[0], both[1]

    x, y = _pair_with_backward(packed)
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.zero_()
    assert y.grad.tolist() == ([2.0] * 3 if case == "overlapping" else [3.0] * 3)
    if case == "kept":
        assert not np.shares_memory(x.grad.numpy(), kept["both"].numpy())
        assert kept["both"].tolist() == [[2.0] * 3, [3.0] * 3]


def test_later_grads_accumulate_in_place():
    x = ember.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [5.0, 5.0, 5.0]


def test_grad_set_to_none_resets():
    x = ember.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_user_assigned_grad_accumulates():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.tensor([10.0, 20.0])
    (x * 2).sum().backward()
    assert x.grad.tolist() == [12.0, 22.0]


def test_non_leaf_grad_warns_like_torch():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y.grad  # noqa: B018  (no warning once retained)


def test_retain_grad_accumulates_and_does_not_alias():
    (ex,), (tx,) = pair(rnd(3))
    eb, tb = ex * 1, tx * 1
    ec, tc = eb + 0, tb + 0
    for t in (eb, ec, tb, tc):
        t.retain_grad()
    ec.sum().backward(retain_graph=True)
    ec.sum().backward()
    tc.sum().backward(retain_graph=True)
    tc.sum().backward()
    close(eb.grad, tb.grad)
    close(ec.grad, tc.grad)
    assert not np.shares_memory(eb.grad.numpy(), ec.grad.numpy())


def test_retain_grad_on_leaf_is_a_no_op():
    x = ember.ones(2, requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# -- hooks ----------------------------------------------------------------------------------


def test_hooks_on_leaf_and_non_leaf_match_torch():
    log = {"ember": [], "torch": []}
    (ex,), (tx,) = pair(rnd(3))
    for name, x in (("ember", ex), ("torch", tx)):
        y = x * 3
        x.register_hook(lambda g, n=name: log[n].append(("x", g.detach().numpy().copy())))
        y.register_hook(lambda g, n=name: log[n].append(("y", g.detach().numpy().copy())))
        (y * y).sum().backward()
    assert [k for k, _ in log["ember"]] == [k for k, _ in log["torch"]] == ["y", "x"]
    for (_, a), (_, b) in zip(log["ember"], log["torch"]):
        np.testing.assert_allclose(a, b)


def test_hook_return_replaces_gradient():
    (ex,), (tx,) = pair(rnd(3))
    for x in (ex, tx):
        y = x * 3
        y.register_hook(lambda g: g * 10)
        x.register_hook(lambda g: g + 1)
        y.sum().backward()
    close(ex.grad, tx.grad)


def test_hooks_run_in_autograd_grad_too():
    x = ember.ones(2, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (g,) = ember.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [30.0, 30.0]


def test_hook_handle_remove():
    x = ember.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 10)
    h.remove()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_register_hook_needs_requires_grad():
    with pytest.raises(ember.AutogradError, match="doesn't require gradient"):
        ember.ones(2).register_hook(lambda g: g)


# -- requires_grad, detach ------------------------------------------------------------------


def test_requires_grad_flags():
    x = ember.ones(2)
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    assert not (ember.ones(2) * 2).requires_grad
    x.requires_grad_(False)
    assert not (x * 2).requires_grad


def test_detach_shares_storage_and_version():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 5.0
    assert y.tolist() == [5.0, 2.0, 2.0]
    assert y._version[0] == d._version[0] == 1


def test_detach_in_place():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None


def test_grad_fn_names_and_next_functions():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    (acc, _), (const, _) = y.grad_fn.next_functions
    assert acc.name() == "AccumulateGrad" and acc.variable is x and const is None


# -- grad modes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", [ember.no_grad, ember.inference_mode, lambda: ember.set_grad_enabled(False)]
)
def test_modes_as_context_managers(mode):
    x = ember.ones(1, requires_grad=True)
    with mode():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad and ember.is_grad_enabled()


def test_modes_as_decorators():
    x = ember.ones(1, requires_grad=True)

    @ember.no_grad()
    def a(t):
        return t * 2

    @ember.no_grad
    def b(t):
        return t * 2

    @ember.inference_mode()
    def c(t):
        return t * 2

    @ember.inference_mode
    def c2(t):
        return t * 2

    @ember.set_grad_enabled(False)
    def d(t):
        return t * 2

    assert ember.is_grad_enabled()  # decorating did not switch grad off

    @ember.enable_grad
    def e(t):
        return t * 2

    for f in (a, b, c, c2, d):
        assert not f(x).requires_grad
    with ember.no_grad():
        assert e(x).requires_grad
    assert ember.is_grad_enabled()


def test_decorated_generator_runs_in_the_mode_only_while_running():
    x = ember.ones(1, requires_grad=True)

    @ember.no_grad()
    def gen():
        for _ in range(2):
            yield (x * 2).requires_grad

    g = gen()
    assert next(g) is False
    assert ember.is_grad_enabled()
    assert next(g) is False


def test_set_grad_enabled_as_a_plain_call():
    try:
        ember.set_grad_enabled(False)
        assert not ember.is_grad_enabled()
        assert not (ember.ones(1, requires_grad=True) * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()


def test_inference_mode_false_records():
    with ember.inference_mode(False):
        assert (ember.ones(1, requires_grad=True) * 2).requires_grad


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with ember.no_grad():
            raise ValueError
    assert ember.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = []

    def worker():
        seen.append(ember.is_grad_enabled())
        with ember.no_grad():
            seen.append(ember.is_grad_enabled())

    with ember.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not ember.is_grad_enabled()
    assert seen == [True, False]


def test_variable_is_a_tensor():
    v = ember.autograd.Variable(ember.ones(2), requires_grad=True)
    (v * 2).sum().backward()
    assert isinstance(v, ember.Tensor) and v.grad.tolist() == [2.0, 2.0]


def test_hook_returning_wrong_shape_or_dtype():
    x = ember.ones(2, requires_grad=True)
    x.register_hook(lambda g: g.double())
    (x * 2).sum().backward()
    assert x.grad.dtype is ember.float32
    y = ember.ones(2, requires_grad=True)
    y.register_hook(lambda g: ember.ones(3))
    with pytest.raises(ember.AutogradError, match=r"leaf of shape \(2,\) has shape \(3,\)"):
        (y * 2).sum().backward()
