"""Batch normalization on the GPU: each of the four ops is one CUDA kernel, reading every input
once.

``ember.ops.norm`` defines the ops and their NumPy bodies; these are their CUDA overrides
(registered there). ``stats`` is the (2, C) [mean, biased variance] array of ``BatchMoments``,
``sums`` the (2, C) [sum g, sum g * xhat] of ``BatchNormSums``, both in the accumulation type
(float32 for float16 / bfloat16 / float32 storage, float64 for float64).

- ``moments(x)``: Welford's mean and sum of squared deviations per thread, merged with Chan's
  formula within a block and then, in the same launch, across the ``P`` blocks of a channel by
  the channel's last block to finish (``counters.py``), in a fixed order: deterministic.
- ``sums(g, x, stats)``: the two per-channel sums the same way (plain sums).
- ``normalize(x, stats, w, b)``: ``y = x * scale + shift`` with ``scale = rstd * w``,
  ``shift = b - mean * scale`` computed per element from ``stats`` (no launches for the C
  coefficients).
- ``grad_input(g, x, stats, sums, w)``: ``k1 * g + k2 * (x - mean) + k3``, the coefficients
  likewise per element.
- ``affine(x, w, b)``: ``x * w + b`` per channel of an (A, C, L) view, computed in the
  accumulation type and rounded once (the ``Affine`` op: layer / group norm's parameters).
- ``running_average(running, stats, row, momentum, factor)``: a running statistic's update in
  one elementwise kernel (the ``RunningAverage`` op; float32 / float64 buffers), instead of
  five CuPy launches.

Elements of channel ``c`` in an (N, C, L) array: row ``r`` of N, position ``l`` of L at
``(r * C + c) * L + l``; the elementwise kernels find ``c = (i / L) % C``. Indices are 32-bit
unsigned where the array has fewer than 2**31 elements (64-bit division costs about ten times
as much), else 64-bit. No cuBLAS call and no host transfer, so a captured step (CUDA graph)
records them.

Each function returns ``NotImplemented`` where it does not serve (no kernels in ``xp``, an
empty array, fewer than 2 dims, a dtype other than the four floating-point ones), and the op's
``forward`` runs.

>>> normalize(np, np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), None, None, 1e-5)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import acc_dtype, cached, fused, grid, raw_view, served, storage_kind
from .counters import LAST_BLOCK, counters
from .optim import specialize
from .rows import _IO
from .vectorized import Vectorized

BLOCK = 256  # threads per block (a power of two); grid-stride loops cover any size
TARGET_BLOCKS = 1024  # reduction blocks to aim for: about 8 per multiprocessor on an H100

_MERGE = """
// Chan et al.: (n, mean, m2) of two disjoint sets combined into the first
__device__ __forceinline__ void merge(A& n, A& m, A& q, A nb, A mb, A qb) {
  if (nb == (A)0) return;
  A t = n + nb;
  A d = mb - m;
  A f = nb / t;
  m += d * f;
  q += qb + d * d * n * f;
  n = t;
}

// every thread's (n, mean, m2) merged into (sn[0], sm[0], sq[0]) by a tree over the block
__device__ __forceinline__ void block_merge(A* sn, A* sm, A* sq, A n, A m, A q) {
  int t = threadIdx.x;
  sn[t] = n; sm[t] = m; sq[t] = q;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) merge(sn[t], sm[t], sq[t], sn[t + s], sm[t + s], sq[t + s]);
    __syncthreads();
  }
}
"""

# The elements of channel c that reduction block blockIdx.x reads: [start, end) of the channel's
# rows * inner values (gridDim.x = nc * blocks per channel), and where value j of it lives.
_CHUNK = """
__device__ __forceinline__ void chunk(I rows, I inner, I nc, I per, I& c, I& start, I& end) {
  I total = rows * inner;
  I nblocks = gridDim.x / nc;
  c = blockIdx.x / nblocks;
  start = (blockIdx.x - c * nblocks) * per;
  end = start + per < total ? start + per : total;
}

