"""``pad`` with PyTorch's argument order (defined in ``ember.functions.padding``, below ``nn``).

>>> import ember
>>> import ember.nn.functional as F
>>> F.pad(ember.ones(1, 2), (1, 1))
tensor([[0., 1., 1., 0.]])
"""

from __future__ import annotations

from ...functions.padding import pad

__all__ = ["pad"]
