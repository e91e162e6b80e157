"""Zeroed ``unsigned int`` counters for reductions finished in the launch that starts them.

A reduction split over many blocks writes one partial result a block; the last block of a group
to finish (it counts the group's blocks with ``atomicAdd`` after a ``__threadfence``; the last
one fences again before it reads) merges the group's partials in a fixed order, so the result
does not depend on which block was last, and sets its counter back to 0. The counters are
therefore zero between launches and need no memset: one array per (array module, device,
stream), since launches on one stream run in order and launches on two streams never share
one. A CUDA graph records the array's address; its replays run in order too (counters first
made while a stream captures are zeroed by the graph's own memset, ahead of its kernels).

>>> from types import ModuleType, SimpleNamespace as NS
>>> xp = ModuleType("xp")  # the two CuPy calls used, on NumPy
>>> xp.zeros, xp.cuda = np.zeros, NS(get_current_stream=lambda: NS(ptr=0))
>>> c = counters(xp, np.zeros(3), 5)
>>> c.dtype, bool((c == 0).all()), counters(xp, np.zeros(3), 5) is c
(dtype('uint32'), True, True)
"""

from __future__ import annotations

import numpy as np

# The device side, for a kernel's source: every thread of a block calls ``last_block`` once the
# block's partial result is written; it is true in the group's last block to finish, whose
# threads may then read every partial.
LAST_BLOCK = """
__device__ __forceinline__ bool last_block(unsigned int* count, unsigned int blocks) {
  __shared__ bool last;
  __threadfence();  // this block's partial, written before it counts
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(count, 1u) == blocks - 1;
    if (last) *count = 0;  // every other block of the group has counted: zero for the next launch
  }
  __syncthreads();
  if (last) __threadfence();  // the other blocks' partials, read after their counts
  return last;
}
"""

_arrays: dict = {}

MIN_SIZE = 1024  # counters allocated at least (a reduction uses one per channel or row)


def counters(xp, like, n: int):
    """At least ``n`` zeroed counters on ``like``'s device, for the current stream."""
    device = getattr(getattr(like, "device", None), "id", 0)
    key = (xp, device, xp.cuda.get_current_stream().ptr)
    c = _arrays.get(key)
    if c is None or c.size < n:
        c = _arrays[key] = xp.zeros(max(n, MIN_SIZE), np.uint32)
    return c
