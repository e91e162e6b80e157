"""Autocast under ember.compile: the casts are graph ops, compiled == eager, the autocast state
is part of the cache key and a toggle retraces with a one-line reason; a bfloat16 MLP's loss
curve follows PyTorch's."""

import numpy as np
import torch

import ember


def _mlp(lib, seed=0):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 3))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return model


def _data(n=64):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    return x, y


def _losses(lib, steps=30, compiled=False, amp=True):
    model = _mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.2)
    x, y = _data()
    x, y = lib.tensor(x), lib.tensor(y)

    def step(x, y):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=amp):
            loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = ember.compile(step) if compiled else step
    return [float(fn(x, y)) for _ in range(steps)], model


def test_bfloat16_mlp_loss_curve_follows_pytorch():
    e, model = _losses(ember)
    t, _ = _losses(torch)
    assert model[0].weight.dtype is ember.float32 and model[0].weight.grad.dtype is ember.float32
    np.testing.assert_allclose(e, t, rtol=0.03, atol=0.01)
    assert e[-1] < 0.6 * e[0]
    f32, _ = _losses(ember, amp=False)
    assert max(abs(a - b) for a, b in zip(e, f32)) > 1e-4  # bfloat16 did run


def test_compiled_equals_eager_and_records_the_casts():
    eager, _ = _losses(ember, steps=5)
    compiled, _ = _losses(ember, steps=5, compiled=True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)


def test_graph_text_shows_casts_and_toggling_retraces(capsys):
    w = ember.nn.Parameter(ember.ones(3, 4))

    @ember.compile
    def f(x):
        return (x @ w.T).float().sum()

    x = ember.ones(2, 4)
    with ember.autocast("cpu"):
        f(x)
    text = str(f.graph)
    assert "Cast(" in text and "bfloat16" in text and "MatMul" in text
    f(x)
    err = capsys.readouterr().err
    assert "retracing f: autocast changed (cpu bfloat16 -> off)" in err
    assert "Cast(" not in str(f.graph).split("MatMul")[0].split("Permute")[-1]
    with ember.autocast("cpu"):
        f(x)  # cached: no new line
    assert "retracing" not in capsys.readouterr().err
