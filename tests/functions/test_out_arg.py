"""``out=`` on the ``ember.*`` functions, checked against PyTorch 2.13 case by case.

The candidates are asked from torch: every public function of ``ember/functions`` whose aten
operator has an ``out`` overload. Each has a sample call in ``CASES``; torch then says whether
its Python function takes ``out=`` for that call. Where torch takes it, ember must too, with
torch's values, dtypes and shapes written into the same ``out`` object (resized from zero
elements) and torch's dtype rule (a wider and a narrower ``out`` dtype are each accepted or
refused as torch does); where torch refuses, ember refuses with a TypeError naming ``out``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.functions import out_arg

_rng = np.random.default_rng(0)


def _normal(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


X, Y, Z = _normal(3, 4), _normal(3, 4), _normal(3, 4)
POS = np.abs(_normal(3, 4)) + 0.5
UNIT = _rng.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
INT = _rng.integers(-5, 6, (3, 4))
INT2 = _rng.integers(-5, 6, (3, 4))
BOOL = _rng.random((3, 4)) < 0.5
V, W, SORTED = _normal(4), _normal(4), np.sort(_normal(4))
MAT = _normal(4, 5)
B1, B2 = _normal(2, 3, 4), _normal(2, 4, 5)
IDX = np.array([[0, 3], [1, 1], [2, 0]])
ROWS = np.array([0, 2])
V3, W3 = _normal(4, 3), _normal(4, 3)
COUNTS = np.array([0, 1, 1, 3, 2])
RUNS = np.array([1, 1, 2, 2, 3, 1])

RANDOM = {
    "empty", "empty_like", "rand", "randn", "randint", "rand_like", "randn_like",
    "randint_like", "randperm", "bernoulli", "multinomial", "normal", "poisson",
}  # fmt: skip


def C(name, *args, **kwargs):
    return pytest.param(name, args, kwargs, id=name)


def _unary(names, x=X):
    return [C(n, x) for n in names.split()]


def _binary(names, x=X, y=Y):
    return [C(n, x, y) for n in names.split()]


CASES = [
    *_unary(
        "neg negative abs absolute sign sgn square reciprocal exp exp2 expm1 sin cos tan sinh "
        "cosh atan arctan tanh sigmoid relu erf erfc floor ceil trunc fix round frac deg2rad "
        "rad2deg signbit sinc i0 lgamma digamma isnan isinf isposinf isneginf logical_not msort "
        "clone nan_to_num"
    ),
    *_unary("log log1p log2 log10 sqrt rsqrt", POS),
    *_unary("asin acos arcsin arccos erfinv logit", UNIT),
    *_binary(
        "add sub subtract rsub mul multiply div divide true_divide floor_divide remainder fmod "
        "maximum minimum atan2 arctan2 eq ne lt le gt ge greater greater_equal less less_equal "
        "not_equal logical_and logical_or logical_xor logaddexp logaddexp2 hypot copysign "
        "heaviside fmax fmin kron inner dist"
    ),
    *_binary("pow float_power", POS, Y),
    C("xlogy", Y, POS),
    *_binary("bitwise_and bitwise_or bitwise_xor", INT, INT2),
    C("bitwise_not", INT),
    C("add", X, 2.5, alpha=3),
    C("mul", X, 2),
    C("clamp", X, -0.5, 0.5),
    C("clip", X, -0.5, 0.5),
    C("clamp_min", X, 0.0),
    C("clamp_max", X, 0.0),
    C("where", BOOL, X, Y),
    C("masked_fill", X, BOOL, 0.5),
    C("gather", X, 1, IDX),
    C("scatter", X, 1, IDX, Y[:, :2].copy()),
    C("scatter_add", X, 1, IDX, Y[:, :2].copy()),
    C("index_select", X, 0, ROWS),
    C("masked_select", X, BOOL),
    C("index_put", X, (ROWS,), Y[:2].copy()),
    C("mm", X, MAT),
    C("matmul", X, MAT),
    C("bmm", B1, B2),
    C("dot", V, W),
    C("outer", V, W),
    C("mv", X, V),
    C("addmm", Z[:, :1].copy(), X, MAT),
    C("addmv", Z[:, 0].copy(), X, V),
    C("addr", _normal(4, 4), V, W),
    C("baddbmm", _normal(2, 3, 5), B1, B2),
    C("tensordot", X, MAT, dims=1),
    C("sum", X, 1),
    C("sum", X),
    C("mean", X, 1),
    C("prod", X, 1),
    C("nansum", X, 1),
    C("nanmean", X, 1),
    C("cumsum", X, 1),
    C("cumprod", X, 1),
    C("logcumsumexp", X, 1),
    C("cummax", X, 1),
    C("cummin", X, 1),
    C("max", X, 1),
    C("max", X),
    C("max", X, Y),
    C("min", X, 1, keepdim=True),
    C("min", X),
    C("amax", X, 1),
    C("amin", X, 1),
    C("aminmax", X, dim=1),
    C("argmax", X, 1),
    C("argmin", X, 1),
    C("var", X, 1),
    C("std", X, 1),
    C("var_mean", X, 1),
    C("std_mean", X, 1),
    C("logsumexp", X, 1),
    C("norm", X),
    C("all", BOOL, 1),
    C("any", BOOL, 1),
    C("count_nonzero", INT, 1),
    C("median", X, 1),
    C("median", X),
    C("nanmedian", X, 1),
    C("kthvalue", X, 2, 1),
    C("mode", INT, 1),
    C("quantile", X, 0.25, 1),
    C("nanquantile", X, 0.25, 1),
    C("softmax", X, 1),
    C("log_softmax", X, 1),
    C("sort", X, 1),
    C("argsort", X, 1),
    C("topk", X, 2),
    C("cat", [X, Y]),
    C("concat", [X, Y], 1),
    C("concatenate", [X, Y]),
    C("stack", [X, Y], 1),
    C("hstack", [X, Y]),
    C("vstack", [X, Y]),
    C("column_stack", [V, W]),
    C("flip", X, (0,)),
    C("roll", X, 1, 0),
    C("rot90", X),
    C("tril", X),
    C("triu", X, 1),
    C("diag", V),
    C("diag_embed", X),
    C("trace", X),
    C("block_diag", X, Y),
    C("cross", V3, W3, dim=1),
    C("diff", X),
    C("addcmul", X, Y, Z, value=0.5),
    C("addcdiv", X, Y, POS),
    C("lerp", X, Y, 0.3),
    C("isin", INT, INT2),
    C("nonzero", INT),
    C("unique_consecutive", RUNS),
    C("bincount", COUNTS),
    C("histc", X, 4),
    C("histogram", X, 4),
    C("renorm", X, 2, 0, 1.0),
    C("chain_matmul", X, MAT, MAT.T),
    C("vander", V),
    C("cov", X),
    C("corrcoef", X),
    C("pinverse", MAT),
    C("searchsorted", SORTED, X),
    C("bucketize", X, SORTED),
    C("take", X, ROWS),
    C("take_along_dim", X, IDX, 1),
    C("repeat_interleave", X, 2),
    C("index_add", X, 0, ROWS, Y[:2].copy()),
    C("index_copy", X, 0, ROWS, Y[:2].copy()),
    C("index_fill", X, 0, ROWS, 1.5),
    C("scalar_tensor", 2.5),
    C("zeros", 3, 4),
    C("ones", (3, 4)),
    C("empty", 3, 4),
    C("full", (3, 4), 2.5),
    C("zeros_like", X),
    C("ones_like", X),
    C("empty_like", X),
    C("full_like", X, 2.5),
    C("arange", 5),
    C("arange", 1.0, 2.0, 0.25),
    C("linspace", 0.0, 1.0, 5),
    C("logspace", 0.0, 2.0, 5),
    C("eye", 3),
    C("tril_indices", 3, 3),
    C("triu_indices", 3, 4, 1),
    C("rand", 3, 4),
    C("randn", 3, 4),
    C("randint", 0, 5, (3, 4)),
    C("rand_like", X),
    C("randn_like", X),
    C("randint_like", X, 5),
    C("randperm", 5),
    C("bernoulli", UNIT),
    C("multinomial", POS, 2),
    C("normal", X, 1.0),
    C("poisson", POS),
]


BEYOND_TORCH = {
    "sum1": "torch's sum(input, *, dtype) overload has no out; ember's one sum takes it",
    "median1": "torch's median(input) overload has no out; ember's one median takes it",
}
"""Calls where ember takes out= and torch refuses it (one ember function serves overloads
of which only some have out= in torch)."""


def _convert(module, value):
    if isinstance(value, np.ndarray):
        return module.tensor(value)
    if isinstance(value, list):
        return [_convert(module, v) for v in value]
    if isinstance(value, tuple):
        return tuple(_convert(module, v) for v in value)
    return value


def _call(module, name, args, kwargs, **extra):
    return getattr(module, name)(*_convert(module, args), **kwargs, **extra)


def _outs(module, like, dtype=None, empty=False):
    """Tensors to pass as ``out=`` for a result ``like``: of its shape (or with no elements),
    of its dtype or of ``dtype`` (tuple results: only the first element's dtype changes)."""
    if isinstance(like, tuple):
        return tuple(_outs(module, r, dtype if i == 0 else None, empty) for i, r in enumerate(like))
    dt = getattr(module, str(dtype or like.dtype).split(".")[-1])
    return module.zeros(0 if empty else tuple(like.shape), dtype=dt)


def _torch_takes_out(name, args, kwargs) -> bool:
    like = _call(torch, name, args, kwargs)
    try:
        _call(torch, name, args, kwargs, out=_outs(torch, like))
    except TypeError:  # "unexpected keyword argument 'out'", or no overload with out
        return False
    return True


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def _same(got, want, name) -> None:
    assert _dtype_name(got) == _dtype_name(want)
    assert tuple(got.shape) == tuple(want.shape)
    if name not in RANDOM:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("name", "args", "kwargs"), CASES)
