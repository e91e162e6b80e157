"""ember.func against torch.func: a table of functions, each checked for values and
derivatives (grad, jacrev, jacfwd, hessian, vjp, jvp, vmap, nesting) in float64."""

import numpy as np
import pytest

import ember
import ember.func as EF

torch = pytest.importorskip("torch")
TF = torch.func


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def to_np(x):
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(to_np(v) for v in x)
    return x if isinstance(x, np.ndarray) else x.detach().numpy()


def same(e, t):
    e, t = to_np(e), to_np(t)
    if isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t)
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
    else:
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10)


# name -> (function written with tensor methods and `lib` (ember or torch), argument shapes)
# Scalar-valued functions get grad/hessian; every function gets jacrev/jacfwd/vjp/jvp/vmap.
W1, W2 = rnd(3, 4, seed=1), rnd(4, 2, seed=2)


def poly(lib, x):
    return (x**3 - 2 * x**2 + x).sum()


def mlp_loss(lib, x):
    w1, w2 = lib.tensor(W1), lib.tensor(W2)
    h = (x @ w1).tanh()
    return ((h @ w2) ** 2).mean()


def softmax_xent(lib, z):
    return -(z.log_softmax(-1)[..., 1]).sum()


def vector_fn(lib, x):
    return x.sin() * x.exp()


def two_args(lib, a, b):
    return (a * b.cos()).sum() + (a**2).sum()


CASES = {
    "polynomial": (poly, [(3,)], True),
    "mlp_loss": (mlp_loss, [(2, 3)], True),
    "softmax_xent": (softmax_xent, [(2, 4)], True),
    "vector": (vector_fn, [(3,)], False),
    "two_args": (two_args, [(3,), (3,)], True),
}


def inputs(shapes):
    arrays = [rnd(*s, seed=10 + i) for i, s in enumerate(shapes)]
    return [ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


@pytest.mark.parametrize("name", CASES)
def test_jacobians_vjp_jvp(name):
    fn, shapes, _ = CASES[name]
    e_in, t_in = inputs(shapes)
    nums = tuple(range(len(shapes)))
    for api in ("jacrev", "jacfwd"):
        same(
            getattr(EF, api)(lambda *a: fn(ember, *a), argnums=nums)(*e_in),
            getattr(TF, api)(lambda *a: fn(torch, *a), argnums=nums)(*t_in),
        )
    e_out, e_fn = EF.vjp(lambda *a: fn(ember, *a), *e_in)
    t_out, t_fn = TF.vjp(lambda *a: fn(torch, *a), *t_in)
    same(e_out, t_out)
    cot = rnd(*t_out.shape, seed=5)
    same(e_fn(ember.tensor(cot)), t_fn(torch.tensor(cot)))
    tans = [rnd(*s, seed=20 + i) for i, s in enumerate(shapes)]
    same(
        EF.jvp(lambda *a: fn(ember, *a), tuple(e_in), tuple(ember.tensor(v) for v in tans)),
        TF.jvp(lambda *a: fn(torch, *a), tuple(t_in), tuple(torch.tensor(v) for v in tans)),
    )


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2]])
def test_grad_hessian_and_nesting(name):
    fn, shapes, _ = CASES[name]
    e_in, t_in = inputs(shapes)
    nums = tuple(range(len(shapes)))
    same(
        EF.grad(lambda *a: fn(ember, *a), argnums=nums)(*e_in),
        TF.grad(lambda *a: fn(torch, *a), argnums=nums)(*t_in),
    )
    same(
        EF.grad_and_value(lambda *a: fn(ember, *a))(*e_in),
        TF.grad_and_value(lambda *a: fn(torch, *a))(*t_in),
    )
    same(EF.hessian(lambda *a: fn(ember, *a))(*e_in), TF.hessian(lambda *a: fn(torch, *a))(*t_in))
    # jacrev of grad and grad of a scalar of grad: second derivatives through nesting
    same(
        EF.jacrev(EF.grad(lambda *a: fn(ember, *a)))(*e_in),
        TF.jacrev(TF.grad(lambda *a: fn(torch, *a)))(*t_in),
    )
    same(
        EF.grad(lambda *a: EF.grad(lambda *b: fn(ember, *b))(*a).sin().sum())(*e_in),
        TF.grad(lambda *a: TF.grad(lambda *b: fn(torch, *b))(*a).sin().sum())(*t_in),
    )


