"""(being written) transformer layers.

>>> import ember
"""

from __future__ import annotations

__all__: list[str] = []
