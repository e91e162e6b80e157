"""Mixed precision, as ``torch.amp``: ``autocast`` regions and ``GradScaler``.

``ember.cuda.amp`` and ``ember.cpu.amp`` are PyTorch's older spellings (``autocast`` with the
device type filled in, ``GradScaler`` for that device); see ``docs/amp.md``.

>>> import ember
>>> with ember.amp.autocast("cpu"):
...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
ember.bfloat16
"""

from __future__ import annotations

from .autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from .custom import custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
