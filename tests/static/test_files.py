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
    text = "# ember graph v1\n# result: single\n"
    text += f'graph g(%0: f32[2] "x") {{\n  {line}\n  return %1\n}}\n'
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


# -- bad graph folders: a GraphError naming the file and the cause ----------------------------


def _saved(tmp_path):
    f = ember.compile(lambda x: (x * 2).exp().sum(0))
    x = ember.randn(3, 2)
    want = f(x).numpy()
    path = tmp_path / "g"
    static.save(f, str(path))
    return path, x, want


def _edit(path, fn):
    """Rewrite graph.txt by hand (dropping its checksum line, as the docs say to)."""
    text = (path / "graph.txt").read_text()
    lines = [ln for ln in text.splitlines(keepends=True) if not ln.startswith("# crc32")]
    (path / "graph.txt").write_text(fn("".join(lines)))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: (p / "weights.safetensors").unlink(), r"weights\.safetensors is missing"),
        (lambda p: (p / "graph.txt").unlink(), r"can't read .*graph\.txt"),
        (lambda p: (p / "weights.safetensors").write_bytes(b"xx"), r"weights\.safetensors: not a"),
        (
            lambda p: (p / "graph.txt").write_bytes((p / "graph.txt").read_bytes() + b"\xff"),
            r"graph\.txt: not an ember graph file: not UTF-8",
        ),
        (lambda p: _edit(p, lambda t: t.replace("v1", "v2")), "format version '2' is not supp"),
        (lambda p: _edit(p, lambda t: t.replace("v1", "v1.5")), "version '1.5' is not supported"),
        (lambda p: _edit(p, lambda t: t.split("\n", 1)[1]), "the first line is '# result"),
        (lambda p: _edit(p, lambda t: t.replace("  return %4\n", "")), "no 'return' line"),
        (lambda p: _edit(p, lambda t: t.replace("return %4", "return %4\n return %4")), "second"),
        (lambda p: _edit(p, lambda t: t.replace("return %4", "return x")), "return takes values"),
        (lambda p: _edit(p, lambda t: t.replace("axis=(0,)", "axis=(10**30,)")), "unsupported"),
        (lambda p: _edit(p, lambda t: t.replace("axis=(0,)", "axis=(9,)")), "infer"),
        (lambda p: _edit(p, lambda t: t.replace("axis=(0,)", "axis='a'")), r"graph\.txt"),
        (lambda p: _edit(p, lambda t: t.replace("axis=(0,)", "axis=1" + "0" * 40)), "infer"),
        (lambda p: _edit(p, lambda t: t.replace("axis=(0,)", "axis=[[[]]]")), r"graph\.txt"),
        (lambda p: _edit(p, lambda t: t.replace("Exp(%2)", "Exp(%2, x=1)")), "bad fields"),
        (lambda p: _edit(p, lambda t: t.replace("f32[2] =", "f32[99999999999999] =")), "bad size"),
        (lambda p: _edit(p, lambda t: t.replace("f32[2] =", "f32[3] =")), "declares|infer|type"),
        (lambda p: _edit(p, lambda t: t.replace('f32[3,2] "x"', 'f32[3,x] "x"')), "bad size"),
        (lambda p: _edit(p, lambda t: t.replace('"x"', '"x\\u"')), r"graph\.txt:3: can't read"),
        (lambda p: _edit(p, lambda t: t.replace('"x")', '"x" junk)')), "argument list"),
        (lambda p: _edit(p, lambda t: t.replace("= 2.0", "= 'abc'")), "can't read this line"),
        (lambda p: _edit(p, lambda t: t.replace("= 2.0", "= [2.0, 3.0]")), "does not match"),
        (lambda p: _edit(p, lambda t: t.replace("}", "")), "expected 'graph NAME"),
        (lambda p: _edit(p, lambda t: t.replace("Mul", "Mul" * 5000)), "unknown op"),
        (lambda p: _edit(p, lambda t: t.replace("2.0", "(" * 500 + "2.0" + ")" * 500)), "graph"),
    ],
)
def test_bad_graph_folders_are_graph_errors(tmp_path, damage, message):
    path, _, _ = _saved(tmp_path)
    damage(path)
    with pytest.raises(GraphError, match=message) as info:
        static.load(str(path))
    assert str(path) in str(info.value)


def test_missing_or_wrong_folder(tmp_path):
    with pytest.raises(GraphError, match="does not exist; a graph is a folder"):
        static.load(str(tmp_path / "nope"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(GraphError, match="is not a folder"):
        static.load(str(tmp_path / "file"))


def test_checksums_catch_changes_and_hand_edits_without_the_line_load(tmp_path):
    path, x, want = _saved(tmp_path)
    text = (path / "graph.txt").read_text()
    assert "# crc32: " in text
    (path / "graph.txt").write_text(text.replace("= 2.0", "= 3.0"))
    with pytest.raises(GraphError, match=r"graph\.txt: the file was changed or corrupted"):
        static.load(str(path))
    assert static.load(str(path), verify=False)(x).numpy() == pytest.approx(
        np.exp(3 * x.numpy()).sum(0), rel=1e-6
    )
    _edit(path, lambda t: t)  # the line removed: a hand-edited file loads
    np.testing.assert_allclose(static.load(str(path))(x).numpy(), np.exp(3 * x.numpy()).sum(0))


def test_corrupted_weights_name_the_tensor(tmp_path):
    m = nn.Linear(3, 2)
    f = ember.compile(m)
    with ember.no_grad():
        f(ember.ones(1, 3))
    static.save(f, str(tmp_path / "m"))
    blob = bytearray((tmp_path / "m" / "weights.safetensors").read_bytes())
    blob[-1] ^= 1
    (tmp_path / "m" / "weights.safetensors").write_bytes(bytes(blob))
    with pytest.raises(GraphError, match=r"weights\.safetensors: tensor '.*' is corrupted"):
        static.load(str(tmp_path / "m"))
    static.load(str(tmp_path / "m"), verify=False)


def test_fuzz_corrupted_graph_folders(tmp_path):
    """Flip, truncate, duplicate and delete bytes of graph.txt and of the weights: each load
    gives the right answer or a GraphError; nothing else, and no hang."""
    import shutil
    import time

    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    f = ember.compile(m)
    x = ember.randn(2, 3)
    with ember.no_grad():
        want = f(x).numpy()
    good = tmp_path / "good"
    static.save(f, str(good))
    files = {n: (good / n).read_bytes() for n in ("graph.txt", "weights.safetensors")}
    rng = np.random.default_rng(16)
    start = time.perf_counter()
    outcomes = {"loaded": 0, "refused": 0}
    work = tmp_path / "work"
    for i in range(400):
        if time.perf_counter() - start > 30:
            break
        name = ("graph.txt", "weights.safetensors")[i % 2]
        b = bytearray(files[name])
        kind, at = i // 2 % 4, int(rng.integers(len(b)))
        if kind == 0:
            b[at] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            del b[at:]
        elif kind == 2:
            b[at:at] = b[at : at + int(rng.integers(1, 40))]
        else:
            del b[at : at + int(rng.integers(1, 40))]
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(good, work)
        (work / name).write_bytes(bytes(b))
        try:
            got = static.load(str(work))(x)
            assert isinstance(got, ember.Tensor), (name, kind, at, bytes(b[:120]))
        except GraphError as e:
            assert str(work) in str(e)
            outcomes["refused"] += 1
            continue
        np.testing.assert_array_equal(got.numpy(), want)
        outcomes["loaded"] += 1
    assert time.perf_counter() - start < 45
    assert outcomes["refused"] > outcomes["loaded"]