@pytest.mark.parametrize("name", CASES)
def test_vmap_matches_torch_and_the_loop(name):
    fn, shapes, _ = CASES[name]
    batched = [(4, *s) for s in shapes]
    e_in, t_in = inputs(batched)
    e = EF.vmap(lambda *a: fn(ember, *a))(*e_in)
    same(e, torch.func.vmap(lambda *a: fn(torch, *a))(*t_in))
    loop = ember.stack([fn(ember, *(x[i] for x in e_in)) for i in range(4)])
    same(e, loop)
    same(
        EF.vmap(EF.jacrev(lambda *a: fn(ember, *a)))(*e_in),
        TF.vmap(TF.jacrev(lambda *a: fn(torch, *a)))(*t_in),
    )


def test_grad_of_grad_is_third_derivative():
    e = EF.grad(EF.grad(EF.grad(lambda x: x**4)))(ember.tensor(2.0, dtype=ember.float64))
    t = TF.grad(TF.grad(TF.grad(lambda x: x**4)))(torch.tensor(2.0, dtype=torch.float64))
    same(e, t)


def test_results_do_not_require_grad_unless_the_caller_differentiates():
    x = ember.tensor([1.0, 2.0])
    assert not EF.grad(lambda t: (t**2).sum())(x).requires_grad
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    g = EF.grad(lambda t: (w * t).sum())(x)  # d/dt = w: differentiable w.r.t. w
    assert g.requires_grad
    tw = torch.tensor([3.0, 4.0], requires_grad=True)
    tg = TF.grad(lambda t: (tw * t).sum())(torch.tensor([1.0, 2.0]))
    assert tg.requires_grad
    (gw,) = ember.autograd.grad(g.sum(), w)
    same(gw, torch.autograd.grad(tg.sum(), tw)[0])


def test_has_aux_and_pytree_arguments():
    e = EF.grad(lambda p: ((p["a"] * p["b"]).sum(), p["a"] + 1), has_aux=True)(
        {"a": ember.ones(2), "b": ember.tensor([2.0, 3.0])}
    )
    t = TF.grad(lambda p: ((p["a"] * p["b"]).sum(), p["a"] + 1), has_aux=True)(
        {"a": torch.ones(2), "b": torch.tensor([2.0, 3.0])}
    )
    same(e, t)
    e = EF.jacrev(lambda a: {"x": a * 2, "y": a.sum()})(ember.ones(2))
    t = TF.jacrev(lambda a: {"x": a * 2, "y": a.sum()})(torch.ones(2))
    same(e, t)


def test_vmap_dims_and_structures():
    x = rnd(3, 4, seed=3)
    ex, tx = ember.tensor(x), torch.tensor(x)
    for in_dims, out_dims in [(1, 0), (0, 1), (-1, -1)]:
        same(
            EF.vmap(lambda a: a * 2, in_dims=in_dims, out_dims=out_dims)(ex),
            TF.vmap(lambda a: a * 2, in_dims=in_dims, out_dims=out_dims)(tx),
        )
    same(
        EF.vmap(lambda d, s: d["a"] * s, in_dims=({"a": 0}, None))({"a": ex}, ember.tensor(2.0)),
        TF.vmap(lambda d, s: d["a"] * s, in_dims=({"a": 0}, None))({"a": tx}, torch.tensor(2.0)),
    )
    e = EF.vmap(lambda a: (a.sum(), a), out_dims=(0, 1), chunk_size=2)(ex)
    same(e, TF.vmap(lambda a: (a.sum(), a), out_dims=(0, 1), chunk_size=2)(tx))
    same(
        EF.vmap(EF.vmap(ember.dot))(ex[None], ex[None]),
        TF.vmap(TF.vmap(torch.dot))(tx[None], tx[None]),
    )