def test_out_like_torch(name, args, kwargs, request):
    if request.node.callspec.id in BEYOND_TORCH:
        assert not _torch_takes_out(name, args, kwargs), "torch takes it now: drop BEYOND_TORCH"
        out = ember.zeros(0)
        assert _call(ember, name, args, kwargs, out=out) is out
        return
    if not _torch_takes_out(name, args, kwargs):
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            _call(ember, name, args, kwargs, out=ember.zeros(0))
        return
    assert name in out_arg.OUT, f"torch.{name} takes out=: add {name!r} to out_arg.OUT"
    ember.manual_seed(0)
    like = _call(torch, name, args, kwargs)
    want_out = _outs(torch, like)
    want = _call(torch, name, args, kwargs, out=want_out)
    out = _outs(ember, like, empty=True)  # resized to the result's shape
    got = _call(ember, name, args, kwargs, out=out)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, o, w in zip(got, out, want):
            assert g is o
            _same(g, w, name)
    else:
        assert got is out
        _same(got, want, name)


def _outcome(module, name, args, kwargs, dtype) -> str:
    like = _call(module, name, args, kwargs)
    try:
        _call(module, name, args, kwargs, out=_outs(module, like, dtype))
    except (RuntimeError, TypeError, ValueError):  # EmberError is a RuntimeError
        return "refused"  # torch: RuntimeError, NotImplementedError (a RuntimeError), cat's
        # TypeError, arange's ValueError
    return "written"


