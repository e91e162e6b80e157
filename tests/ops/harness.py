"""The op-table harness: one ``OpCase`` per op, checked every way DESIGN.md lists.

A family's test file builds a list of ``OpCase`` and hands it to ``generate(globals(), cases)``,
which adds parametrized tests for: forward against a NumPy reference, float64 random-direction
gradient checks (broadcast, non-contiguous, 0-d and 0-size variants come as separate cases),
second order, infer == forward (shape and dtype), and values, gradients and result dtypes
against PyTorch when it is installed; and the one path (DESIGN.md: one op definition serves every
mode), on the CPU: ``ember.compile`` of the case equals eager (values, dtypes, shapes and
gradients), so does the case built from placeholders and run in a ``static.Session``
(define-and-run, with ``static.gradients``), and so does its ONNX export run in onnxruntime.

Cases whose output shape depends on the data (``data_dependent=True``: nonzero, masked_select,
boolean masks) can't become a graph: for them the three graph checks assert that building one
raises ``TraceError``. A case whose op has no ONNX converter is skipped by ``ONNX_UNSUPPORTED``
(an op class name, with the reason), and a known ember bug is an entry of ``XFAIL`` (strict).

Every test also takes the ``device`` fixture (``tests/conftest.py``): ``cpu`` always, ``cuda``
when a GPU is present (skipped otherwise). On cuda the inputs are built on the GPU and results
are compared with the NumPy reference, with PyTorch (on the CPU), and with the same op run on
the CPU (CPU == GPU); gradients on cuda are compared with the CPU's, which gradcheck verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import ember
from tests._peer import newer_feature

try:
    import torch
except ImportError:  # parity tests skip without PyTorch
    torch = None


@dataclass
class OpCase:
    """One op on one set of input shapes.

    ``fn`` takes (module, *tensors) and is called with ``ember`` and with ``torch`` for parity;
    ``ref`` takes NumPy arrays. ``make`` builds each input array from an rng (default: normal
    floats with ``shapes``). Inputs at positions in ``nondiff`` never require grad.
    """

    name: str
    fn: Callable
    shapes: list
    ref: Callable | None = None
    make: Callable | None = None
    dtype: str = "float64"
    nondiff: tuple = ()
    grad: bool = True
    gradgrad: bool = True
    torch: bool = True
    transpose: bool = False  # also feed the first input as a non-contiguous (transposed) view
    atol: float = 1e-6
    rtol: float = 1e-5
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    tags: dict = field(default_factory=dict)
    data_dependent: bool = False  # the output's shape depends on input values: no graph

    def arrays(self, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        if self.make is not None:
            return [np.asarray(a) for a in self.make(rng)]
        return [rng.standard_normal(s).astype(self.dtype) for s in self.shapes]

    @property
    def id(self) -> str:
        shapes = ",".join("x".join(map(str, s)) or "0d" for s in self.shapes)
        return f"{self.name}[{shapes}]"


def ember_inputs(case: OpCase, arrays, requires_grad: bool, device: str = "cpu"):
    out = []
    for i, a in enumerate(arrays):
        t = ember.tensor(a, device=device)
        if case.transpose and i == 0 and a.ndim >= 2:
            t = ember.tensor(np.ascontiguousarray(a.swapaxes(-1, -2)), device=device)
            t = t.transpose(-1, -2)
        if requires_grad and i not in case.nondiff and t.dtype.is_floating_point:
            t.requires_grad_()
        out.append(t)
    return out


def torch_inputs(case: OpCase, arrays, requires_grad: bool):
    out = []
    for i, a in enumerate(arrays):
        t = torch.tensor(a)
        if requires_grad and i not in case.nondiff and t.dtype.is_floating_point:
            t.requires_grad_()
        out.append(t)
    return out


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _host(t) -> np.ndarray:
    """A tensor's values as NumPy, from any device."""
    return t.detach().cpu().numpy()


def _on(t, device: str) -> None:
    assert t.device.type == ember.device(device).type, f"result on {t.device}, not {device}"


def check_forward(case: OpCase, device: str = "cpu") -> None:
    arrays = case.arrays()
    got = _first(case.fn(ember, *ember_inputs(case, arrays, False, device)))
    _on(got, device)
    want = np.asarray(case.ref(*arrays))
    host = _host(got)
    np.testing.assert_allclose(
        np.asarray(host, dtype=np.float64) if got.dtype is not ember.bool else host,
        want,
        atol=case.atol,
        rtol=case.rtol,
    )
    assert tuple(got.shape) == want.shape
    if device != "cpu":  # CPU == GPU
        cpu = _first(case.fn(ember, *ember_inputs(case, arrays, False)))
        assert got.dtype == cpu.dtype
        np.testing.assert_allclose(host, cpu.numpy(), atol=case.atol, rtol=case.rtol)


