"""The strict fake CuPy (``tests/_fakecupy/``) against its manifest and against real CuPy.

- The committed manifest (``tests/cupy_manifest.json``) is what ``tools/cupy_manifest.py``
  makes from the installed ``cupy`` (skipped without CuPy, or with another CuPy version).
- The fake refuses what CuPy refuses (each case also runs on NumPy, which accepts it: the
  causes of the first GPU run's failures, shared/gpu/2026-11-26).
- Its namespaces and ndarray members are CuPy's, no more.
- Ufunc result dtypes follow CuPy's loop tables: checked against CuPy's own resolver
  (``_Ops._guess_routine_from_in_types``, callable without a GPU) where CuPy imports, and
  against a table of its answers recorded here otherwise.
"""

from __future__ import annotations

import json
import operator
import os
import sys

import ml_dtypes
import numpy as np
import pytest

from tests._fakecupy import _manifest
from tests.backend import _nvrtc

try:  # the real CuPy (imports without a GPU), taken before any test installs the fake
    import cupy as REAL_CUPY
except ImportError:
    REAL_CUPY = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BF16 = np.dtype(ml_dtypes.bfloat16)


def _real_cupy():
    """The installed CuPy of the manifest's version, or a skip saying why not."""
    cupy = REAL_CUPY
    dist = _manifest.MANIFEST["cupy_distribution"]
    if cupy is None or getattr(cupy, "__name__", "") != "cupy":
        pytest.skip(f"cupy is not installed (pip install {dist}=={_manifest.VERSION} to check)")
    from importlib import metadata

    have = sorted(metadata.packages_distributions().get("cupy", ["unknown"]))[0]
    if (have, cupy.__version__) != (dist, _manifest.VERSION):
        pytest.skip(f"installed {have} {cupy.__version__}, manifest made from {dist} "
                    f"{_manifest.VERSION}")  # fmt: skip
    return cupy


# -- the manifest ---------------------------------------------------------------------------


def test_manifest_is_what_the_generator_makes_from_the_installed_cupy():
    _real_cupy()
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import cupy_manifest
    finally:
        sys.path.pop(0)
    fresh = json.loads(cupy_manifest.dumps(cupy_manifest.build()))
    with open(_manifest.PATH) as f:
        committed = json.load(f)
    for m in (fresh, committed):
        m.pop("numpy_version_at_generation")
    diff = [k for k in sorted(set(fresh) | set(committed)) if fresh.get(k) != committed.get(k)]
    assert not diff, (
        f"tests/cupy_manifest.json differs from the installed cupy in {diff}: run "
        "python tools/cupy_manifest.py"
    )


def test_manifest_has_the_rules_the_fake_needs():
    m = _manifest.MANIFEST
    assert m["namespaces"]["cupy"]["clip"]["signature"] == "(a, a_min, a_max, out=None)"
    assert "writeable" not in m["namespaces"]["cupy.lib.stride_tricks"]["as_strided"]["signature"]
    flags = {n for n in m["classes"]["cupy.ndarray.flags"]["members"] if not n.startswith("_")}
    assert flags == {"c_contiguous", "f_contiguous", "owndata", "fnc", "forc"}
    assert "bfloat16" not in m["compiled"]["ufunc_at_dtypes"]["cupy.add"]["dtypes"]
    assert "E->E" in m["ufuncs"]["cupy.sign"]["types"]
    assert m["compiled"]["messages"]["capture_d2h"]["text"].endswith("D2H transfers are disallowed")


# -- what the fake refuses --------------------------------------------------------------------


def _arr(xp, dtype=np.float32, shape=(2, 3)):
    return xp.asarray(np.arange(np.prod(shape), dtype=np.float32).reshape(shape).astype(dtype))


def _flags_writeable(xp):
    return _arr(xp).flags.writeable


def _as_strided_writeable(xp):
    return xp.lib.stride_tricks.as_strided(_arr(xp), (3,), (4,), writeable=False)