def test_vmap_randomness():
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        EF.vmap(lambda a: ember.rand(()) + a)(ember.zeros(3))
    same_draws = EF.vmap(lambda a: ember.rand(()) + a, randomness="same")(ember.zeros(3))
    assert len(set(same_draws.tolist())) == 1
    different = EF.vmap(lambda a: ember.rand(()) + a, randomness="different")(ember.zeros(3))
    assert len(set(different.tolist())) == 3


def torch_message(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


ERRORS = {
    "batch sizes": (
        lambda F, lib: F.vmap(lib.add)(lib.ones(4, 3), lib.ones(3, 3)),
        "same size in the mapped dimension, got sizes [4, 3]",
    ),
    "in_dims structure": (
        lambda F, lib: F.vmap(lib.add, in_dims=(0,))(lib.ones(4), lib.ones(4)),
        "in_dims is not compatible with the structure of `inputs`",
    ),
    "in_dim range": (
        lambda F, lib: F.vmap(lib.sin, in_dims=2)(lib.ones(4, 3)),
        "expected in_dim to satisfy -2 <= in_dim < 2",
    ),
    "in_dims type": (
        lambda F, lib: F.vmap(lib.sin, in_dims=None)(lib.ones(4)),
        "expected `in_dims` to be int or a (potentially nested) tuple",
    ),
    "non-tensor mapped": (
        lambda F, lib: F.vmap(lib.sin)(1.0),
        "We cannot vmap over non-Tensor arguments",
    ),
    "nothing mapped": (
        lambda F, lib: F.vmap(lib.sin, in_dims=(None,))(lib.ones(2)),
        "Expected at least one Tensor to vmap over",
    ),
    "no inputs": (lambda F, lib: F.vmap(lib.sin)(), "got no inputs"),
    "non-tensor output": (
        lambda F, lib: F.vmap(lambda a: 1.0)(lib.ones(2)),
        "must only return Tensors, got type <class 'float'>",
    ),
    "chunk size": (
        lambda F, lib: F.vmap(lib.sin, chunk_size=0)(lib.ones(2)),
        "chunk_size should be None or greater than 0",
    ),
    "randomness flag": (
        lambda F, lib: F.vmap(lib.sin, randomness="bad")(lib.ones(2)),
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got bad",
    ),
    "grad of non-scalar": (
        lambda F, lib: F.grad(lambda a: a * 2)(lib.ones(2)),
        "Expected f(*args) to return a scalar Tensor, got tensor with 1 dims",
    ),
    "argnum range": (
        lambda F, lib: F.grad(lambda a: a.sum(), argnums=3)(lib.ones(2)),
        "Got argnum=3, but only 1 positional inputs",
    ),
    "argnums unique": (
        lambda F, lib: F.grad(lambda a: a.sum(), argnums=(0, 0))(lib.ones(2)),
        "argnums elements must be unique, got (0, 0)",
    ),
    "has_aux shape": (
        lambda F, lib: F.grad(lambda a: a.sum(), has_aux=True)(lib.ones(2)),
        "output of function f should be a tuple: (output, aux) if has_aux is True",
    ),
    "jvp primals": (
        lambda F, lib: F.jvp(lib.sin, lib.ones(2), lib.ones(2)),
        "Expected primals to be a tuple",
    ),
    "grad of non-tensor": (
        lambda F, lib: F.grad(lambda a: a.sum())(1.0),
        "Thing passed to transform API must be Tensor, got <class 'float'>",
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_say_what_torch_says(name):
    call, substance = ERRORS[name]
    assert substance in torch_message(lambda: call(TF, torch))
    assert substance in torch_message(lambda: call(EF, ember))