def _grads(case: OpCase, device: str, order: int) -> list:
    """Gradients of a random projection of the output (``order`` 2: of a projection of the
    first-order gradients, built with create_graph), as host arrays (None where unused)."""
    xs = ember_inputs(case, case.arrays(), True, device)
    diff = [x for x in xs if x.requires_grad]
    out = _first(case.fn(ember, *xs))
    if not out.requires_grad:  # integer results (argmax...): nothing to compare
        return []
    rng = np.random.default_rng(1)
    w = ember.tensor(rng.standard_normal(tuple(out.shape)).astype(out.dtype.np), device=device)
    gs = ember.autograd.grad([out], diff, [w], create_graph=order > 1, allow_unused=True)
    if order > 1:
        pairs = [
            (g, ember.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype, device=device))
            for g in gs
            if g is not None and g.requires_grad
        ]
        if not pairs:
            return []
        total = sum((g * v).sum() for g, v in pairs)
        gs = ember.autograd.grad([total], diff, allow_unused=True)
    for g in gs:
        if g is not None:
            _on(g, device)
    return [None if g is None else _host(g) for g in gs]


def _same_grads(case: OpCase, device: str, order: int) -> None:
    for got, want in zip(_grads(case, device, order), _grads(case, "cpu", order)):
        if got is None or want is None:
            assert got is None and want is None or not np.any(got if want is None else want)
            continue
        np.testing.assert_allclose(got, want, atol=case.grad_atol, rtol=case.grad_rtol)


def check_grad(case: OpCase, device: str = "cpu") -> None:
    if device != "cpu":
        return _same_grads(case, device, 1)
    xs = ember_inputs(case, case.arrays(), True)
    assert ember.autograd.gradcheck(
        lambda *a: _first(case.fn(ember, *a)),
        xs,
        fast_mode=True,
        atol=case.grad_atol,
        rtol=case.grad_rtol,
    )


def check_gradgrad(case: OpCase, device: str = "cpu") -> None:
    if device != "cpu":
        return _same_grads(case, device, 2)
    xs = ember_inputs(case, case.arrays(), True)
    assert ember.autograd.gradgradcheck(
        lambda *a: _first(case.fn(ember, *a)),
        xs,
        fast_mode=True,
        atol=case.grad_atol,
        rtol=case.grad_rtol,
    )


def check_torch(case: OpCase, device: str = "cpu") -> None:
    if torch is None:
        pytest.skip("PyTorch not installed")
    arrays = case.arrays()
    diff = case.grad
    ex = ember_inputs(case, arrays, diff, device)
    tx = torch_inputs(case, arrays, diff)
    eo = _first(case.fn(ember, *ex))
    with newer_feature():
        to = _first(case.fn(torch, *tx))
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1], (eo.dtype, to.dtype)
    assert tuple(eo.shape) == tuple(to.shape)
    _on(eo, device)
    np.testing.assert_allclose(
        _host(eo).astype(np.float64),
        to.detach().numpy().astype(np.float64),
        atol=case.atol,
        rtol=case.rtol,
    )
    if not diff or not eo.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(eo.shape)).astype(arrays[0].dtype)
    eo.backward(ember.tensor(w, device=device))
    with newer_feature():
        to.backward(torch.tensor(w))
    for e, t in zip(ex, tx):
        if t.grad is None:
            assert e.grad is None or not np.any(_host(e.grad))
            continue
        np.testing.assert_allclose(
            _host(e.grad).astype(np.float64),
            t.grad.numpy().astype(np.float64),
            atol=case.grad_atol,
            rtol=case.grad_rtol,
        )


