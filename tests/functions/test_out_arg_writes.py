"""What ``out=`` does to ``out`` (ember/functions/out_arg.py), each rule beside PyTorch 2.13's:
the same object back, writes through views into their base, the version counter, resizing
(and its warning), the dtype rules' errors, autograd's refusal, devices, tuple outs, and
``ember.compile`` recording the write as an in-place op."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import ember

A = np.arange(6.0, dtype=np.float32).reshape(2, 3)
B = np.full((2, 3), 0.5, np.float32)


def _both(fn):
    """``fn(module)`` for ember and torch: (ember's value, torch's value) or the exception."""
    results = []
    for m in (ember, torch):
        try:
            results.append(fn(m))
        except Exception as e:  # noqa: BLE001  (compared below)
            results.append(e)
    return results


def _error_like_torch(fn, pattern: str) -> str:
    """Both raise a RuntimeError/TypeError of the same kind matching ``pattern`` (case-
    insensitive); returns ember's message."""
    got, want = _both(fn)
    assert isinstance(want, Exception), f"torch did not raise: {want}"
    assert isinstance(got, Exception), f"ember did not raise: {got}"
    for kind in (TypeError, RuntimeError):  # ember's DTypeError is both
        assert isinstance(got, kind) or not isinstance(want, kind), (got, want)
    for e in (got, want):
        assert re.search(pattern, str(e), re.IGNORECASE), str(e)
    return str(got)


