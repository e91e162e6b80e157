"""Row kernels: softmax, log-softmax and layer normalization over the last axis, one CUDA block
per row.

NumPy's softmax is five passes over memory (max, subtract, exp, sum, divide) and layer norm about
seven; each kernel here reads a row two or three times and writes it once (once, with the row
held in the threads' registers as 16-byte pieces, where it fits), with the reductions
in shared memory (a tree over the block's threads, float32 or float64 accumulation; a block has
``block_for(n)`` threads, about 8 values each, up to ``BLOCK``).
Rows must be C-contiguous along the reduced axis: the callers move the axis last and copy when
it is not.

These are the CUDA overrides of ``ember.ops.softmax.Softmax`` / ``LogSoftmax`` / ``SoftmaxGrad``
and ``ember.ops.norm.LayerNormalize`` / ``LayerNormGradInput`` (registered there), and
``row_sum`` serves ``ember.ops.reduce.Sum`` over the last axis of 16-bit arrays: each
computes the same formula as the op's ``forward``, which is the reference the tests compare it
with (``layer_norm_grad`` in the form ``rstd * g + k2 * (x - mean) + k3``). Each returns
``NotImplemented`` where it does not serve the call (no CUDA kernels in ``xp``, an empty array,
a dtype other than float16 / bfloat16 / float32 / float64), and the op's ``forward`` runs.

>>> softmax(np, np.ones((1, 3), np.float32), -1, False)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import address, cached, fused, half_io, raw_view, served, storage_kind

BLOCK = 256  # threads per row at most (a power of two)


def block_for(n: int) -> int:
    """Threads per row for rows of ``n``: about 8 values per thread, 32 to ``BLOCK``. Short
    rows (attention's 512) then run as many small blocks with short reduction trees, instead
    of 256 threads that each hold two values and wait on eight barriers twice.

    >>> block_for(64), block_for(512), block_for(768), block_for(100_000)
    (32, 64, 128, 256)
    """
    b = 32
    while b < BLOCK and b * 8 < n:
        b *= 2
    return b


# Loads and stores of one storage kind, converting to and from the accumulation type ``A``
# (16-bit kinds through the shared ``half_io`` conversions).
_HALF_LD_ST = (
    "typedef unsigned short ST;\n"
    "{io}"
    "__device__ __forceinline__ A ld(ST v) {{ return ember_ld_{kind}(v); }}\n"
    "__device__ __forceinline__ ST st(A v) {{ return ember_st_{kind}(v); }}\n"
)
_IO = {
    "f32": (
        "float",
        "typedef float ST;\n"
        "__device__ __forceinline__ A ld(ST v) { return (A)v; }\n"
        "__device__ __forceinline__ ST st(A v) { return (ST)v; }\n",
    ),
    "f64": (
        "double",
        "typedef double ST;\n"
        "__device__ __forceinline__ A ld(ST v) { return v; }\n"
        "__device__ __forceinline__ ST st(A v) { return v; }\n",
    ),
    **{k: ("float", _HALF_LD_ST.format(io=half_io(k), kind=k)) for k in ("f16", "bf16")},
}

# Block reductions: every thread passes its value and gets the block's result. ``red`` holds
# BLOCK values; the trailing __syncthreads lets the caller reuse ``red`` right away.
_REDUCE = """
__device__ __forceinline__ A block_sum(A v, A* red) {
  int t = threadIdx.x;
  red[t] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  A r = red[0];
  __syncthreads();
  return r;
}

__device__ __forceinline__ A block_max(A v, A* red) {
  int t = threadIdx.x;
  red[t] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    __syncthreads();
  }
  A r = red[0];
  __syncthreads();
  return r;
}
"""

_SOFTMAX = """
extern "C" __global__ void ember_softmax(const ST* x, ST* y, long long n) {
  __shared__ A red[BLOCK];
  const ST* xr = x + (long long)blockIdx.x * n;
  ST* yr = y + (long long)blockIdx.x * n;
  A m = (A)__uint_as_float(0xff800000u);  // -inf
  for (long long j = threadIdx.x; j < n; j += BLOCK) m = fmax(m, ld(xr[j]));
  m = block_max(m, red);
  A s = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += exp(ld(xr[j]) - m);
  s = block_sum(s, red);
#if LOG
  A ls = log(s);
  for (long long j = threadIdx.x; j < n; j += BLOCK) yr[j] = st(ld(xr[j]) - m - ls);
#else
  for (long long j = threadIdx.x; j < n; j += BLOCK) yr[j] = st(exp(ld(xr[j]) - m) / s);
#endif
}
"""

# Softmax's input gradient from the output y: y * (g - sum(g * y)); log-softmax's (LOG) from its
# output: g - exp(y) * sum(g). Two passes over the row: the sum, then the write.
_SOFTMAX_GRAD = """
extern "C" __global__ void ember_softmax_grad(const ST* g, const ST* y, ST* dx, long long n) {
  __shared__ A red[BLOCK];
  const long long row = (long long)blockIdx.x * n;
  A s = 0;
#if LOG
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += ld(g[row + j]);
#else
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += ld(g[row + j]) * ld(y[row + j]);
#endif
  s = block_sum(s, red);
  for (long long j = threadIdx.x; j < n; j += BLOCK) {
#if LOG
    dx[row + j] = st(ld(g[row + j]) - exp(ld(y[row + j])) * s);
#else
    A yv = ld(y[row + j]);
    dx[row + j] = st(yv * (ld(g[row + j]) - s));
#endif
  }
}
"""

# A row held in registers: each thread loads RV pieces of VEC values (16 bytes each, one pass
# over memory, pieces t, t + BLOCK, ...; ``fill`` past the row's end), and stores them back.
_PIECES = """
struct alignas(VEC * sizeof(ST)) ember_piece { ST v[VEC]; };
__device__ __forceinline__ bool held(int r, long long pieces) {
  return threadIdx.x + (long long)r * BLOCK < pieces;
}
__device__ __forceinline__ void load_row(const ST* row, long long pieces, A* v, A fill) {
  const ember_piece* p = (const ember_piece*)row;
#pragma unroll
  for (int r = 0; r < RV; ++r) {
    ember_piece q;
    if (held(r, pieces)) q = p[threadIdx.x + (long long)r * BLOCK];
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[r * VEC + e] = held(r, pieces) ? ld(q.v[e]) : fill;
  }
}
__device__ __forceinline__ void store_row(ST* row, long long pieces, const A* v) {
  ember_piece* p = (ember_piece*)row;
#pragma unroll
  for (int r = 0; r < RV; ++r) {
    if (!held(r, pieces)) continue;
    ember_piece q;
#pragma unroll
    for (int e = 0; e < VEC; ++e) q.v[e] = st(v[r * VEC + e]);
    p[threadIdx.x + (long long)r * BLOCK] = q;
  }
}
"""

# Softmax of a row held in registers (``_PIECES``).
_SOFTMAX_REGISTERS = (
    _PIECES
    + """