def generate(namespace: dict, cases: list) -> None:
    """Add the parametrized tests for ``cases`` to a test module's namespace."""

    ALL_CASES.extend(cases)

    def params(pred):
        return [pytest.param(c, id=c.id) for c in cases if pred(c)]

    def graph_params(check: str):
        """Every case, each known bug of ``check`` an xfail(strict=True) naming it."""
        return [
            pytest.param(
                c,
                id=c.id,
                marks=[pytest.mark.xfail(strict=True, reason=XFAIL[check, c.id])]
                if (check, c.id) in XFAIL
                else [],
            )
            for c in cases
        ]

    @pytest.mark.parametrize("case", params(lambda c: c.ref is not None))
    def test_forward(case, device):
        check_forward(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.grad))
    def test_grad(case, device):
        check_grad(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.grad and c.gradgrad))
    def test_gradgrad(case, device):
        check_gradgrad(case, device)

    @pytest.mark.parametrize("case", params(lambda c: c.torch))
    def test_torch_parity(case, device):
        check_torch(case, device)

    @pytest.mark.parametrize("case", graph_params("compiled"))
    def test_compiled(case):
        check_compiled(case)

    @pytest.mark.parametrize("case", graph_params("static"))
    def test_define_and_run(case):
        check_static(case)

    @pytest.mark.parametrize("case", graph_params("onnx"))
    def test_onnx(case):
        check_onnx(case)

    namespace.update(
        test_compiled=test_compiled,
        test_define_and_run=test_define_and_run,
        test_onnx=test_onnx,
        test_forward=test_forward,
        test_grad=test_grad,
        test_gradgrad=test_gradgrad,
        test_torch_parity=test_torch_parity,
    )


# -- the one path: compiled, define-and-run and ONNX equal eager (CPU only) -----------------------

# Op classes with no ONNX converter: a case whose exported graph holds one is skipped, naming
# it. An op that gets a converter (ember/onnx/<family>.py) leaves this table: the coverage test
# (tests/test_op_coverage.py) fails for an entry that has a converter.
ONNX_UNSUPPORTED: dict[str, str] = {
    "SearchSorted": "searchsorted / bucketize: no ONNX operator; a converter would compare each "
    "value with every boundary (Less / LessOrEqual, ReduceSum), not written yet",
    "Histc": "histc: no ONNX operator (a one-hot count over bins would do), not written yet",
    "I0": "i0 (Bessel): no ONNX operator; its series is computed in the op, not in ember ops",
    "Pinv": "pinverse / lstsq: ONNX has no SVD operator",
    "SpMM": "sparse @ dense: ONNX has no sparse product (Gather + Mul + ScatterND would do), not "
    "written yet",
    "SparseToDense": "sparse to_dense: a ScatterND with reduction='add' would do, not written yet",
    "SparseCooTensorWithDimsAndTensors": "the sparse constructor's alias of its values: an "
    "Identity, not written yet (with SpMM and SparseToDense)",
}

# Known ember bugs the graph checks find: (check, case id) -> the bug. Each is xfail(strict=True),
# so a fix fails the test until its entry goes (tests/test_op_coverage.py fails for an entry that
# names no case). Checks: "compiled", "static", "onnx".
XFAIL: dict[tuple[str, str], str] = {
    (
        "onnx",
        "erfinv[6]",
    ): "erfinv computes in float64 (_wide, ember/functions/special/transcendental.py) and "
    "onnxruntime has no float64 Erf kernel: the model is valid ONNX that onnxruntime can't run",
}

ALL_CASES: list = []  # every case generate() was given, for tests/test_op_coverage.py


def all_cases() -> list:
    """Every OpCase of tests/ops: imports each ``tests/ops/test_*.py`` (their ``generate`` calls
    fill ``ALL_CASES``); each case once."""
    import importlib
    import pkgutil
    from pathlib import Path

    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("test_"):
            importlib.import_module(f"{__package__}.{info.name}")
    seen: set = set()
    return [c for c in ALL_CASES if not (id(c) in seen or seen.add(id(c)))]


def _flat(out) -> list:
    """The tensors of a result (a tensor, or nested tuples / lists of tensors), in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [] if out is None else [out]


def _same(got, want, atol: float, rtol: float, what: str) -> None:
    """Equal shapes, dtypes and values (NaN where NaN); integers and bools exactly."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _weights(out) -> ember.Tensor:
    """The fixed random cotangent for ``out`` (a projection: gradients of ``(out * w).sum()``)."""
    w = np.random.default_rng(1).standard_normal(tuple(out.shape))
    return ember.tensor(w.astype(out.dtype.np))


def _step(case: OpCase):
    """``case.fn``'s outputs and the gradients of its first output's projection w.r.t. the
    differentiable inputs (None where unused): eager, or traced by ember.compile."""

    def step(*xs):
        out = case.fn(ember, *xs)
        first = _first(out)
        diff = [x for x in xs if x.requires_grad]
        if not (diff and first.requires_grad):
            return out, []
        gs = ember.autograd.grad([first], diff, [_weights(first)], allow_unused=True)
        return out, list(gs)

    return step