def _values(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def test_the_result_is_out_itself_and_its_version_bumps():
    def run(m):
        out = m.zeros(2, 3)
        before = out._version if m is torch else out._version_value
        got = m.add(m.tensor(A), m.tensor(B), out=out)
        after = out._version if m is torch else out._version_value
        return got is out, after - before, _values(out)

    (same, bump, got), (t_same, t_bump, want) = _both(run)
    assert same and t_same and bump == t_bump == 1
    np.testing.assert_array_equal(got, want)


def test_out_may_be_an_input():
    def run(m):
        a = m.tensor(A)
        return m.mul(a, 2, out=a) is a, _values(a)

    (same, got), (_, want) = _both(run)
    assert same
    np.testing.assert_array_equal(got, want)


def test_a_view_writes_into_its_base_and_bumps_its_version():
    def run(m):
        base = m.zeros(4, 3)
        m.add(m.tensor(A), m.tensor(B), out=base[1:3])
        return _values(base), base._version if m is torch else base._version_value

    (got, version), (want, t_version) = _both(run)
    np.testing.assert_array_equal(got, want)
    assert version == t_version == 1


def test_a_resized_view_that_fits_stays_in_its_base():
    def run(m):
        base = m.zeros(4, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m.add(m.tensor(A), m.tensor(B), out=base[1:2])
        return _values(base), _values(out)

    (got_base, got), (want_base, want) = _both(run)
    np.testing.assert_array_equal(got_base, want_base)
    np.testing.assert_array_equal(got, want)


def _resized_past_its_storage(m):
    base = m.zeros(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m.add(m.tensor(A), m.tensor(B), out=base[2:])
    return _values(base), _values(out)


def test_a_resized_view_that_does_not_fit_gets_the_result():
    (_, got), (_, want) = _both(_resized_past_its_storage)
    np.testing.assert_array_equal(got, want)


@pytest.mark.xfail(
    strict=True,
    reason="PyTorch grows the storage the view shares with its base (the base then reads the "
    "result); ember's arrays can't grow, so the view gets fresh memory",
)
def test_a_resized_view_that_does_not_fit_grows_its_bases_storage():
    (got, _), (want, _) = _both(_resized_past_its_storage)
    np.testing.assert_array_equal(got, want)


def test_resizing_an_out_with_elements_warns_as_torch():
    messages = []
    for m in (ember, torch):
        with pytest.warns(UserWarning) as record:
            out = m.zeros(5)
            m.add(m.tensor(A), m.tensor(B), out=out)
        assert tuple(out.shape) == (2, 3)
        messages.append(str(record[0].message))
    common = "was resized since it had shape [5], which does not match the required output shape"
    for text in messages:
        assert f"{common} [2, 3]" in text, text


def test_an_empty_out_is_resized_silently():
    for m in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = m.sum(m.tensor(A), 1, out=m.zeros(0))
        assert tuple(out.shape) == (2,)


def test_a_result_that_cannot_be_cast_to_outs_dtype():
    msg = _error_like_torch(
        lambda m: m.add(m.tensor(A), m.tensor(B), out=m.zeros(2, 3, dtype=m.int64)),
        r"result type [\w.]+ can't be cast to the desired output type [\w.]+",
    )
    assert "add" in msg and "float32" in msg and "int64" in msg


def test_the_matmul_family_wants_outs_dtype_exactly():
    msg = _error_like_torch(
        lambda m: m.mm(m.tensor(A), m.tensor(B).T, out=m.zeros(2, 2, dtype=m.float64)),
        r"expected out tensor to have dtype [\w.]+, but got [\w.]+ instead",
    )
    assert "mm" in msg


def test_a_dtype_argument_must_be_outs_dtype():
    _error_like_torch(
        lambda m: m.arange(5, dtype=m.float32, out=m.zeros(0, dtype=m.int64)),
        r"dtype [\w.]+ does not match (the )?dtype of (the )?out parameter \([\w.]+\)",
    )


@pytest.mark.parametrize("name", ["arange", "zeros", "eye"])
def test_creation_takes_outs_dtype(name):
    def run(m):
        out = m.zeros(0, dtype=m.int64)
        getattr(m, name)(3, out=out)
        return str(out.dtype).split(".")[-1], _values(out)

    (dt, got), (t_dt, want) = _both(run)
    assert dt == t_dt == "int64"
    np.testing.assert_array_equal(got, want)


def test_a_read_only_broadcast_out_is_refused():
    _error_like_torch(
        lambda m: m.add(m.tensor(A), m.tensor(B), out=m.zeros(1, 3).expand(2, 3)),
        r"expand|single memory location",
    )


def test_grad_mode_refuses_out_for_a_result_that_requires_grad():
    def with_input(m):
        return m.add(m.ones(3, requires_grad=True), 1, out=m.zeros(3))

    def with_out(m):
        return m.add(m.ones(3), 1, out=m.zeros(3, requires_grad=True))

    def with_tuple(m):
        x = m.tensor(A, requires_grad=True)
        return m.max(x, 1, out=(m.zeros(0), m.zeros(0, dtype=m.int64)))

    for fn in (with_input, with_out, with_tuple):
        got, want = _both(fn)
        assert isinstance(got, ember.AutogradError)
        assert str(got) == str(want)


def test_a_result_that_needs_no_grad_is_written_under_grad_mode():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        eq = m.eq(x, 1.0, out=m.zeros(2, 3, dtype=m.bool))
        arg = m.argmax(x, 1, out=m.zeros(2, dtype=m.int64))
        return _values(eq), _values(arg)

    (eq, arg), (t_eq, t_arg) = _both(run)
    np.testing.assert_array_equal(eq, t_eq)
    np.testing.assert_array_equal(arg, t_arg)


def test_no_grad_allows_out_with_inputs_and_outs_that_require_grad():
    def run(m):
        out = m.zeros(2, 3, requires_grad=True)
        with m.no_grad():
            m.add(m.tensor(A, requires_grad=True), 1, out=out)
        return _values(out), out.requires_grad

    (got, rg), (want, t_rg) = _both(run)
    np.testing.assert_array_equal(got, want)
    assert rg == t_rg


@pytest.mark.parametrize(
    "out",
    [
        lambda m: (m.zeros(0),),  # one tensor for (values, indices)
        lambda m: m.zeros(0),  # a tensor where a tuple is needed
    ],
    ids=["short_tuple", "tensor_for_tuple"],
)
def test_a_tuple_result_needs_a_tuple_of_outs(out):
    _error_like_torch(lambda m: m.max(m.tensor(A), 1, out=out(m)), r"tuple|out")


def test_a_tuple_out_returns_the_same_tensors():
    def run(m):
        outs = (m.zeros(0), m.zeros(0, dtype=m.int64))
        got = m.sort(m.tensor(B - A), 1, descending=True, out=outs)
        return got[0] is outs[0] and got[1] is outs[1], _values(outs[0]), _values(outs[1])

    (same, values, indices), (t_same, t_values, t_indices) = _both(run)
    assert same and t_same
    np.testing.assert_array_equal(values, t_values)
    np.testing.assert_array_equal(indices, t_indices)


def test_out_must_be_a_tensor():
    _error_like_torch(
        lambda m: m.add(m.tensor(A), m.tensor(B), out=[1, 2]), r"'out' must be (a )?Tensor"
    )


def test_functions_torch_gives_no_out_refuse_it():
    _error_like_torch(
        lambda m: m.clone(m.tensor(A), out=m.zeros(2, 3)),
        r"unexpected keyword argument 'out'",
    )


def test_autocast_leaves_out_calls_alone():
    def run(m):
        a = m.tensor(A)
        with m.autocast("cpu", dtype=m.bfloat16):
            out = m.mm(a, a.T, out=m.zeros(0))
        return str(out.dtype).split(".")[-1], _values(out)

    (dt, got), (t_dt, want) = _both(run)
    assert dt == t_dt == "float32"
    np.testing.assert_array_equal(got, want)


def test_the_signature_shows_out():
    import inspect

    assert inspect.signature(ember.add).parameters["out"].default is None
    assert ember.absolute is ember.abs  # aliases stay one function


def test_on_a_device(device):
    x = ember.tensor(A, device=device)
    out = ember.zeros(0, device=device)
    got = ember.matmul(x, x.T, out=out)
    assert got is out and out.device.type == device
    np.testing.assert_allclose(out.cpu().numpy(), A @ A.T)
    r = ember.zeros(0, dtype=ember.int64, device=device)
    assert ember.arange(4, out=r).device.type == device  # creation makes it on out's device
    assert r.cpu().tolist() == [0, 1, 2, 3]


@pytest.mark.gpu
def test_out_on_another_device_is_refused(fake_cuda):
    out = ember.zeros(2, 3, device="cuda")
    with pytest.raises(ember.DeviceError, match=r"add\(\).*device cpu.*cuda"):
        ember.add(ember.tensor(A), ember.tensor(B), out=out)


# -- ember.compile ----------------------------------------------------------------------------
CALLS = {
    "add": lambda m, x, y, r: m.add(x, y, alpha=2, out=r),
    "matmul": lambda m, x, y, r: m.matmul(x, y.T, out=r),
    "sum": lambda m, x, y, r: m.sum(x * y, 1, out=r),
    "cat": lambda m, x, y, r: m.cat([x, y], out=r),
}


@pytest.mark.parametrize("name", CALLS)
def test_compiled_equals_eager(name):
    call = CALLS[name]
    x, y = ember.tensor(A), ember.tensor(B)

    def step(x, y, r):
        call(ember, x, y, r)
        return r * 1

    eager_out = ember.zeros(0)  # resized by the call
    want = step(x, y, eager_out)
    compiled = ember.compile(step)
    for _ in range(2):  # the trace, then a run of the compiled graph
        out = ember.zeros(*tuple(want.shape))
        got = compiled(x, y, out)
        np.testing.assert_allclose(got.numpy(), want.numpy())
        np.testing.assert_allclose(out.numpy(), want.numpy())
    torch_out = torch.zeros(0)
    call(torch, torch.tensor(A), torch.tensor(B), torch_out)
    np.testing.assert_allclose(want.numpy(), torch_out.numpy())


def test_compiled_writes_a_captured_out():
    state = ember.zeros(2, 3)

    @ember.compile
    def step(x):
        ember.add(state, x, out=state)
        return state * 1

    x = ember.tensor(B)
    for i in range(1, 4):
        got = step(x)
        np.testing.assert_allclose(state.numpy(), B * i)
        np.testing.assert_allclose(got.numpy(), B * i)