extern "C" __global__ void ember_softmax_registers(const ST* x, ST* y, long long n) {
  __shared__ A red[BLOCK];
  const long long pieces = n / VEC;
  const A ninf = (A)__uint_as_float(0xff800000u);
  A v[RV * VEC];
  load_row(x + (long long)blockIdx.x * n, pieces, v, ninf);
  A m = ninf;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) m = fmax(m, v[i]);
  m = block_max(m, red);
  A s = 0;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) {
#if LOG
    v[i] -= m;
    if (held(i / VEC, pieces)) s += exp(v[i]);
#else
    v[i] = exp(v[i] - m);
    if (held(i / VEC, pieces)) s += v[i];
#endif
  }
  s = block_sum(s, red);
#if LOG
  const A ls = log(s);
#endif
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) {
#if LOG
    v[i] -= ls;
#else
    v[i] /= s;
#endif
  }
  store_row(y + (long long)blockIdx.x * n, pieces, v);
}
"""
)

_LAYER_NORM = """
extern "C" __global__ void ember_layer_norm(const ST* x, ST* y, long long n, A eps) {
  __shared__ A red[BLOCK];
  const ST* xr = x + (long long)blockIdx.x * n;
  ST* yr = y + (long long)blockIdx.x * n;
  A s = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += ld(xr[j]);
  A mean = block_sum(s, red) / (A)n;
  A q = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) {
    A c = ld(xr[j]) - mean;
    q += c * c;
  }
  A var = block_sum(q, red) / (A)n;
  A rstd = (A)1 / sqrt(var + eps);
  for (long long j = threadIdx.x; j < n; j += BLOCK) yr[j] = st((ld(xr[j]) - mean) * rstd);
}
"""

# Layer norm of a row held in registers (``_PIECES``): one read, one write.
_LAYER_NORM_REGISTERS = (
    _PIECES
    + """
