"""Batch normalization (``ember.ops.norm``: ``BatchMoments``, ``BatchNormalize``,
``BatchNormSums``, ``BatchNormGradInput``) through ``F.batch_norm``: the op table (NumPy
reference, float64 gradcheck and gradgrad, PyTorch parity, compiled, define-and-run, ONNX) for
training and eval, with and without the affine part, on 2-D to 5-D inputs; then running
statistics, float16 / bfloat16, and the op count of a training step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops import norm as Nm
from tests.ops.harness import OpCase, generate

EPS = 1e-5


def _ref(x, mean, var, w=None, b=None, eps=EPS):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def _batch_ref(x, *wb):
    dims = (0,) + tuple(range(2, x.ndim))
    return _ref(x, x.mean(axis=dims), x.var(axis=dims), *wb)


SHAPES = {"1d": (6, 3), "1d-seq": (4, 3, 5), "2d": (3, 4, 3, 2), "3d": (2, 3, 2, 3, 2)}


def _affine_make(shape, n_param):
    def make(rng):
        c = shape[1]
        return [rng.standard_normal(shape) * 2 + 1] + [
            rng.standard_normal(c) + (1.5 if i == 0 else 0) for i in range(n_param)
        ]

    return make


def _eval_make(shape, affine):
    def make(rng):
        c = shape[1]
        out = [rng.standard_normal(shape), rng.standard_normal(c), rng.random(c) + 0.5]
        return out + ([rng.random(c) + 0.5, rng.standard_normal(c)] if affine else [])

    return make


CASES = []
for tag, shape in SHAPES.items():
    c = shape[1]
    CASES += [
        OpCase(
            f"batch_norm_train_{tag}",
            lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True),
            [shape],
            ref=_batch_ref,
            make=_affine_make(shape, 0),
        ),
        OpCase(
            f"batch_norm_train_affine_{tag}",
            lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
            [shape, (c,), (c,)],
            ref=_batch_ref,
            make=_affine_make(shape, 2),
        ),
        OpCase(
            f"batch_norm_eval_{tag}",
            lambda m, x, rm, rv: m.nn.functional.batch_norm(x, rm, rv, eps=1e-3),
            [shape, (c,), (c,)],
            ref=lambda x, rm, rv: _ref(x, rm, rv, eps=1e-3),
            make=_eval_make(shape, False),
            nondiff=(1, 2),
        ),
        OpCase(
            f"batch_norm_eval_affine_{tag}",
            lambda m, x, rm, rv, w, b: m.nn.functional.batch_norm(x, rm, rv, w, b),
            [shape, (c,), (c,), (c,), (c,)],
            ref=_ref,
            make=_eval_make(shape, True),
            nondiff=(1, 2),
        ),
    ]
CASES += [
    OpCase(
        "batch_norm_train_weight_only",
        lambda m, x, w: m.nn.functional.batch_norm(x, None, None, w, None, training=True),
        [(5, 2, 3), (2,)],
        ref=_batch_ref,
        make=_affine_make((5, 2, 3), 1),
    ),
]

generate(globals(), CASES)


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_running_statistics_follow_pytorch_over_several_steps(momentum, dims):
    """Training steps update running_mean / running_var (unbiased, momentum or the cumulative
    average) and num_batches_tracked as PyTorch does; eval then normalizes by them."""
    name = f"BatchNorm{dims}d"
    em = getattr(ember.nn, name)(3, momentum=momentum)
    tm = getattr(torch.nn, name)(3, momentum=momentum)
    rng = np.random.default_rng(0)
    shape = (4, 3) + (3,) * dims if dims > 1 else (6, 3, 4)
    for step in range(4):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        g = rng.standard_normal(shape).astype(np.float32)
        ey, ty = em(ex), tm(tx)
        ey.backward(ember.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-4, rtol=1e-4)
        for n in ("weight", "bias"):
            want = getattr(tm, n).grad.numpy()
            np.testing.assert_allclose(getattr(em, n).grad.numpy(), want, atol=1e-4, rtol=1e-4)
    for n in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(em, n).numpy(), getattr(tm, n).numpy(), rtol=1e-5)
    assert int(em.num_batches_tracked.item()) == int(tm.num_batches_tracked.item()) == 4
    em.eval(), tm.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(
        em(ember.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("training", [True, False])
def test_half_inputs_compute_in_float32_as_pytorch(dtype, training):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3, 4, 4)).astype(np.float32) * 3 + 2
    g = rng.standard_normal(x.shape).astype(np.float32)
    w, b = rng.random(3).astype(np.float32) + 0.5, rng.standard_normal(3).astype(np.float32)
    rm, rv = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32) + 0.5

    def run(lib):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        wt, bt = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        ms, vs = lib.tensor(rm), lib.tensor(rv)
        y = lib.nn.functional.batch_norm(xt, ms, vs, wt, bt, training=training)
        y.backward(lib.tensor(g).to(y.dtype))
        outs = (y, xt.grad, wt.grad, bt.grad, ms, vs)
        return [str(o.dtype).split(".")[-1] for o in outs], [
            o.detach().float().numpy() for o in outs
        ]

    (edt, evals), (tdt, tvals) = run(ember), run(torch)
    assert edt == tdt
    tol = 2e-2 if dtype == "bfloat16" else 2e-3
    for e, t in zip(evals, tvals):
        np.testing.assert_allclose(e, t, atol=tol * 4, rtol=tol)


def test_a_training_step_is_four_batch_norm_ops():
    """Forward: BatchMoments + BatchNormalize; backward: BatchNormSums + BatchNormGradInput."""
    bn = ember.nn.BatchNorm2d(3)
    x = ember.randn(4, 3, 5, 5, requires_grad=True)
    y = bn(x)
    assert isinstance(y.grad_fn.op, Nm.BatchNormalize)
    assert type(y.grad_fn.inputs[1]._data) is np.ndarray  # the statistics: no history
    gx, gw, gb = ember.autograd.grad([y.sum()], [x, bn.weight, bn.bias], create_graph=True)
    assert isinstance(gx.grad_fn.op, Nm.BatchNormGradInput)
    assert isinstance(gx.grad_fn.inputs[3].grad_fn.op, Nm.BatchNormSums)


def test_compiled_step_updates_running_statistics_as_eager():
    """ember.compile traces the running-statistics update as writes into the buffers."""
    eager, comp = ember.nn.BatchNorm1d(4), ember.nn.BatchNorm1d(4)
    step = ember.compile(lambda x: comp(x).sum(), verbose=False)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((6, 4)).astype(np.float32))
        np.testing.assert_allclose(step(x).numpy(), eager(x).sum().detach().numpy(), atol=1e-5)
    for n in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(comp, n).numpy(), getattr(eager, n).numpy(), rtol=1e-6)


def test_running_statistics_update_is_one_op_per_buffer():
    """The running mean and variance are each one ``RunningAverage`` written in place (PyTorch's
    ``mul_(1 - momentum).add_(...)`` in one op): the graph holds two, and two writes."""
    bn = ember.nn.BatchNorm1d(4, momentum=0.3)
    step = ember.compile(lambda x: bn(x).sum())
    step(ember.randn(6, 4))
    text = str(step.graph)
    assert text.count("RunningAverage(") == 2 and "factor=1.2" in text
    assert text.count("Assign(") == 3  # running mean, running variance, num_batches_tracked
    assert "Mul(" not in text and "Index" not in text


def test_backward_ops_double_backward():
    """The backward ops' own vjps (second order) against numerical differences."""
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    g = ember.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    w = ember.tensor(rng.random(2) + 0.5, requires_grad=True)
    st = lambda x: ember.ops.base.apply(Nm.BatchMoments(), x)  # noqa: E731

    def sums(g, x):
        return ember.ops.base.apply(Nm.BatchNormSums(1e-3, True), g, x, st(x))

    def grad_input(g, x, w):
        s = st(x)
        s2 = ember.ops.base.apply(Nm.BatchNormSums(1e-3, True), g, x, s)
        return ember.ops.base.apply(Nm.BatchNormGradInput(1e-3, True), g, x, s, s2, w)

    assert ember.autograd.gradcheck(sums, (g, x))
    assert ember.autograd.gradgradcheck(sums, (g, x))
    assert ember.autograd.gradcheck(grad_input, (g, x, w))
    assert ember.autograd.gradgradcheck(grad_input, (g, x, w))


