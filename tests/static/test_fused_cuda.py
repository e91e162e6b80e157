"""The CUDA C that elementwise fusion emits for CuPy (``passes.fused_renderers.cuda_source``).

Without a GPU the generated operation is checked by compiling it as C++ on the host (g++,
when present), one loop over the elements around the kernel body, and comparing with the NumPy
path of the same fused node on inputs with NaN, infinities and signed zeros. On a GPU the test
at the end runs the real ``cupy.ElementwiseKernel``.
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import ember
from ember import dtypes
from ember.ops import elementwise as ew
from ember.static import Graph
from ember.static.passes import elementwise_fusion
from ember.static.passes.fuse import FusedElementwise
from ember.static.passes.fused_renderers import cuda_preamble, cuda_source

SHAPE = (64,)
F32, F64, B = np.dtype(np.float32), np.dtype(np.float64), np.dtype(bool)


def _fused(build, in_dtypes, dtype=F32):
    """The FusedElementwise op that fusion makes of ``build(graph, inputs)``, and its inputs'
    dtypes in its own order."""
    g = Graph("f")
    xs = [g.add_input(SHAPE, d, f"x{i}") for i, d in enumerate(in_dtypes)]
    g.outputs.append(build(g, xs, dtype))
    (node,) = elementwise_fusion(g).nodes
    assert type(node.op) is FusedElementwise
    return node.op, [v.dtype for v in node.inputs]


def node(g, op, xs, dtype):
    return g.add_node(op, list(xs), SHAPE, dtype)


PROGRAMS = {
    "arith": (
        lambda g, x, d: node(
            g,
            ew.DIV,
            [node(g, ew.SUB, [node(g, ew.MUL, x[:2], d), x[2]], d), node(g, ew.ADD, x[1:], d)],
            d,
        ),
        [F32, F32, F32],
    ),  # fmt: skip
    "relu_sigmoid": (
        lambda g, x, d: node(g, ew.Sigmoid(), [node(g, ew.Relu(), [node(g, ew.NEG, x, d)], d)], d),
        [F32],
    ),
    "transcendental": (
        lambda g, x, d: node(
            g,
            ew.ADD,
            [
                node(g, ew.Tanh(), [node(g, ew.Exp(), [x[0]], d)], d),
                node(g, ew.Log(), [node(g, ew.Sqrt(), [node(g, ew.Abs(), [x[1]], d)], d)], d),
            ],
            d,
        ),
        [F32, F32],
    ),
    "recip_rsqrt": (
        lambda g, x, d: node(
            g, ew.MUL, [node(g, ew.Reciprocal(), [x[0]], d), node(g, ew.Rsqrt(), [x[1]], d)], d
        ),
        [F32, F32],
    ),
    "extrema": (
        lambda g, x, d: node(
            g, ew.Maximum(), [node(g, ew.Minimum(), x[:2], d), node(g, ew.NEG, [x[2]], d)], d
        ),
        [F32, F32, F32],
    ),
    "clamp_pow": (
        lambda g, x, d: node(
            g,
            ew.ADD,
            [
                node(g, ew.PowScalar(2), [node(g, ew.Clamp(lo=-1.5, hi=2.0), [x[0]], d)], d),
                node(g, ew.PowScalar(3), [node(g, ew.Clamp(lo=float("-inf")), [x[1]], d)], d),
            ],
            d,
        ),
        [F32, F32],
    ),
    "where_cast_relugrad": (
        lambda g, x, d: node(
            g,
            ew.Where(),
            [
                x[0],
                node(g, ew.ReluGrad(), [x[1], x[2]], d),
                node(g, ew.Cast(dtypes.float64), [x[3]], d),
            ],
            d,
        ),  # fmt: skip
        [B, F64, F64, B],
    ),
}


def _inputs(in_dtypes, rng):
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0])
    out = []
    for d in in_dtypes:
        if d == B:
            out.append(rng.random(SHAPE) < 0.5)
            continue
        x = rng.standard_normal(SHAPE) * 3
        x[: len(special)] = rng.permutation(special)
        out.append(x.astype(d))
    return out


def _host_library(tmp_path, kernels):
    """Compile each kernel's operation into ``void name(ptrs..., out, n)`` with g++. 16-bit
    values travel as their uint16 bits, converted by every 16-bit kind's functions (the
    kernels' preambles, ``cuda_preamble``), with the fake CuPy's C++ stand-ins for the CUDA
    intrinsics and PTX conversions they use."""
    from tests._fakecupy._kernels import _DEVICE_PRELUDE, _ptx

    lines = [
        "#include <cmath>",
        "#include <cstring>",
        "typedef _Float16 float16;",
        "using std::exp; using std::log; using std::sqrt; using std::tanh; using std::fabs;",
        "using std::pow;",
        _DEVICE_PRELUDE,
        _ptx(cuda_preamble(["float16"], "bfloat16")),
    ]
    for name, (ins, outs, op) in kernels.items():
        params = [p.split() for p in ins.split(", ")]
        ctype = {
            "float32": "float",
            "float64": "double",
            "bool": "bool",
            "uint16": "unsigned short",
        }
        args = ", ".join(f"const {ctype[t]}* p{n}" for t, n in params)
        otype = ctype[outs.split()[0]]
        loads = " ".join(f"const {ctype[t]} {n} = p{n}[i];" for t, n in params)
        lines.append(
            f'extern "C" void {name}({args}, {otype}* pout, long n) {{\n'
            f"  for (long i = 0; i < n; ++i) {{ {loads} {otype} out;\n{op}\n pout[i] = out; }}\n}}"
        )
    src = tmp_path / "k.cpp"
    src.write_text("\n".join(lines))
    lib = tmp_path / "k.so"
    subprocess.run(
        ["g++", "-O1", "-ffp-contract=off", "-shared", "-fPIC", str(src), "-o", str(lib)],
        check=True,
        capture_output=True,
    )
    return ctypes.CDLL(str(lib))


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_generated_cuda_c_matches_the_numpy_path(tmp_path):
    rng = np.random.default_rng(0)
    ops, kernels = {}, {}
    for name, (build, in_dtypes) in PROGRAMS.items():
        dtype = F64 if name == "where_cast_relugrad" else F32
        op, in_dtypes = _fused(build, in_dtypes, dtype)
        ops[name] = (op, in_dtypes)
        kernels[name] = cuda_source(op.program, [d.name for d in in_dtypes], op.dtype)
    lib = _host_library(tmp_path, kernels)
    for name, (op, in_dtypes) in ops.items():
        xs = _inputs(in_dtypes, rng)
        with np.errstate(all="ignore"):
            want = op._run_numpy(xs)
        got = np.empty(SHAPE, op.dtype)
        fn = getattr(lib, name)
        ptrs = [ctypes.c_void_p(a.ctypes.data) for a in xs + [got]]
        fn(*ptrs, ctypes.c_long(got.size))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=0, equal_nan=True, err_msg=name)
        if name != "extrema":  # max(0.0, -0.0): either zero (NumPy's own loops differ too)
            assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0])), name


def test_source_text():
    op, _ = _fused(*PROGRAMS["clamp_pow"])
    ins, outs, src = cuda_source(op.program, ["float32", "float32"], "float32")
    assert ins == "float32 x0, float32 x1" and outs == "float32 out"
    assert "__longlong_as_double((long long)0xfff0000000000000ULL)" in src  # lo=-inf
    assert "pow(" in src and src.endswith(f"out = t{len(op.program) - 1};")
    wc, dts = _fused(*PROGRAMS["where_cast_relugrad"], dtype=F64)
    assert [d.name for d in dts] == ["float64", "float64", "bool", "bool"]  # order of first use
    ins, outs, src = cuda_source(wc.program, [d.name for d in dts], "float64")
    assert ins == "float64 x0, float64 x1, bool x2, bool x3" and outs == "float64 out"
    assert "(double)x2;" in src and "x3 ? " in src


@pytest.mark.gpu
@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gpu_kernel_matches_numpy(name):
    import cupy as cp

    build, in_dtypes = PROGRAMS[name]
    dtype = F64 if name == "where_cast_relugrad" else F32
    op, in_dtypes = _fused(build, in_dtypes, dtype)
    xs = _inputs(in_dtypes, np.random.default_rng(1))
    with np.errstate(all="ignore"):
        want = op._run_numpy(xs)
    got = cp.asnumpy(op.forward(cp, *[cp.asarray(x) for x in xs]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