extern "C" __global__ void ember_layer_norm_registers(const ST* x, ST* y, long long n, A eps) {
  __shared__ A red[BLOCK];
  const long long pieces = n / VEC;
  A v[RV * VEC];
  load_row(x + (long long)blockIdx.x * n, pieces, v, (A)0);
  A s = 0;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) s += v[i];
  const A mean = block_sum(s, red) / (A)n;
  A q = 0;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) {
    v[i] -= mean;
    if (held(i / VEC, pieces)) q += v[i] * v[i];
  }
  const A rstd = (A)1 / sqrt(block_sum(q, red) / (A)n + eps);
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) v[i] *= rstd;
  store_row(y + (long long)blockIdx.x * n, pieces, v);
}
"""
)

# LayerNormGradInput in registers: x and g read once each.
_LAYER_NORM_GRAD_REGISTERS = (
    _PIECES
    + """
extern "C" __global__ void ember_layer_norm_grad_registers(const ST* g, const ST* x, ST* dx,
                                                           long long n, A eps) {
  __shared__ A red[BLOCK];
  const long long pieces = n / VEC;
  A c[RV * VEC], gv[RV * VEC];
  load_row(x + (long long)blockIdx.x * n, pieces, c, (A)0);
  load_row(g + (long long)blockIdx.x * n, pieces, gv, (A)0);
  A s = 0;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) s += c[i];
  const A mean = block_sum(s, red) / (A)n;
  A q = 0, sg = 0, sgc = 0;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) {
    c[i] -= mean;
    if (held(i / VEC, pieces)) {
      q += c[i] * c[i];
      sg += gv[i];
      sgc += gv[i] * c[i];
    }
  }
  const A var = block_sum(q, red) / (A)n;
  sg = block_sum(sg, red);
  sgc = block_sum(sgc, red);
  const A rstd = (A)1 / sqrt(var + eps);
  const A k2 = -rstd * rstd * rstd * sgc / (A)n;
  const A k3 = -rstd * sg / (A)n;