@pytest.mark.fake_kernels
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("training", [True, False])
def test_cuda_kernels_match_the_cpu(fake_cuda, dtype, training):
    """On the fake CuPy with g++-emulated kernels: the batch-norm ops run their RawKernels
    (ember.backend.kernels.batchnorm) and give the CPU's values."""
    from ember.backend import kernels

    kernels.clear()
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((4, 3, 5)) * 2 + 1, rng.random(3) + 0.5, rng.standard_normal(3)]
    arrays += [rng.standard_normal(3), rng.random(3) + 0.5, rng.standard_normal((4, 3, 5))]
    results = []
    for device in ("cpu", "cuda"):
        x, w, b, rm, rv, g = (ember.tensor(a, device=device) for a in arrays)
        x = x.to(getattr(ember, dtype)).requires_grad_()
        w.requires_grad_(), b.requires_grad_()
        y = ember.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
        y.backward(g.to(y.dtype))
        results.append([t.detach().cpu().float().numpy() for t in (y, x.grad, w.grad, b.grad)])
    kinds = {k[1] for k in kernels._cache if k[0] == "batchnorm"}
    want = {"moments", "normalize", "sums", "grad_input"} if training else {"normalize", "sums"}
    if training and dtype == "float64":  # running buffers of the statistics' dtype: one kernel
        want.add("running")
    assert kinds == want
    tol = {"bfloat16": 2e-2, "float16": 2e-3}.get(dtype, 1e-5)
    for got, want in zip(*results[::-1]):
        np.testing.assert_allclose(got, want, atol=tol * 4, rtol=tol)


