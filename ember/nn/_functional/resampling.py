"""(being written) functional resampling.

>>> import ember
"""

from __future__ import annotations

__all__: list[str] = []
