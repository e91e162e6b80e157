"""``CheckRange`` on a GPU as one kernel: whether any element of an int64 tensor lies outside
``[low, high)`` (elements equal to ``ignore`` excepted), written to a 0-d boolean flag.

The op's body makes five or six CuPy launches for it (two comparisons, an or, the ignore mask,
``any``), and ``cross_entropy`` runs it on its targets every step. One block reads every value
(a loop of ``BLOCK`` threads: targets are a small part of a step's work) and ors the answers
in shared memory, so the flag needs no zero-filling first.

>>> check_range(np, np.zeros(2, np.int64), 0, 3, None)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import cached, fused

BLOCK = 256

_SOURCE = """
extern "C" __global__ void ember_check_range(const long long* t, bool* flag, long long n,
                                             long long low, long long high, long long ignore,
                                             int has_ignore) {
  __shared__ int seen[BLOCK];
  int bad = 0;
  for (long long i = threadIdx.x; i < n; i += BLOCK) {
    long long v = t[i];
    if ((v < low || v >= high) && !(has_ignore && v == ignore)) bad = 1;
  }
  seen[threadIdx.x] = bad;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) seen[threadIdx.x] |= seen[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) flag[0] = seen[0] != 0;
}
"""


def check_range(xp, t, low: int, high: int, ignore: int | None):
    """A 0-d boolean device array, true where some element of C-contiguous int64 ``t`` is out
    of ``[low, high)`` and not ``ignore``; NotImplemented elsewhere (the op's body runs)."""
    if not fused(xp) or t.dtype != np.int64 or t.size == 0 or not t.flags.c_contiguous:
        return NotImplemented
    k = cached(
        ("range_check", BLOCK),
        lambda: xp.RawKernel(_SOURCE.replace("BLOCK", str(BLOCK)), "ember_check_range"),
    )
    flag = xp.empty((), dtype=xp.bool_)
    i64 = np.int64
    hold = ignore is not None
    args = (t, flag, i64(t.size), i64(low), i64(high), i64(ignore if hold else 0), np.int32(hold))
    k((1,), (BLOCK,), args)
    return flag


__all__ = ["check_range"]