@pytest.mark.fake_kernels
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cuda_16_bit_running_statistics_are_one_kernel_rounded_once(fake_cuda, dtype):
    """A model cast to a 16-bit type keeps 16-bit running buffers and float32 statistics: on
    the fake CuPy each buffer's update is one kernel, computing in float32 and rounding once
    (PyTorch's GPU kernel does the same), within a 16-bit rounding of the CPU's op body."""
    from ember.backend import kernels

    kernels.clear()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5)) * 2 + 1
    running = [rng.standard_normal(3), rng.random(3) + 0.5]
    half = getattr(ember, dtype)
    results = []
    for device in ("cpu", "cuda"):
        rm, rv = (ember.tensor(a, device=device).to(half) for a in running)
        bn_x = ember.tensor(x, device=device).to(half)
        ember.nn.functional.batch_norm(bn_x, rm, rv, training=True, momentum=0.3)
        results.append([t.cpu().float().numpy() for t in (rm, rv)])
    assert {k[1] for k in kernels._cache if k[0] == "batchnorm"} >= {"running_half"}
    xs = x.astype(half.np).astype(np.float32)
    mean, var = xs.mean(axis=(0, 2)), xs.var(axis=(0, 2), ddof=1)
    for got, cpu, r, stat in zip(results[1], results[0], running, (mean, var)):
        once = (r.astype(half.np).astype(np.float32) * 0.7 + stat * 0.3).astype(half.np)
        np.testing.assert_allclose(got, once.astype(np.float32), rtol=1e-2, atol=1e-3)
        np.testing.assert_allclose(got, cpu, rtol=2e-2, atol=1e-2)
