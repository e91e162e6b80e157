"""Graph files: text + safetensors, loaded without the model's code and without eval."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember import static
from ember.static.ir import GraphError


def _model():
    ember.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 5),
        nn.Softmax(dim=1),
    ).eval()


def test_round_trip_in_a_fresh_process(tmp_path):
    m = _model()
    fast = ember.compile(m)
    x = ember.randn(2, 3, 8, 8)
    with ember.no_grad():
        want = m(x).numpy()
    np.testing.assert_allclose(fast(x).numpy(), want, rtol=1e-6)
    path = str(tmp_path / "model")
    static.save(fast, path)
    text = open(os.path.join(path, "graph.txt")).read()
    assert "Conv2d(" in text and '"5.weight"' in text and "import" not in text
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "want.npy", want)
    code = (
        "import numpy as np, ember.static as s\n"
        f"f = s.load({path!r})\n"
        f"y = f(np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"want = np.load({str(tmp_path / 'want.npy')!r})\n"
        "np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_loaded_graph_checks_arguments_and_keeps_state(tmp_path):
    buf = ember.zeros(2)

    @ember.compile
    def f(x):
        buf.add_(x)
        return buf * 2, x.sum()

    f(ember.ones(2))
    static.save(f, str(tmp_path / "g"))
    g = static.load(str(tmp_path / "g"))
    a, s = g(ember.ones(2))
    assert a.tolist() == [4.0, 4.0] and float(s) == 2.0  # the saved buffer was [1, 1]
    a, _ = g(ember.ones(2))
    assert a.tolist() == [6.0, 6.0]
    with pytest.raises(ember.ShapeError, match=r"expects shape \(2,\) but was fed shape \(3,\)"):
        g(ember.ones(3))
    with pytest.raises(ember.ShapeError, match="expected 1 tensor arguments"):
        g()


def test_training_steps_and_unsaveable_ops_are_refused(tmp_path):
    m = nn.Linear(2, 2)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)

    @ember.compile
    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        return m.weight * 1

    step(ember.ones(1, 2))
    with pytest.raises(GraphError, match=r"writes gradients \(\.grad\); save an inference"):
        static.save(step, str(tmp_path / "s"))
    with pytest.raises(GraphError, match="never called"):
        static.save(ember.compile(lambda x: x), str(tmp_path / "t"))


def _write(tmp_path, text):
    path = tmp_path / "evil"
    path.mkdir()
    (path / "graph.txt").write_text(text)
    from ember.serialization import safetensors as st

    with open(path / "weights.safetensors", "wb") as f:
        st.write(f, {}, None)
    return str(path)


@pytest.mark.parametrize(
    "line, message",
    [
        ("%1: f32[2] = System(%0)", "unknown op 'System'"),
        ("%1: f32[2] = Exp(%0, x=__import__('os'))", "nested ops take fields by name"),
        ("%1: f32[2] = eval(%0)", "unknown op 'eval'"),
        ("%1: f32[2] = Exp(%0).__class__", "expected OpName"),
        ("%1: f32[2] = Cast(%0, dtype=os.system)", "unsupported expression"),
        ("%1: f32[2] = Exp(%9)", "used before it is defined"),
    ],
)
def test_files_run_no_code(tmp_path, line, message):
    text = f'# ember graph v1\ngraph g(%0: f32[2] "x") {{\n  {line}\n  return %1\n}}\n'
    with pytest.raises(GraphError, match=message):
        static.load(_write(tmp_path, text))


def test_text_round_trip_of_op_attributes():
    from ember.static.files import parse

    @ember.compile
    def f(x):
        y = x[1:, ..., None].transpose(0, 1)
        return ember.einsum("ij,jk->ik", y.reshape(6, 1), x[:1, :2].to(ember.float64).float())

    f(ember.randn(4, 2))
    text = str(f.graph)
    g, _ = parse(text, {})
    assert str(g) == text