#pragma unroll
  for (int i = 0; i < RV * VEC; ++i) c[i] = rstd * gv[i] + k2 * c[i] + k3;
  store_row(dx + (long long)blockIdx.x * n, pieces, c);
}
"""
)

# LayerNormGradInput: rstd * (g - mean(g) - xhat * mean(g * xhat)) per row, the statistics
# recomputed from x: a pass for the mean, one for the variance and the two sums of g, one to write.
_LAYER_NORM_GRAD = """
extern "C" __global__ void ember_layer_norm_grad(const ST* g, const ST* x, ST* dx, long long n,
                                                 A eps) {
  __shared__ A red[BLOCK];
  const ST* xr = x + (long long)blockIdx.x * n;
  const ST* gr = g + (long long)blockIdx.x * n;
  ST* dr = dx + (long long)blockIdx.x * n;
  A s = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += ld(xr[j]);
  A mean = block_sum(s, red) / (A)n;
  A q = 0, sg = 0, sgc = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) {
    A c = ld(xr[j]) - mean;
    A gv = ld(gr[j]);
    q += c * c;
    sg += gv;
    sgc += gv * c;
  }
  A var = block_sum(q, red) / (A)n;
  sg = block_sum(sg, red);
  sgc = block_sum(sgc, red);
  A rstd = (A)1 / sqrt(var + eps);
  A k2 = -rstd * rstd * rstd * sgc / (A)n;
  A k3 = -rstd * sg / (A)n;
  for (long long j = threadIdx.x; j < n; j += BLOCK)
    dr[j] = st(rstd * ld(gr[j]) + k2 * (ld(xr[j]) - mean) + k3);
}
"""

# Sum over the last axis of 16-bit rows: float accumulation and one rounding, without the float32
# copy of the whole array the NumPy body (and CuPy) would make first.
_ROW_SUM = """
extern "C" __global__ void ember_row_sum(const ST* x, ST* y, long long n) {
  __shared__ A red[BLOCK];
  const ST* xr = x + (long long)blockIdx.x * n;
  A s = 0;
  for (long long j = threadIdx.x; j < n; j += BLOCK) s += ld(xr[j]);
  s = block_sum(s, red);
  if (threadIdx.x == 0) y[blockIdx.x] = st(s);
}
"""

_BODIES = {
    "softmax": (_SOFTMAX, "ember_softmax"),
    "softmax_registers": (_SOFTMAX_REGISTERS, "ember_softmax_registers"),
    "softmax_grad": (_SOFTMAX_GRAD, "ember_softmax_grad"),
    "layer_norm": (_LAYER_NORM, "ember_layer_norm"),
    "layer_norm_registers": (_LAYER_NORM_REGISTERS, "ember_layer_norm_registers"),
    "layer_norm_grad": (_LAYER_NORM_GRAD, "ember_layer_norm_grad"),
    "layer_norm_grad_registers": (_LAYER_NORM_GRAD_REGISTERS, "ember_layer_norm_grad_registers"),
    "row_sum": (_ROW_SUM, "ember_row_sum"),
}


def source(
    kind: str, storage: str, block: int = BLOCK, log: bool = False, vec: int = 1, rv: int = 1
) -> str:
    """The complete CUDA source of a row kernel (``kind``: 'softmax', 'layer_norm' or
    'layer_norm_grad') for a
    storage kind ('f32', 'f64', 'f16', 'bf16').

    >>> "ember_softmax" in source("softmax", "bf16")
    True
    """
    acc, io = _IO[storage]
    body, _ = _BODIES[kind]
    head = f"#define BLOCK {block}\n#define LOG {int(log)}\n#define VEC {vec}\n#define RV {rv}\n"
    return head + f"typedef {acc} A;\n" + io + _REDUCE + body


def kernel(xp, kind: str, dtype, log: bool, block: int, vec: int = 1, rv: int = 1):
    """The compiled RawKernel (cached per kind, dtype, variant, block size and, for a row in
    registers, the values per piece and pieces per thread)."""
    storage = storage_kind(dtype)
    _, name = _BODIES[kind]
    key = ("rows", kind, storage, log, block, vec, rv)
    return cached(key, lambda: xp.RawKernel(source(kind, storage, block, log, vec, rv), name))


REGISTER_PIECES = 4  # 16-byte pieces a thread may hold: rows up to 4 x 16 x BLOCK bytes


def _in_registers(x2, n: int, block: int):
    """``(values a piece, pieces a thread)`` where rows of ``x2`` fit in the threads' registers
    as aligned 16-byte pieces, else None."""
    vec = 16 // x2.itemsize
    if n % vec or address(x2) % 16:
        return None
    rv = -(-(n // vec) // block)
    return (vec, rv) if rv <= REGISTER_PIECES else None


def _variant(xp, kind: str, dtype, block: int, fit, log: bool = False):
    """``kind``'s kernel, or its row-in-registers form where ``fit`` (``_in_registers``) says
    the rows fit."""
    if fit is None:
        return kernel(xp, kind, dtype, log, block)
    return kernel(xp, f"{kind}_registers", dtype, log, block, *fit)


def _rows(xp, x, axes: int):
    """x as a C-contiguous (rows, n) array over its last ``axes`` axes."""
    n = 1
    for s in x.shape[x.ndim - axes :]:
        n *= s
    x = xp.ascontiguousarray(x)
    return x.reshape(-1, n) if x.size else x.reshape(0, n), n


def softmax(xp, x, dim: int, log: bool):
    """Softmax (or log-softmax) of ``x`` along ``dim`` with one fused kernel per row, or
    ``NotImplemented`` (see the module docstring)."""
    if not fused(xp) or x.size == 0 or not served(x.dtype):
        return NotImplemented
    dim %= x.ndim
    last = dim == x.ndim - 1
    xs = x if last else xp.moveaxis(x, dim, -1)
    x2, n = _rows(xp, xs, 1)
    y2 = xp.empty(x2.shape, x2.dtype)
    b = block_for(n)
    k = _variant(xp, "softmax", x.dtype, b, _in_registers(x2, n, b), log)
    k((x2.shape[0],), (b,), (raw_view(xp, x2), raw_view(xp, y2), np.int64(n)))
    y = y2.reshape(xs.shape)
    return y if last else xp.ascontiguousarray(xp.moveaxis(y, -1, dim))


def softmax_grad(xp, g, y, dim: int, log: bool):
    """``SoftmaxGrad``: softmax's (or, with ``log``, log-softmax's) input gradient from its
    output ``y`` along ``dim``, one kernel per row, or ``NotImplemented`` (see the module
    docstring; also where ``g`` and ``y`` differ in dtype or shape)."""
    if not fused(xp) or y.size == 0 or not served(y.dtype):
        return NotImplemented
    if g.dtype != y.dtype or g.shape != y.shape:
        return NotImplemented
    dim %= y.ndim
    last = dim == y.ndim - 1
    gs, ys = (a if last else xp.moveaxis(a, dim, -1) for a in (g, y))
    (g2, n), (y2, _) = _rows(xp, gs, 1), _rows(xp, ys, 1)
    dx2 = xp.empty(y2.shape, y2.dtype)
    b = block_for(n)
    k = kernel(xp, "softmax_grad", y.dtype, log, b)
    k((y2.shape[0],), (b,), (raw_view(xp, g2), raw_view(xp, y2), raw_view(xp, dx2), np.int64(n)))
    dx = dx2.reshape(ys.shape)
    return dx if last else xp.ascontiguousarray(xp.moveaxis(dx, -1, dim))


def layer_norm(xp, x, axes: int, eps: float):
    """``(x - mean) / sqrt(var + eps)`` over the last ``axes`` axes, one kernel per row, or
    ``NotImplemented`` (see the module docstring)."""
    if not fused(xp) or x.size == 0 or not served(x.dtype):
        return NotImplemented
    x2, n = _rows(xp, x, axes)
    y2 = xp.empty(x2.shape, x2.dtype)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    b = block_for(n)
    k = _variant(xp, "layer_norm", x.dtype, b, _in_registers(x2, n, b))
    k((x2.shape[0],), (b,), (raw_view(xp, x2), raw_view(xp, y2), np.int64(n), acc(eps)))
    return y2.reshape(x.shape)


def layer_norm_grad(xp, g, x, axes: int, eps: float):
    """``LayerNormGradInput``: ``rstd * (g - mean(g) - xhat * mean(g * xhat))`` over the last
    ``axes`` axes, one kernel per row, or ``NotImplemented`` (see the module docstring; also
    where ``g`` and ``x`` differ in dtype)."""
    if not fused(xp) or x.size == 0 or not served(x.dtype) or g.dtype != x.dtype:
        return NotImplemented
    x2, n = _rows(xp, x, axes)
    g2, _ = _rows(xp, g, axes)
    dx2 = xp.empty(x2.shape, x2.dtype)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    b = block_for(n)
    fit = _in_registers(x2, n, b)
    k = _variant(xp, "layer_norm_grad", x.dtype, b, fit if address(g2) % 16 == 0 else None)
    args = (raw_view(xp, g2), raw_view(xp, x2), raw_view(xp, dx2), np.int64(n), acc(eps))
    k((x2.shape[0],), (b,), args)
    return dx2.reshape(x.shape)


def row_sum(xp, x, keepdim: bool):
    """``Sum`` over the last axis of a float16 / bfloat16 array, one block per row, or
    ``NotImplemented`` (other dtypes: CuPy's own reduction reads them once already)."""
    if not fused(xp) or x.size == 0 or x.ndim == 0 or not served(x.dtype) or x.itemsize != 2:
        return NotImplemented
    x2, n = _rows(xp, x, 1)
    y = xp.empty(x2.shape[0], x.dtype)
    b = block_for(n)
    k = kernel(xp, "row_sum", x.dtype, False, b)
    k((x2.shape[0],), (b,), (raw_view(xp, x2), raw_view(xp, y), np.int64(n)))
    return y.reshape(x.shape[:-1] + ((1,) if keepdim else ()))


__all__ = [
    "softmax",
    "softmax_grad",
    "layer_norm",
    "layer_norm_grad",
    "row_sum",
    "source",
    "block_for",
    "BLOCK",
]