def _first_dtype(like):
    return (like[0] if isinstance(like, tuple) else like).dtype


TAKEN = [p for p in CASES if p.id not in BEYOND_TORCH and _torch_takes_out(*p.values)]
"""The cases whose call torch takes out= for."""

_NO_BOOL_KERNEL = (
    "torch has no bool kernel for it and ember's function makes bool tensors with dtype=bool "
    "(a creation-function gap, not an out= one)"
)
DTYPE_XFAIL = {
    "narrower-arange0": _NO_BOOL_KERNEL,
    "narrower-randint": _NO_BOOL_KERNEL,
    "narrower-randperm": _NO_BOOL_KERNEL,
    "narrower-nansum": "torch's nansum out= kernel has no int64 (its dtype=int64 works: ember's "
    "out= runs nansum(dtype=out.dtype))",
}
"""Dtype outcomes where ember still differs from torch (strict xfails), with the reason."""


@pytest.mark.parametrize(("name", "args", "kwargs"), TAKEN)
@pytest.mark.parametrize("target", ["wider", "narrower"])
def test_out_dtype_rule_like_torch(name, args, kwargs, target, request):
    if request.node.callspec.id in DTYPE_XFAIL:
        request.applymarker(
            pytest.mark.xfail(reason=DTYPE_XFAIL[request.node.callspec.id], strict=True)
        )
    dt = _first_dtype(_call(torch, name, args, kwargs))
    if target == "wider":
        dtype = torch.float64 if dt.is_floating_point else torch.float32
    else:
        dtype = torch.int64 if dt.is_floating_point else torch.bool
        if dt == torch.bool:
            pytest.skip("nothing narrower than bool")
    want = _outcome(torch, name, args, kwargs, dtype)
    assert _outcome(ember, name, args, kwargs, dtype) == want


def test_every_candidate_has_a_case():
    """Every public function whose aten operator has an out= overload is in CASES (torch then
    decides whether its Python function takes out=), and OUT names only such functions."""
    names = {
        n
        for module in _function_modules()
        for n in module.__all__
        if any(
            a.is_out
            for s in torch._C._jit_get_schemas_for_operator(f"aten::{n}")
            for a in s.arguments
        )
    }
    cased = {p.values[0] for p in CASES}
    assert not names - cased, f"functions with an aten out= overload and no case: {names - cased}"
    assert not set(out_arg.OUT) - cased, f"OUT names with no case: {set(out_arg.OUT) - cased}"


def _has_out_overload(name: str) -> bool:
    schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    return any(a.is_out for s in schemas for a in s.arguments)


def _function_modules():
    import importlib
    import pkgutil

    import ember.functions

    for info in pkgutil.iter_modules(ember.functions.__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"ember.functions.{info.name}")
            if hasattr(module, "__all__"):
                yield module
