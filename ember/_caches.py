"""ember's in-memory caches, and ``clear_caches()``, which empties every one of them.

ember keeps a few things it built once so it does not build them again: compiled GPU kernels
(CuPy ``ElementwiseKernel`` / ``RawKernel`` objects, fused elementwise programs, optimizer
updates, the capturable updates of CUDA graphs), numba kernels of compiled CPU steps, cuDNN
execution plans and handles, read-only scalar constants, indexing ops, and the calling thread's
scratch buffers for convolutions. Each module that owns such a cache registers how to empty it
here, at the bottom layer (this module imports nothing of ember), so ``clear_caches`` reaches
them all without importing upward. A cache is rebuilt on its next use; what is on disk (numba's
cache under ``EMBER_CACHE_DIR``, CuPy's kernel cache) and the GPU memory pool's unused blocks
(``ember.cuda.empty_cache()``) are not touched.

>>> import ember
>>> x = ember.ones(3)
>>> _ = x * 2.5  # caches the scalar constant 2.5
>>> ember.clear_caches()
>>> all(n == 0 for n in sizes().values() if n is not None)
True
"""

from __future__ import annotations

from collections.abc import Callable

_REGISTRY: dict[str, tuple[Callable[[], object], Callable[[], int] | None]] = {}


def register(name: str, clear: Callable[[], object], size: Callable[[], int] | None = None):
    """Have ``clear_caches`` call ``clear`` to empty the cache called ``name`` (``size``, when
    given, counts its entries). Registering a name again replaces the earlier entry.

    >>> demo = {"key": "value"}
    >>> register("demo", demo.clear, demo.__len__)
    >>> sizes()["demo"]
    1
    >>> clear_caches()
    >>> demo, sizes()["demo"]
    ({}, 0)
    >>> unregister("demo")
    """
    _REGISTRY[name] = (clear, size)


def unregister(name: str) -> None:
    """Forget the cache called ``name`` (nothing happens when there is none).

    >>> unregister("no such cache")
    """
    _REGISTRY.pop(name, None)


def sizes() -> dict[str, int | None]:
    """Entries in each registered cache (None where the cache cannot count them).

    >>> isinstance(sizes(), dict)
    True
    """
    return {name: (size() if size is not None else None) for name, (_, size) in _REGISTRY.items()}


def clear_caches() -> None:
    """Empty every cache ember keeps in memory: compiled CUDA kernels (row kernels, fused
    elementwise programs, optimizer updates, CUDA-graph updates), numba kernels of compiled CPU
    steps, cuDNN plans and handles, cached scalar constants and indexing ops, and the calling
    thread's convolution scratch buffers. Everything keeps working: each cache is rebuilt on
    its next use (kernels recompile, from the on-disk caches where there are some). Tensors,
    parameters, random generators, ``ember.compile``'d functions and the GPU memory pool are
    left alone (``ember.cuda.empty_cache()`` returns the pool's unused blocks). PyTorch has no
    single equivalent.

    >>> import ember
    >>> ember.clear_caches()
    >>> float((ember.ones(2) * 2.5).sum())
    5.0
    """
    for clear, _ in list(_REGISTRY.values()):
        clear()


__all__ = ["clear_caches", "register", "unregister", "sizes"]
