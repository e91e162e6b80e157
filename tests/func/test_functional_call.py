"""functional_call, stack_module_state and the per-sample-gradients recipe against torch.func."""

import numpy as np
import pytest

import ember
import ember.func as EF

torch = pytest.importorskip("torch")
TF = torch.func


def pair(lib, seed=0):
    """The same small model (Linear-Tanh-Linear) in ember and torch, float64."""
    rng = np.random.default_rng(seed)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def close(e, t):
    if isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            close(e[k], t[k])
        return
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_per_sample_gradients_recipe():
    """torch's tutorial: vmap(grad(loss through functional_call)) over a batch."""
    x = np.random.default_rng(1).standard_normal((5, 3))
    y = np.array([0, 1, 1, 0, 1])
    out = []
    for lib, F in ((ember, EF), (torch, TF)):
        model = pair(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi, model=model, lib=lib, F=F):
            logits = F.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(logits, yi.unsqueeze(0))

        out.append(F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(x), lib.tensor(y)))
    close(*out)
    # and each row is the gradient of that sample alone (the loop the recipe replaces)
    model = pair(ember)
    for i in range(5):
        model.zero_grad()
        ember.nn.functional.cross_entropy(
            model(ember.tensor(x[i : i + 1])), ember.tensor(y[i : i + 1])
        ).backward()
        for k, p in model.named_parameters():
            close(out[0][k][i], p.grad)


def test_functional_call_restores_and_matches():
    e, t = pair(ember), pair(torch)
    new = np.random.default_rng(7).standard_normal((4, 3))
    x = np.ones((2, 3))
    got_e = EF.functional_call(e, {"0.weight": ember.tensor(new)}, ember.tensor(x))
    got_t = TF.functional_call(t, {"0.weight": torch.tensor(new)}, torch.tensor(x))
    close(got_e, got_t)
    assert isinstance(e[0].weight, ember.nn.Parameter)
    close(e(ember.tensor(x)), t(torch.tensor(x)))  # the module's own weights are back


def test_restored_after_an_error():
    e = pair(ember)
    weight = e[0].weight
    with pytest.raises(ember.ShapeError):
        EF.functional_call(e, {"0.weight": ember.ones(2, 2, dtype=ember.float64)}, ember.ones(1, 3))
    assert e[0].weight is weight and e[0]._parameters["weight"] is weight


def tied(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2, bias=False)
            self.b = lib.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Tied()


def test_tied_weights_follow_each_other():
    e, t = tied(ember), tied(torch)
    with torch.no_grad():
        t.a.weight.copy_(torch.tensor(e.a.weight.detach().numpy()))
    out_e = EF.functional_call(e, {"a.weight": ember.eye(2) * 2}, ember.ones(1, 2))
    out_t = TF.functional_call(t, {"a.weight": torch.eye(2) * 2}, torch.ones(1, 2))
    close(out_e, out_t)
    out_e = EF.functional_call(
        e, {"a.weight": ember.eye(2) * 2}, ember.ones(1, 2), tie_weights=False
    )
    out_t = TF.functional_call(
        t, {"a.weight": torch.eye(2) * 2}, torch.ones(1, 2), tie_weights=False
    )
    close(out_e, out_t)


def message(call):
    with pytest.raises(Exception) as info:
        call()
    return str(info.value)


ERRORS = {
    "missing strict": lambda F, lib: F.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2)}, lib.ones(1, 2), strict=True
    ),
    "unexpected strict": lambda F, lib: F.functional_call(
        lib.nn.Linear(2, 2, bias=False),
        {"weight": lib.ones(2, 2), "foo": lib.ones(2)},
        lib.ones(1, 2),
        strict=True,
    ),
    "repeated keys": lambda F, lib: F.functional_call(
        lib.nn.Linear(2, 2),
        ({"weight": lib.ones(2, 2)}, {"weight": lib.ones(2, 2)}),
        lib.ones(1, 2),
    ),
    "tied both given": lambda F, lib: F.functional_call(
        tied(lib), {"a.weight": lib.eye(2), "b.weight": lib.eye(2) * 2}, lib.ones(1, 2)
    ),
    "bad dicts": lambda F, lib: F.functional_call(lib.nn.Linear(2, 2), 3, lib.ones(1, 2)),
    "no models": lambda F, lib: F.stack_module_state([]),
    "mixed modes": lambda F, lib: F.stack_module_state(
        [lib.nn.Linear(1, 1), lib.nn.Linear(1, 1).eval()]
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    expected = message(lambda: ERRORS[name](TF, torch))
    assert message(lambda: ERRORS[name](EF, ember)) == expected


def test_stack_module_state_and_ensembling():
    models_e = [pair(ember, seed=s) for s in range(3)]
    models_t = [pair(torch, seed=s) for s in range(3)]
    x = np.random.default_rng(2).standard_normal((4, 3))
    results = []
    for models, lib, F in ((models_e, ember, EF), (models_t, torch, TF)):
        params, buffers = F.stack_module_state(models)
        assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].requires_grad
        assert params["0.weight"].is_leaf and buffers == {}

        def run(p, b, xb, base=models[0], F=F):
            return F.functional_call(base, (p, b), (xb,))

        results.append(F.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(x)))
    close(*results)
