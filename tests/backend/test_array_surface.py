"""The array surface (``ember/backend/arrays.py``): only the backend touches what NumPy and CuPy
do differently, and each helper's CuPy body gives its NumPy body's result.

The lint below reads every module of ember outside ``ember/backend/`` (code only: comments and
strings are left out) for the patterns that broke on a real GPU (array flags, ``as_strided``,
``ufunc.at``, ``casting=``, CuPy imported by name).
"""

from __future__ import annotations

import pathlib
import re
import tokenize

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.backend import arrays

ROOT = pathlib.Path(ember.__file__).resolve().parent
BF16 = np.dtype(ml_dtypes.bfloat16)

FORBIDDEN = {
    r"\.flags\.writeable|\bsetflags\(|\bwriteable\s*=": "array write flags (CuPy has none): "
    "Tensor._readonly, arrays.writeable / arrays.freeze",
    r"\bas_strided\b": "as_strided's keywords differ: arrays.strided_view",
    r"\.\w+\.at\(": "ufunc.at (CuPy serves few dtypes): arrays.scatter_add",
    r"\bcasting\s*=": "casting= (cupy.clip & co. lack it): arrays.assign",
    r"\bcupyx\b|\bimport cupy\b|\bfrom cupy\b": "CuPy by name: the backend's xp",
}


def _code(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line number, code) of a module with its comments and strings blanked."""
    lines: dict[int, list[str]] = {}
    with open(path, "rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING, tokenize.ENCODING):
                continue
            if tok.type == getattr(tokenize, "FSTRING_MIDDLE", None):
                continue
            lines.setdefault(tok.start[0], []).append(tok.string)
    return [(n, " ".join(parts)) for n, parts in lines.items()]


def _offences(path: pathlib.Path) -> list[str]:
    found = []
    for n, code in _code(path):
        squeezed = re.sub(r"\s*\.\s*", ".", re.sub(r"\s*\(", "(", code))
        for pattern, why in FORBIDDEN.items():
            if re.search(pattern, squeezed):
                found.append(f"{path.relative_to(ROOT.parent)}:{n}: {why}")
    return found


def test_only_the_backend_touches_what_numpy_and_cupy_do_differently():
    modules = [p for p in ROOT.rglob("*.py") if "backend" not in p.relative_to(ROOT).parts[:1]]
    assert len(modules) > 100
    offences = [o for p in sorted(modules) for o in _offences(p)]
    assert not offences, "\n".join(offences)


@pytest.mark.parametrize(
    "source, hits",
    [
        ("ok = a.flags.c_contiguous\n", 0),
        ("bad = a.flags.writeable\n", 1),
        ("np.add.at(a, i, v)\n", 1),
        ("xp.clip(a, 0, 1, out=a, casting='unsafe')\n", 1),
        ("'''a docstring that says as_strided and casting='unsafe''''\nx = 1\n", 0),
        ("y = 2  # a comment about np.add.at(a, i, v)\n", 0),
        ("import cupyx\n", 1),
    ],
)
def test_the_lint_reads_code_not_words(tmp_path, source, hits):
    path = ROOT / "_lint_probe.py"
    try:
        path.write_text(source)
        assert len(_offences(path)) == hits
    finally:
        path.unlink()


# -- the helpers: the CuPy body gives the NumPy body's result ----------------------------------

SCATTER_DTYPES = [
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
]


def _np(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("dtype", SCATTER_DTYPES)
def test_scatter_add_on_cuda_equals_numpy_add_at(fake_cuda, dtype):
    dt = _np(dtype)
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((4, 3)) * 3).astype(dt)
    values = (rng.standard_normal((5, 3)) * 3).astype(dt)
    index = np.array([0, 2, 2, 3, 0])
    want = base.copy()
    np.add.at(want, index, values)
    got = fake_cuda.asarray(base)
    arrays.scatter_add(got, fake_cuda.asarray(index), fake_cuda.asarray(values))
    assert got.dtype == dt
    # bfloat16 sums in float32 on the GPU (one rounding, not one per add as in NumPy)
    tol = 2.0**-7 if dtype == "bfloat16" else 0
    np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), tol, tol)


def test_strided_view_on_cuda_equals_numpy(fake_cuda):
    a = np.arange(12.0)
    want = arrays.strided_view(a, (5, 4), (16, 8))
    got = arrays.strided_view(fake_cuda.asarray(a), (5, 4), (16, 8))
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_assign_casts_like_a_c_cast_on_both(fake_cuda, dtype):
    value = np.array([1.7, -2.2, 300.5])
    want = np.zeros(3, _np(dtype))
    arrays.assign(want, value)
    got = fake_cuda.zeros(3, _np(dtype))
    arrays.assign(got, fake_cuda.asarray(value))
    np.testing.assert_array_equal(got.get(), want)


def test_writeable_and_freeze():
    a = np.zeros(3)
    assert arrays.writeable(a)
    assert arrays.freeze(a) is a and not arrays.writeable(a)
    assert not arrays.writeable(np.broadcast_to(np.zeros(1), (2,)))


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, a: xp.where(a > 0, a, 0),
        lambda xp, a: xp.where(a > 0, 1.5, a),
        lambda xp, a: xp.clip(a, -1, 1),
        lambda xp, a: xp.round(a),
        lambda xp, a: xp.around(a * 4, 0),
    ],
    ids=["where-0", "where-1.5", "clip", "round", "around"],
)
def test_cupy_surface_keeps_bfloat16(fake_cuda, call):
    a = np.array([1.5, -2.5, 0.3, -0.7, 2.0, 0.0], BF16)
    want = call(np, a)
    xp = arrays.cupy_surface(fake_cuda)
    got = call(xp, fake_cuda.asarray(a))
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.get(), want)


def test_cupy_surface_serves_batched_bfloat16_matmul(fake_cuda):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(BF16) for s in ((4, 2, 3), (3, 5)))
    with pytest.raises(TypeError, match="data type 'E' not understood"):
        fake_cuda.matmul(fake_cuda.asarray(a), fake_cuda.asarray(b[None]))  # as CuPy 14.2
    xp = arrays.cupy_surface(fake_cuda)
    got = xp.matmul(fake_cuda.asarray(a), fake_cuda.asarray(b[None]))
    assert got.dtype == BF16 and got.shape == (4, 2, 5)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(got.get(), want)


def test_expand_is_read_only_as_ember_metadata_on_every_device(device):
    x = ember.zeros(1, 3, device=device).expand(4, 3)
    assert x._readonly and x.detach()._readonly and x[1:]._readonly
    with pytest.raises(ember.EmberError, match="read-only broadcast view"):
        x.add_(1)
    with pytest.raises(ember.EmberError, match="read-only broadcast view"):
        x.detach().fill_(2)
    y = x.clone()
    assert not y._readonly
    y.add_(1)
    assert float(y.sum()) == 12.0