def _clip_casting(xp):
    return xp.clip(_arr(xp), 0, 1, out=_arr(xp), casting="unsafe")


def _add_at_bfloat16(xp):
    return xp.add.at(_arr(xp, BF16, (4,)), xp.asarray(np.array([0, 1, 1])), 1)


def _add_at_int8(xp):
    return xp.add.at(_arr(xp, np.int8, (4,)), xp.asarray(np.array([0, 1])), 1)


def _scatter_add_bfloat16(xp):
    a = _arr(xp, BF16, (4,))
    if xp is np:
        return np.add.at(a, np.array([0, 1]), 1)
    import cupyx

    return cupyx.scatter_add(a, xp.asarray(np.array([0, 1])), 1)


def _batched_bfloat16_matmul(xp):
    return xp.matmul(_arr(xp, BF16, (2, 3, 4)), _arr(xp, BF16, (2, 4, 5)))


def _missing_name(xp):
    return xp.insert(_arr(xp, shape=(3,)), 0, 1.0)  # NumPy has it, CuPy does not


def _implicit_conversion(xp):
    return np.asarray(_arr(xp))


def _item_with_index(xp):
    return _arr(xp).item(0)


def _operator_index(xp):
    return operator.index(_arr(xp, np.int64, ()))


def _view_as_numpy(xp):
    return _arr(xp).view(np.ndarray)


def _host_array_into_slice(xp):
    a = _arr(xp)
    a[0, :2] = np.array([1.0, 2.0], np.float32)


def _host_array_in_ufunc(xp):
    return xp.add(_arr(xp), np.ones((2, 3), np.float32))


def _numpy_keyword_on_ufunc(xp):
    a = _arr(xp)
    return xp.add(a, 1, out=a, where=a > 1)


def _numpy_ufunc_method(xp):
    return np.add.at(_arr(xp, np.float32, (4,)), np.array([0, 1]), 1)


def _boolean_negative(xp):
    return xp.negative(_arr(xp, np.bool_))