__device__ __forceinline__ I at(I j, I inner, I nc, I c) {
  I r = j / inner;
  return (r * nc + c) * inner + (j - r * inner);
}
"""

_MOMENTS = """
extern "C" __global__ void ember_bn_moments(const ST* x, A* part, A* stats, unsigned int* count,
                                            long long rows_, long long inner_, long long nc_,
                                            long long per_) {
  __shared__ A sn[BLOCK];
  __shared__ A sm[BLOCK];
  __shared__ A sq[BLOCK];
  I inner = (I)inner_, nc = (I)nc_, c, start, end;
  chunk((I)rows_, inner, nc, (I)per_, c, start, end);
  A n = 0, mean = 0, q = 0;
  for (I j = start + threadIdx.x; j < end; j += BLOCK) {
    A v = ld(x[at(j, inner, nc, c)]);
    n += (A)1;
    A d = v - mean;
    mean += d / n;
    q += d * (v - mean);
  }
  int t = threadIdx.x;
  block_merge(sn, sm, sq, n, mean, q);
  I nblocks = gridDim.x / nc;
  if (t == 0) {
    A* o = part + (long long)blockIdx.x * 3;
    o[0] = sn[0]; o[1] = sm[0]; o[2] = sq[0];
  }
  if (!last_block(count + c, (unsigned int)nblocks)) return;
  // the channel's last block: its partials merged in a fixed order (thread t: p = t, t + BLOCK..)
  volatile const A* ps = part + (long long)c * nblocks * 3;
  n = 0; mean = 0; q = 0;
  for (I p = t; p < nblocks; p += BLOCK) merge(n, mean, q, ps[p * 3], ps[p * 3 + 1], ps[p * 3 + 2]);
  block_merge(sn, sm, sq, n, mean, q);
  if (t == 0) {
    stats[c] = sm[0];
    stats[nc + c] = sq[0] / sn[0];
  }
}
"""

_SUMS = """
__device__ __forceinline__ void block_sums(A* s0, A* s1, A a, A b) {
  int t = threadIdx.x;
  s0[t] = a; s1[t] = b;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) { s0[t] += s0[t + s]; s1[t] += s1[t + s]; }
    __syncthreads();
  }
}

