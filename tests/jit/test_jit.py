"""ember.jit against the eager module and torch.jit on the same weights; save/load round trip
in a fresh process."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def pair(lib):
    rng = np.random.default_rng(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


X = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)


@pytest.mark.parametrize("how", ["script", "trace"])
def test_outputs_equal_eager_and_torch(how):
    e, t = pair(ember), pair(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "script":
            se, st = ember.jit.script(e), torch.jit.script(t)
        else:
            se, st = ember.jit.trace(e, ember.tensor(X)), torch.jit.trace(t, torch.tensor(X))
    assert se.eval() is se and not se.training
    with ember.no_grad():
        out = se(ember.tensor(X))
    traces = se._compiled.traces
    with ember.no_grad():
        se(ember.tensor(X))
    assert traces >= 1 and se._compiled.traces == traces  # the cached graph ran
    np.testing.assert_allclose(out.numpy(), e(ember.tensor(X)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), st(torch.tensor(X)).detach().numpy(), rtol=1e-5)
    assert list(se.state_dict()) == list(st.state_dict())
    assert len(list(se.parameters())) == len(list(st.parameters()))
    # a call that builds history runs eagerly and trains the module's own parameters
    y = se(ember.tensor(X))
    assert y.requires_grad == st(torch.tensor(X)).requires_grad
    y.sum().backward()
    assert e[0].weight.grad is not None


def test_save_load_round_trip_in_a_fresh_process(tmp_path):
    e = pair(ember).eval()
    traced = ember.jit.trace(e, ember.tensor(X))
    path = tmp_path / "model.pt"
    ember.jit.save(traced, str(path))
    np.save(tmp_path / "x.npy", X)
    code = (
        "import numpy as np, ember\n"
        f"m = ember.jit.load({str(path)!r}).eval()\n"
        f"x = ember.tensor(np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"np.save({str(tmp_path / 'y.npy')!r}, m(x).numpy())\n"
        "print(sorted(m.state_dict()))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with ember.no_grad():
        np.testing.assert_allclose(np.load(tmp_path / "y.npy"), e(ember.tensor(X)).numpy())
    assert run.stdout.strip() == str(sorted(e.state_dict()))


def test_script_functions_and_control_flow():
    def f(x):
        return x * 2 if x.shape[0] > 2 else x - 1

    sf, tf = ember.jit.script(f), torch.jit.script(f)
    for n in (1, 4):  # a new shape retraces: Python control flow picks its branch per signature
        np.testing.assert_allclose(sf(ember.tensor(X[:n])).numpy(), tf(torch.tensor(X[:n])).numpy())

    def data_dependent(x):
        return x * 2 if x.sum() > 0 else -x

    sd = ember.jit.script(data_dependent)
    for x in (X, -np.abs(X)):  # can't be traced: runs eagerly, still right
        np.testing.assert_allclose(sd(ember.tensor(x)).numpy(), data_dependent(torch.tensor(x)))


def test_decorators_keep_their_eager_meaning():
    for lib in (ember, torch):

        class M(lib.nn.Module):
            scale: lib.jit.Final[float] = 2.0

            @lib.jit.ignore
            def helper(self, x):
                return x + 1

            @lib.jit.unused
            def unused(self, x):
                return x

            @lib.jit.export
            def other(self, x):
                return x * 3

            def forward(self, x):
                return self.helper(x) * self.scale

        m = M()
        assert m(lib.ones(1)).item() == 4.0 and m.other(lib.ones(1)).item() == 3.0
        assert lib.jit.is_scripting() is False
        assert lib.jit.annotate(list, [1]) == [1]


def test_errors():
    with pytest.raises(ember.EmberError, match="no traced graph yet"):
        ember.jit.save(ember.jit.script(ember.nn.Linear(1, 1)), "unused")
    with pytest.raises(ember.EmberError, match="must be a path"):
        import io

        ember.jit.save(ember.jit.trace(ember.nn.Linear(1, 1), ember.ones(1, 1)), io.BytesIO())
    with pytest.raises(ember.EmberError, match="expected what ember.jit.script"):
        ember.jit.save(ember.nn.Linear(1, 1), "unused")
    with pytest.raises(ember.static.GraphError, match="does not exist"):
        ember.jit.load("/no/such/graph")
