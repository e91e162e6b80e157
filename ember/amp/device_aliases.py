"""``ember.cuda.amp`` and ``ember.cpu.amp``: PyTorch's per-device spellings of ``ember.amp``,
and ``ember.cpu`` (the few ``torch.cpu`` functions scripts call).

>>> import ember
>>> with ember.cpu.amp.autocast():
...     ember.get_autocast_dtype("cpu"), ember.is_autocast_enabled("cpu")
(ember.bfloat16, True)
>>> ember.cuda.amp.GradScaler is not None, ember.cpu.is_available()
(True, True)
"""

from __future__ import annotations

import functools
import sys
import types

from .. import dtypes as _dt
from .autocast_mode import autocast
from .custom import custom_bwd, custom_fwd
from .grad_scaler import GradScaler


def _device_amp(name: str, device_type: str, default: _dt.DType) -> types.ModuleType:
    module = types.ModuleType(name, f"PyTorch's ``torch.{device_type}.amp`` spellings.")

    class _Autocast(autocast):
        __doc__ = f"``ember.autocast({device_type!r}, ...)``."

        def __init__(self, enabled: bool = True, dtype=default, cache_enabled: bool = True):
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    _Autocast.__name__ = _Autocast.__qualname__ = "autocast"

    class _GradScaler(GradScaler):
        __doc__ = f"``ember.amp.GradScaler({device_type!r}, ...)``."

        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):  # fmt: skip
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)  # fmt: skip

    _GradScaler.__name__ = _GradScaler.__qualname__ = "GradScaler"
    module.autocast = _Autocast
    module.GradScaler = _GradScaler
    module.custom_fwd = functools.partial(custom_fwd, device_type=device_type)
    module.custom_bwd = functools.partial(custom_bwd, device_type=device_type)
    module.__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
    return module


def is_available() -> bool:
    """The CPU is always there.

    >>> import ember
    >>> ember.cpu.is_available()
    True
    """
    return True


def device_count() -> int:
    """One CPU device.

    >>> import ember
    >>> ember.cpu.device_count()
    1
    """
    return 1


def current_device() -> str:
    """``'cpu'``.

    >>> import ember
    >>> ember.cpu.current_device()
    'cpu'
    """
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for on the CPU.

    >>> import ember
    >>> ember.cpu.synchronize()
    """


def register():
    """Make ``ember.cpu``, ``ember.cpu.amp`` and ``ember.cuda.amp`` (called once by ember)."""
    from ..backend import cuda

    cpu = types.ModuleType("ember.cpu", "PyTorch's ``torch.cpu``: the CPU device and ``amp``.")
    for fn in (is_available, device_count, current_device, synchronize):
        setattr(cpu, fn.__name__, fn)
    cpu.amp = _device_amp("ember.cpu.amp", "cpu", _dt.bfloat16)
    cuda_amp = _device_amp("ember.cuda.amp", "cuda", _dt.float16)
    cuda.amp = cuda_amp
    sys.modules.update({"ember.cpu": cpu, "ember.cpu.amp": cpu.amp, "ember.cuda.amp": cuda_amp})
    return cpu


__all__ = ["register"]