REFUSED = {
    "flags.writeable": (_flags_writeable, AttributeError, "writeable"),
    "as_strided(writeable=)": (_as_strided_writeable, TypeError, "writeable"),
    "clip(casting=)": (_clip_casting, TypeError, "casting"),
    "add.at bfloat16": (_add_at_bfloat16, TypeError, "cupy.add.at only supports"),
    "add.at int8": (_add_at_int8, TypeError, "cupy.add.at only supports"),
    "scatter_add bfloat16": (_scatter_add_bfloat16, TypeError, "cupy.add.at only supports"),
    "batched bfloat16 matmul": (_batched_bfloat16_matmul, TypeError, "data type 'E'"),
    "a name CuPy lacks": (_missing_name, AttributeError, "insert"),
    "numpy.asarray": (_implicit_conversion, TypeError, "Implicit conversion"),
    "item(0)": (_item_with_index, TypeError, "item"),
    "__index__": (_operator_index, TypeError, "integer"),
    "view(np.ndarray)": (_view_as_numpy, TypeError, "data type"),
    "host array into a slice": (_host_array_into_slice, ValueError, "non-scalar numpy.ndarray"),
    "host array in a ufunc": (_host_array_in_ufunc, TypeError, "Unsupported type"),
    "ufunc where=": (_numpy_keyword_on_ufunc, TypeError, "Wrong arguments"),
    "numpy ufunc.at on a device array": (_numpy_ufunc_method, TypeError, "NotImplemented"),
    "boolean negative": (_boolean_negative, TypeError, "boolean negative"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_fake_refuses_what_cupy_refuses(fake_cuda, case):
    fn, error, match = REFUSED[case]
    if case != "boolean negative":
        with np.errstate(all="ignore"):
            np.asarray(fn(np)) if case != "host array into a slice" else fn(np)  # NumPy: fine
    with pytest.raises(error, match=match):
        fn(fake_cuda)


def test_an_array_needing_no_copy_comes_back_itself(fake_cuda):
    """CuPy's ``ascontiguousarray`` / ``asarray`` return the input itself where no copy is
    needed: no second owner of its memory (the pool counted it twice before)."""
    cp = fake_cuda
    pool = cp.get_default_memory_pool()
    x = cp.ones((3, 4), dtype=np.float32)
    used = pool.used_bytes()
    assert cp.ascontiguousarray(x) is x and cp.asarray(x) is x
    view = x[:, :2]
    assert cp.asarray(view) is view and pool.used_bytes() == used
    copy = cp.ascontiguousarray(view)
    assert copy is not view and copy.flags.c_contiguous and pool.used_bytes() > used


def test_arrays_from_another_gpu_raise(fake_cuda):
    a = fake_cuda.ones(3)
    with fake_cuda.cuda.Device(1):
        b = fake_cuda.ones(3)
        with pytest.raises(ValueError, match="Peer access is unavailable"):
            fake_cuda.add(a, b)
        assert a.copy().device.id == 1  # copy() moves to the current GPU, as CuPy's does


def test_kernel_type_mismatch_is_cupys(fake_cuda):
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    k = fake_cuda.ElementwiseKernel("T g", "T p, T buf", "p = g; buf = g;", "probe")
    p = fake_cuda.zeros(3, BF16)
    with pytest.raises(TypeError, match="Type is mismatched. buf float32 bfloat16 T"):
        k(fake_cuda.ones(3, BF16), p, fake_cuda.zeros(3, np.float32))


def test_raw_kernel_arguments_must_match_the_parameters(fake_cuda):
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    src = 'extern "C" __global__ void probe(float* y, int n, float s, bool b) { y[0] = s + n + b; }'
    k = fake_cuda.RawKernel(src, "probe")
    y = fake_cuda.zeros(1, np.float32)
    k((1,), (1,), (y, np.int32(1), np.float32(2), True))
    assert float(y[0].get()) == 4
    k((1,), (1,), (y, 3, np.float32(2), np.bool_(False)))  # an int64: the low 4 bytes are 3
    assert float(y[0].get()) == 5
    with pytest.raises(TypeError, match=r"argument 1 is c_long.* \(8 bytes\), but .*'int'"):
        k((1,), (1,), (y, 2**40, np.float32(2), True))  # the low 4 bytes are not 2**40
    with pytest.raises(TypeError, match="argument 1 is c_short"):
        k((1,), (1,), (y, np.int16(1), np.float32(2), True))  # 2 bytes where 4 are read
    with pytest.raises(TypeError, match="argument 2 is c_double"):
        k((1,), (1,), (y, 1, 2.0, True))  # CuPy passes a Python float as a double
    with pytest.raises(TypeError, match="argument 0 is c_float .*'float\\*' .*a pointer"):
        k((1,), (1,), (np.float32(1), 1, np.float32(2), True))


_SHIFT = r"""
extern "C" __global__ void shift(float* y, int sync) {
  __shared__ float s[64];
  s[threadIdx.x] = (float)(threadIdx.x + 100 * blockIdx.x);
  if (sync) __syncthreads();
  y[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
"""


def test_a_blocks_threads_meet_at_barriers_and_a_missing_one_shows(fake_cuda):
    """Each thread reads its neighbour's shared-memory write: right after ``__syncthreads()``;
    without it some reads see the other block's or no write, as on a GPU where the order is
    free (the fake runs a block's threads ascending between barriers, then descending)."""
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    k = fake_cuda.RawKernel(_SHIFT, "shift")
    y = fake_cuda.zeros(2 * 64, np.float32)
    want = [(t + 1) % 64 + 100 * b for b in range(2) for t in range(64)]
    k((2,), (64,), (y, np.int32(1)))
    assert y.tolist() == want
    k((2,), (64,), (y, np.int32(0)))
    assert y.tolist() != want


def test_a_barrier_some_threads_skip_fails_the_launch(fake_cuda):
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    src = (
        'extern "C" __global__ void skip(float* y) {\n'
        "  if (threadIdx.x == 0) return;\n  __syncthreads();\n  y[threadIdx.x] = 1;\n}\n"
    )
    k = fake_cuda.RawKernel(src, "skip")
    with pytest.raises(RuntimeError, match="skip: some threads of a block ended while others"):
        k((1,), (32,), (fake_cuda.zeros(32, np.float32),))


@pytest.mark.skipif(not _nvrtc.available(), reason="needs CuPy, NVRTC and CUDA's headers")
def test_kernels_nvrtc_refuses_fail_their_launch(fake_cuda):
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    y = fake_cuda.zeros(2, np.float32)
    host_only = 'extern "C" __global__ void probe(float* y) { y[0] = std::fmax(1.0f, 2.0f); }'
    k = fake_cuda.RawKernel(host_only.replace("std::fmax", "fmaxf"), "probe")
    k((1,), (1,), (y,))  # g++ and NVRTC both take this one
    k = fake_cuda.RawKernel(host_only, "probe")  # g++ takes std::fmax, NVRTC does not
    with pytest.raises(_nvrtc.CompileError, match='namespace "std" has no member "fmax"'):
        k((1,), (1,), (y,))
    e = fake_cuda.ElementwiseKernel("T x", "T y", "y = std::fmax(x, x)", "probe_ew")
    with pytest.raises(_nvrtc.CompileError, match="probe_ew"):
        e(fake_cuda.ones(2, np.float32), y)
    e = fake_cuda.ElementwiseKernel("T x", "T y", "y = x * 0.1", "probe_f64")  # 0.1 a double
    with pytest.raises(_nvrtc.CompileError, match="'probe_f64' does float64 arithmetic"):
        e(fake_cuda.ones(2, np.float32), y)
    single = fake_cuda.ElementwiseKernel("T x", "T y", "y = x * 0.1f", "probe_f32")
    single(fake_cuda.ones(2, np.float32), y)


def test_launches_must_fit_an_sm_90_gpu(fake_cuda):
    if not fake_cuda.kernels_on():
        fake_cuda.reset(kernels=True)
    y = fake_cuda.zeros(1, np.float32)
    k = fake_cuda.RawKernel('extern "C" __global__ void probe(float* y) { y[0] = 1; }', "probe")
    k((1,), (1024,), (y,))
    for grid, block in (((1,), (1025,)), ((0,), (32,)), ((1,), (0,))):
        with pytest.raises(_nvrtc.LaunchError, match="CUDA_ERROR_INVALID_VALUE"):
            k(grid, block, (y,))
    with pytest.raises(_nvrtc.LaunchError, match="too many resources requested for launch"):
        # 72 registers x 1024 threads > 65536
        _nvrtc.check_launch("probe", (1,), (1024,), 0, _nvrtc.Report(72, 0, 0, 0))
    _nvrtc.check_launch("probe", (1,), (1024,), 0, _nvrtc.Report(64, 0, 0, 0))
    _nvrtc.check_launch("probe", (1,), (256,), 0, _nvrtc.Report(255, 0, 0, 0))
    with pytest.raises(_nvrtc.LaunchError, match="40960 \\+ 16384 bytes of shared memory"):
        _nvrtc.check_launch("probe", (1,), (256,), 16384, _nvrtc.Report(32, 40960, 0, 0))


def test_capture_refuses_host_transfers_and_runs_nothing(fake_cuda):
    cp = fake_cuda
    x = cp.ones(3, np.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        x += 1
        for transfer in (x.get, x.item, x.tolist, lambda: float(x[0]), lambda: cp.asnumpy(x)):
            with pytest.raises(RuntimeError, match="D2H transfers are disallowed"):
                transfer()
        with pytest.raises(RuntimeError, match="H2D transfers are disallowed"):
            cp.asarray(np.ones(3))
        g = s.end_capture()
    assert x.tolist() == [1.0, 1.0, 1.0]  # the capture ran nothing
    g.launch()
    g.launch()
    assert x.tolist() == [3.0, 3.0, 3.0]


# -- names ------------------------------------------------------------------------------------


def test_namespaces_have_exactly_cupys_names(fake_cuda):
    cp = fake_cuda
    for path, mod in (("cupy", cp), ("cupy.linalg", cp.linalg), ("cupy.cuda", cp.cuda),
                      ("cupyx", cp.cupyx), ("cupy.random", cp.random)):  # fmt: skip
        names = _manifest.NAMESPACES[path]
        extra = {n for n in vars(mod) if not n.startswith("_")} - set(names)
        if path == "cupy":
            extra -= set(cp.HOOKS)
        assert not extra, f"{path} has names CuPy lacks: {sorted(extra)}"
        for n in ("ElementwiseKernel", "RawKernel"):
            names = {k: v for k, v in names.items() if k != n}
        for n in names:
            getattr(mod, n)  # every CuPy name resolves


def test_ndarray_members_are_cupys(fake_cuda):
    members = _manifest.members("cupy.ndarray")
    public = {n for n in dir(fake_cuda.ndarray) if not n.startswith("_")}
    assert public == {n for n in members if not n.startswith("_")}
    for dunder in ("__index__", "__imatmul__", "__array_interface__", "__array_wrap__"):
        assert not hasattr(fake_cuda.ndarray, dunder)
    assert not isinstance(fake_cuda.ones(2), np.ndarray)


# -- ufunc dtypes -----------------------------------------------------------------------------

_PY = {"int": 2, "float": 2.5, "bool": True}


def _fake_result(cp, name, ins):
    """The fake's result dtype character for inputs given as manifest resolution codes."""
    args = [_PY[c] if c in _PY else cp.zeros(2, _manifest.dtype_of_char(c)) for c in ins]
    try:
        out = getattr(cp, name)(*args)
    except TypeError as e:
        return "!" if "Wrong type" not in str(e) else "-"
    return np.dtype((out[0] if isinstance(out, tuple) else out).dtype).char


def _combos(nin: int):
    codes = _manifest.MANIFEST["resolution_inputs"]
    if nin == 1:
        return [(c,) for c in codes if c not in _PY]
    return [(a, b) for a in codes for b in codes if not (a in _PY and b in _PY)]


@pytest.mark.parametrize(
    "qual",
    [
        q
        for q, e in _manifest.UFUNCS.items()
        if e["resolution"] and q.startswith("cupy.") and q.count(".") == 1
    ],
)
def test_ufunc_dtypes_follow_cupys_resolution(fake_cuda, qual):
    """Each ufunc of ``cupy`` on every dtype pair (and weak Python scalar): the fake computes a
    result of the dtype CuPy's resolver picks (recorded in the manifest by the generator)."""
    entry = _manifest.UFUNCS[qual]
    want = entry["resolution"]
    name = qual.split(".")[1]
    got = "".join(_fake_result(fake_cuda, name, ins) for ins in _combos(entry["nin"]))
    bad = [
        f"{ins}: fake {g}, cupy {w}"
        for ins, g, w in zip(_combos(entry["nin"]), got, want)
        if g != w
    ]
    assert not bad, "\n".join(bad[:20])


def test_some_cupy_dtypes_differ_from_numpys(fake_cuda):
    """Where CuPy's tables and NumPy disagree, the fake says CuPy's."""
    cp = fake_cuda
    b = cp.ones(3, BF16)
    assert (b * 2.0).dtype == np.float32  # NumPy: bfloat16 (CuPy has no weak-float EE match)
    assert cp.where(b > 0, b, b).dtype == np.float32  # _where_ufunc has no bfloat16 loop
    assert cp.sign(b).dtype == BF16
    assert cp.floor(cp.ones(3, np.int32)).dtype == np.int32
