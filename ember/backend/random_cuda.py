"""Random numbers drawn on the GPU: one CuPy ``RandomState`` (cuRAND) per GPU.

``ember.manual_seed(s)`` calls ``seed_all(s)``: every GPU's generator restarts from ``s``
(created lazily, on first use, so seeding never loads CuPy). ``ember.cuda.manual_seed(s)``
reseeds only the current GPU. CuPy's own global generators (``cupy.random.seed``) are left
alone: ember draws only from these, so other CuPy code cannot shift ember's numbers.

A CuPy ``RandomState`` lives on the GPU that was current when it was made (CuPy's rule), hence
the ``with cp.cuda.Device(i)`` around creation and every draw.
"""

from __future__ import annotations

import numpy as np

_seed: int | None = None  # the seed of the last seed_all (None: fresh entropy)
_seeds: dict[int, int] = {}  # per-GPU seeds set by seed_one
_states: dict[int, object] = {}  # GPU index -> cupy.random.RandomState


def reset() -> None:
    """Forget the generators (a new CuPy module was loaded); seeds are kept."""
    _states.clear()


def seed_all(seed: int) -> None:
    """Restart every GPU's generator from ``seed``."""
    global _seed
    _seed = int(seed) % 2**64
    _seeds.clear()
    _states.clear()


def seed_one(seed: int, index: int) -> None:
    """Restart GPU ``index``'s generator from ``seed``."""
    _seeds[index] = int(seed) % 2**64
    _states.pop(index, None)


def initial_seed(index: int) -> int | None:
    return _seeds.get(index, _seed)


def new_state(cp, index: int, seed: int | None):
    """A fresh CuPy RandomState on GPU ``index``."""
    with cp.cuda.Device(index):
        return cp.random.RandomState(seed)


def state(cp, index: int):
    """GPU ``index``'s default generator (created from the last seed on first use)."""
    st = _states.get(index)
    if st is None:
        st = _states[index] = new_state(cp, index, initial_seed(index))
    return st


def _native(np_dtype) -> np.dtype:
    """cuRAND draws float32 and float64; float16 / bfloat16 are drawn in float32 and cast."""
    np_dtype = np.dtype(np_dtype)
    return np_dtype if np_dtype in (np.float32, np.float64) else np.dtype(np.float32)


def draw(cp, rs, index: int, kind: str, shape: tuple, np_dtype, low=0, high=None):
    """Draw ``kind`` ('uniform' in [0, 1), 'normal', 'integers' in [low, high), 'permutation'
    of ``high``) with RandomState ``rs`` on GPU ``index``, as ``np_dtype``."""
    with cp.cuda.Device(index):
        if kind == "uniform":
            out = rs.random_sample(size=shape, dtype=_native(np_dtype))
        elif kind == "normal":
            out = rs.standard_normal(size=shape, dtype=_native(np_dtype))
        elif kind == "integers":
            out = rs.randint(low, high, size=shape, dtype=np.int64)
        elif kind == "permutation":
            out = rs.permutation(high)
        else:
            raise ValueError(f"unknown kind of random draw {kind!r}")
        return out.astype(np_dtype, copy=False)
