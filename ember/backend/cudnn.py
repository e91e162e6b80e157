"""``ember.backends.cudnn`` (``torch.backends.cudnn``): switches of the cuDNN convolution path.

This module is ``ember.backend.cudnn``; ``ember/_aliases.py`` gives it its PyTorch name. The
convolutions that read the switches are ``ember.backend.kernels.conv``.

GPU convolutions go through NVIDIA's cuDNN frontend (the ``nvidia-cudnn-frontend`` package,
module ``cudnn``) when it imports, and through im2col + cuBLAS otherwise. Set these as plain
attributes; they are read at every convolution:

- ``enabled`` (True): use cuDNN when available;
- ``allow_tf32`` (True, as in PyTorch): float32 convolutions may use TF32 tensor cores;
- ``deterministic`` (False): only engines without non-deterministic (atomic) reductions;
- ``benchmark`` (False): accepted for PyTorch code; ember always takes cuDNN's heuristic
  choice (mode A, then the fallback list) and caches the plan per shape.

>>> import ember
>>> ember.backends.cudnn.enabled, ember.backends.cudnn.allow_tf32
(True, True)
>>> isinstance(ember.backends.cudnn.is_available(), bool)
True
"""

from __future__ import annotations

import contextlib

enabled = True
allow_tf32 = True
deterministic = False
benchmark = False
benchmark_limit = 10

_module: list = []  # [the cudnn module or None], once looked up


def _cudnn():
    """The cuDNN frontend module, or None where ``import cudnn`` fails."""
    if not _module:
        try:
            import cudnn
        except Exception:  # not installed, or no matching CUDA / cuDNN libraries
            cudnn = None
        _module.append(cudnn)
    return _module[0]


def is_available() -> bool:
    """Whether the cuDNN frontend (``import cudnn``) loads."""
    return _cudnn() is not None


def version() -> int | None:
    """cuDNN's version number (e.g. 91000), or None without the frontend."""
    mod = _cudnn()
    if mod is None:
        return None
    try:
        return int(mod.backend_version())
    except Exception:
        return None


@contextlib.contextmanager
def flags(enabled=None, benchmark=None, deterministic=None, allow_tf32=None):
    """Set some switches inside a ``with`` block and restore them after it.

    >>> import ember
    >>> with ember.backends.cudnn.flags(enabled=False):
    ...     ember.backends.cudnn.enabled
    False
    """
    mod = globals()
    new = dict(
        enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32
    )
    old = {k: mod[k] for k in new}
    for k, v in new.items():
        if v is not None:
            mod[k] = v
    try:
        yield
    finally:
        mod.update(old)


__all__ = [
    "enabled",
    "allow_tf32",
    "deterministic",
    "benchmark",
    "is_available",
    "version",
    "flags",
]