extern "C" __global__ void ember_bn_sums(const ST* g, const ST* x, const A* stats, A* part,
                                         A* sums, unsigned int* count, A eps, long long rows_,
                                         long long inner_, long long nc_, long long per_) {
  __shared__ A s0[BLOCK];
  __shared__ A s1[BLOCK];
  I inner = (I)inner_, nc = (I)nc_, c, start, end;
  chunk((I)rows_, inner, nc, (I)per_, c, start, end);
  A mean = stats[c];
  A a = 0, b = 0;
  for (I j = start + threadIdx.x; j < end; j += BLOCK) {
    I i = at(j, inner, nc, c);
    A gv = ld(g[i]);
    a += gv;
    b += gv * (ld(x[i]) - mean);
  }
  int t = threadIdx.x;
  block_sums(s0, s1, a, b);
  I nblocks = gridDim.x / nc;
  if (t == 0) {
    part[(long long)blockIdx.x * 2] = s0[0];
    part[(long long)blockIdx.x * 2 + 1] = s1[0];
  }
  if (!last_block(count + c, (unsigned int)nblocks)) return;
  volatile const A* ps = part + (long long)c * nblocks * 2;
  a = 0; b = 0;
  for (I p = t; p < nblocks; p += BLOCK) { a += ps[p * 2]; b += ps[p * 2 + 1]; }
  block_sums(s0, s1, a, b);
  if (t == 0) {
    sums[c] = s0[0];
    sums[nc + c] = s1[0] * ((A)1 / sqrt(stats[nc + c] + eps));
  }
}
"""

_NORMALIZE = """
extern "C" __global__ void ember_bn_normalize(const ST* x, ST* y, const A* stats, const WT* w,
                                              const WT* b, A eps, long long n_, long long inner_,
                                              long long nc_, long long flags) {
  I n = (I)n_, inner = (I)inner_, nc = (I)nc_;
  I step = (I)blockDim.x * gridDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    I c = (i / inner) % nc;
    A scale = (A)1 / sqrt(stats[nc + c] + eps);
    if (flags & 1) scale = scale * ldw(w[c]);
    A shift = -stats[c] * scale;
    if (flags & 2) shift = shift + ldw(b[c]);
    y[i] = st(ld(x[i]) * scale + shift);
  }
}
"""

_GRAD_INPUT = """
extern "C" __global__ void ember_bn_grad_input(const ST* g, const ST* x, ST* dx, const A* stats,
                                               const A* sums, const WT* w, A eps, A m,
                                               long long n_, long long inner_, long long nc_,
                                               long long flags) {
  I n = (I)n_, inner = (I)inner_, nc = (I)nc_;
  I step = (I)blockDim.x * gridDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    I c = (i / inner) % nc;
    A r = (A)1 / sqrt(stats[nc + c] + eps);
    A k1 = (flags & 1) ? r * ldw(w[c]) : r;
    A k2 = -k1 * r * sums[nc + c] / m;
    A k3 = -k1 * sums[c] / m;
    dx[i] = st(k1 * ld(g[i]) + k2 * (ld(x[i]) - stats[c]) + k3);
  }
}
"""

_AFFINE = """
extern "C" __global__ void ember_affine(const ST* x, ST* y, const ST* w, const ST* b,
                                        long long n_, long long inner_, long long nc_,
                                        long long flags) {
  I n = (I)n_, inner = (I)inner_, nc = (I)nc_;
  I step = (I)blockDim.x * gridDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    I c = (i / inner) % nc;
    A v = ld(x[i]);
    if (flags & 1) v = v * ld(w[c]);
    if (flags & 2) v = v + ld(b[c]);
    y[i] = st(v);
  }
}
"""

_BODIES = {
    "moments": (_CHUNK + LAST_BLOCK + _MERGE + _MOMENTS, ("ember_bn_moments",)),
    "sums": (_CHUNK + LAST_BLOCK + _SUMS, ("ember_bn_sums",)),
    "normalize": (_NORMALIZE, ("ember_bn_normalize",)),
    "grad_input": (_GRAD_INPUT, ("ember_bn_grad_input",)),
    "affine": (_AFFINE, ("ember_affine",)),
}


# How the normalization kernels read the weight and bias: in the accumulation type (``A``) or
# in the input's storage type (``ST``: a model cast to float16 / bfloat16), each converted in
# the kernel, so that neither needs a cast launched first.
_WEIGHTS = {
    "acc": "typedef A WT;\n__device__ __forceinline__ A ldw(WT v) { return v; }\n",
    "storage": "typedef ST WT;\n__device__ __forceinline__ A ldw(WT v) { return ld(v); }\n",
}


def source(kind: str, storage: str, wide: bool = False, weights: str = "acc") -> str:
    """The CUDA source of ``kind`` ('moments', 'sums', 'normalize' or 'grad_input') for a
    storage kind, with 64-bit indices where ``wide``, reading weight and bias in the
    accumulation type or the storage type (``weights``: 'acc' or 'storage').

    >>> "ember_bn_normalize" in source("normalize", "f16")
    True
    """
    acc, io = _IO[storage]
    index = "long long" if wide else "unsigned int"
    head = f"#define BLOCK {BLOCK}\ntypedef {acc} A;\ntypedef {index} I;\n"
    return head + io + _WEIGHTS[weights] + _BODIES[kind][0]


def _kernels(xp, kind: str, x, weights: str = "acc") -> list:
    storage, wide = storage_kind(x.dtype), x.size >= 2**31

    def build():
        code = source(kind, storage, wide, weights)
        return [xp.RawKernel(code, name) for name in _BODIES[kind][1]]

    return cached(("batchnorm", kind, storage, wide, weights), build)


def _weights(xp, x, stats, *params) -> tuple:
    """``(how the kernel reads them, the params as it reads them)``: as they are where all are
    in the accumulation type or all in ``x``'s 16-bit type, else cast to the accumulation type;
    an absent param is ``stats`` (the kernel's flags say it is not read)."""
    acc = stats.dtype
    present = [p for p in params if p is not None]
    if all(p.dtype == acc for p in present):
        weights = "acc"
    elif x.itemsize == 2 and all(p.dtype == x.dtype for p in present):
        weights = "storage"
    else:
        weights, present = "acc", None
    out = []
    for p in params:
        if p is None:
            out.append(stats)
        elif present is None:
            out.append(_coefficient(xp, p, acc))
        else:
            out.append(raw_view(xp, xp.ascontiguousarray(p)))
    return weights, out


def _serves(xp, x) -> bool:
    return fused(xp) and x.size > 0 and x.ndim >= 2 and served(x.dtype)


def _layout(x) -> tuple:
    """``(N, C, L)`` of ``x``: L the product of the sizes after dim 1."""
    inner = 1
    for s in x.shape[2:]:
        inner *= s
    return x.shape[0], x.shape[1], inner


def _split(rows: int, nc: int, inner: int) -> tuple:
    """``(blocks per channel, elements per block)`` for a reduction."""
    total = rows * inner
    per_channel = max(1, min(-(-TARGET_BLOCKS // nc), -(-total // (BLOCK * 8))))
    return per_channel, -(-total // per_channel)


def _coefficient(xp, a, acc):
    return xp.ascontiguousarray(a, dtype=acc)


def moments(xp, x):
    """``BatchMoments``: the (2, C) [mean, biased variance] of ``x`` (N, C, *)."""
    if not _serves(xp, x):
        return NotImplemented
    x = xp.ascontiguousarray(x)
    rows, nc, inner = _layout(x)
    acc = acc_dtype(x.dtype)
    nblocks, per = _split(rows, nc, inner)
    part = xp.empty((nc * nblocks, 3), acc)
    stats = xp.empty((2, nc), acc)
    (k,) = _kernels(xp, "moments", x)
    i64 = np.int64
    args = (raw_view(xp, x), part, stats, counters(xp, x, nc), i64(rows), i64(inner), i64(nc))
    k((nc * nblocks,), (BLOCK,), args + (i64(per),))
    return stats


def sums(xp, g, x, stats, eps: float):
    """``BatchNormSums``: the (2, C) [sum g, sum g * (x - mean) * rstd] per channel."""
    if not _serves(xp, x) or g.dtype != x.dtype:
        return NotImplemented
    g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
    rows, nc, inner = _layout(x)
    acc = acc_dtype(x.dtype)
    stats = _coefficient(xp, stats, acc)
    nblocks, per = _split(rows, nc, inner)
    part = xp.empty((nc * nblocks, 2), acc)
    out = xp.empty((2, nc), acc)
    (k,) = _kernels(xp, "sums", x)
    i64 = np.int64
    args = (raw_view(xp, g), raw_view(xp, x), stats, part, out, counters(xp, x, nc), acc.type(eps))
    k((nc * nblocks,), (BLOCK,), args + (i64(rows), i64(inner), i64(nc), i64(per)))
    return out


def normalize(xp, x, stats, w, b, eps: float):
    """``BatchNormalize``: ``(x - mean) * rstd * w + b`` per channel, ``w`` / ``b`` optional."""
    if not _serves(xp, x):
        return NotImplemented
    x = xp.ascontiguousarray(x)
    _, nc, inner = _layout(x)
    acc = acc_dtype(x.dtype)
    stats = _coefficient(xp, stats, acc)
    weights, (w2, b2) = _weights(xp, x, stats, w, b)
    flags = (w is not None) + 2 * (b is not None)
    y = xp.empty(x.shape, x.dtype)
    (k,) = _kernels(xp, "normalize", x, weights)
    i64 = np.int64
    args = (raw_view(xp, x), raw_view(xp, y), stats, w2, b2, acc.type(eps))
    k((grid(x.size, BLOCK),), (BLOCK,), args + (i64(x.size), i64(inner), i64(nc), i64(flags)))
    return y


def affine(xp, x, w, b, a: int, c: int, ell: int):
    """``Affine``: ``x * w + b`` with ``w`` / ``b`` (C values, optional, ``x``'s dtype) per
    channel of ``x`` viewed as (A, C, L); NotImplemented where it does not serve."""
    params = [p for p in (w, b) if p is not None]
    if not fused(xp) or x.size == 0 or not served(x.dtype):
        return NotImplemented
    if any(p.dtype != x.dtype for p in params):
        return NotImplemented
    x = xp.ascontiguousarray(x)
    w2, b2 = (x if p is None else xp.ascontiguousarray(p) for p in (w, b))
    y = xp.empty(x.shape, x.dtype)
    if ell == 1:
        present = [a for a, p in ((x, x), (w2, w), (b2, b)) if p is not None]
        if _affine_last(xp, x, w, b).run(xp, *present, y):
            return y
    (k,) = _kernels(xp, "affine", x)
    i64 = np.int64
    flags = (w is not None) + 2 * (b is not None)
    args = (raw_view(xp, x), raw_view(xp, y), raw_view(xp, w2), raw_view(xp, b2))
    k((grid(x.size, BLOCK),), (BLOCK,), args + (i64(x.size), i64(ell), i64(c), i64(flags)))
    return y


def _affine_last(xp, x, w, b) -> Vectorized:
    """``Affine`` over channels on the last axis (layer norm's, ``L == 1``): the same arithmetic
    as ``ember_affine`` with 16-byte accesses (``vectorized.py``)."""
    storage = storage_kind(x.dtype)

    def build():
        dtype = "uint16" if storage in ("f16", "bf16") else x.dtype.name
        names = ["x"] + ["w"] * (w is not None) + ["b"] * (b is not None)
        op = (
            "A v = ld(x);"
            + " v = v * ld(w);" * (w is not None)
            + " v = v + ld(b);" * (b is not None)
        )
        acc, io = _IO[storage]
        return Vectorized(
            ", ".join(f"{dtype} {n}" for n in names),
            f"{dtype} y",
            op + " y = st(v);",
            "ember_affine_last",
            preamble=f"typedef {acc} A;\n{io}",
        )

    return cached(("batchnorm", "affine_last", storage, w is not None, b is not None), build)


def grad_input(xp, g, x, stats, sums_, w, eps: float):
    """``BatchNormGradInput``: ``k1 * g + k2 * (x - mean) + k3`` with ``k1 = rstd * w``,
    ``k2 = -k1 * rstd * sums[1] / M``, ``k3 = -k1 * sums[0] / M`` (M values per channel)."""
    if not _serves(xp, x) or g.dtype != x.dtype:
        return NotImplemented
    g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
    rows, nc, inner = _layout(x)
    acc = acc_dtype(x.dtype)
    stats, sums_ = _coefficient(xp, stats, acc), _coefficient(xp, sums_, acc)
    weights, (w2,) = _weights(xp, x, stats, w)
    dx = xp.empty(x.shape, x.dtype)
    (k,) = _kernels(xp, "grad_input", x, weights)
    i64 = np.int64
    args = (raw_view(xp, g), raw_view(xp, x), raw_view(xp, dx), stats, sums_, w2)
    args += (acc.type(eps), acc.type(rows * inner), i64(x.size), i64(inner), i64(nc))
    k((grid(x.size, BLOCK),), (BLOCK,), args + (i64(w is not None),))
    return dx


_RUNNING = (
    "T running, T stat, A keep, A factor, A m",
    "T y",
    "A t = stat; if (factor != (A)1) t = t * factor; y = running * keep + t * m;",
)


# a 16-bit buffer (a model cast to bfloat16 / float16) with float32 statistics: the average in
# float32, rounded once (PyTorch's kernel does the same; the op's body rounds three times)
_RUNNING_HALF = (
    "T running, S stat, A keep, A factor, A m",
    "T y",
    "A t = (A)stat; if (factor != (A)1) t = t * factor; y = (T)((A)running * keep + t * m);",
)


def running_average(xp, running, stats, row: int, momentum: float, factor: float, out=None):
    """``RunningAverage``: ``running * (1 - momentum) + stats[row] * factor * momentum`` (into
    ``out``, which may be ``running`` itself, or a new array), for float32 / float64 buffers with
    ``stats`` of the same dtype, and float16 / bfloat16 buffers with float32 ``stats``; else
    NotImplemented."""
    if not fused(xp) or running.size == 0 or not served(running.dtype):
        return NotImplemented
    if stats.dtype == running.dtype and running.itemsize > 2:
        src, name = _RUNNING, "running"
    elif stats.dtype == np.float32 and running.itemsize == 2:
        src, name = _RUNNING_HALF, "running_half"
    else:
        return NotImplemented
    acc = acc_dtype(running.dtype)
    k = cached(  # A: the buffer's own float32 / 64, float32 for 16-bit buffers
        ("batchnorm", name, running.dtype.str),
        lambda: xp.ElementwiseKernel(*specialize(src, acc), f"ember_bn_{name}"),
    )
    t = acc.type
    y = xp.empty(running.shape, running.dtype) if out is None else out
    k(running, stats[row], t(1 - momentum), t(factor), t(momentum), y)
    return y
