"""(being written) resampling layers.

>>> import ember
"""

from __future__ import annotations

__all__: list[str] = []