def check_compiled(case: OpCase) -> None:
    arrays = case.arrays()
    step = _step(case)
    if case.data_dependent:
        with pytest.raises(ember.static.TraceError):
            ember.compile(step, verbose=False)(*ember_inputs(case, arrays, case.grad))
        return
    want_out, want_grads = step(*ember_inputs(case, arrays, case.grad))
    got_out, got_grads = ember.compile(step, verbose=False)(*ember_inputs(case, arrays, case.grad))
    want_out, got_out = _flat(want_out), _flat(got_out)
    assert len(got_out) == len(want_out)
    for i, (g, w) in enumerate(zip(got_out, want_out)):
        _same(_host(g), _host(w), case.atol, case.rtol, f"output {i}")
    assert len(got_grads) == len(want_grads)
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if g is None or w is None:  # unused: None, or zeros
            assert g is w or not np.any(_host(w if g is None else g)), f"gradient {i}"
            continue
        _same(_host(g), _host(w), case.grad_atol, case.grad_rtol, f"gradient {i}")


def _build(case: OpCase, arrays, grad: bool):
    """The case built on placeholders (define-and-run): (graph, placeholders, outputs)."""
    g = ember.static.Graph(case.name)
    with g.as_default():
        phs = []
        for i, a in enumerate(arrays):
            p = ember.static.placeholder(a.shape, ember.tensor(a).dtype, name=f"in{i}")
            p._requires_grad = grad and i not in case.nondiff and p.dtype.is_floating_point
            phs.append(p)
        out = case.fn(ember, *phs)
    return g, phs, out


def check_static(case: OpCase) -> None:
    """Placeholders + Session.run == eager: every output, and static.gradients of the first."""
    static = ember.static
    arrays = case.arrays()
    if case.data_dependent:
        with pytest.raises(static.TraceError):
            _build(case, arrays, grad=False)
        return
    xs = ember_inputs(case, arrays, case.grad)
    want_out, want_grads = _step(case)(*xs)
    g, phs, out = _build(case, arrays, grad=case.grad)
    outs = _flat(out)
    feed = dict(zip(phs, arrays))
    got = static.Session(g).run(outs, feed)
    want_out = _flat(want_out)
    assert len(got) == len(want_out)
    for i, (gv, w) in enumerate(zip(got, want_out)):
        _same(gv, _host(w), case.atol, case.rtol, f"output {i}")
    g.validate(check_types=True)
    if not want_grads:
        return
    first = outs[0]
    with g.as_default():
        loss = (first * _weights(first)).sum()
    grads = static.gradients(loss, [p for p in phs if p.requires_grad])
    fetch = [gr for gr in grads if gr is not None]
    it = iter(static.Session(g).run(fetch, feed) if fetch else [])
    for i, (gr, w) in enumerate(zip(grads, want_grads)):
        res = None if gr is None else np.asarray(next(it))
        if res is None or w is None:  # unused: None, or zeros
            assert (res is None and w is None) or not np.any(res if w is None else _host(w))
            continue
        _same(res, _host(w), case.grad_atol, case.grad_rtol, f"gradient {i}")


def check_onnx(case: OpCase) -> None:
    """The forward pass, in float32, exported with ember.onnx and run in onnxruntime == eager."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from ember.onnx.export import _live_nodes, to_onnx, trace

    arrays = [a.astype(np.float32) if a.dtype == np.float64 else a for a in case.arrays()]
    xs = ember_inputs(case, arrays, False)

    def fn(*inputs):
        return case.fn(ember, *inputs)

    names = [f"in{i}" for i in range(len(xs))]
    if case.data_dependent:
        with pytest.raises(ember.static.TraceError):
            trace(fn, tuple(xs), names)
        return
    graph, names, outs = trace(fn, tuple(xs), names)
    ops = {type(n.op).__name__ for n in _live_nodes(graph, outs)}
    if ops & ONNX_UNSUPPORTED.keys():
        pytest.skip(f"no ONNX converter: {sorted(ops & ONNX_UNSUPPORTED.keys())}")
    model = to_onnx(graph, names, outs, opset=18)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    used = {i.name for i in sess.get_inputs()}
    got = sess.run(None, {n: a for n, a in zip(names, arrays) if n in used})
    want = _flat(fn(*xs))
    assert len(got) == len(want)
    # float32 through another runtime: at least 1e-5 / 1e-4 (the case's own when looser)
    atol, rtol = max(case.atol, 1e-5), max(case.rtol, 1e-4)
    for i, (gv, w) in enumerate(zip(got, want)):
        _same(gv, _host(w), atol, rtol, f"output {i}")
