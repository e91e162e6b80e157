"""(being written) functional loss_extra.

>>> import ember
"""

from __future__ import annotations

__all__: list[str] = []
