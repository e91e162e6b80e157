"""(being written) structure functions.

>>> import ember
"""

from __future__ import annotations

__all__: list[str] = []

TENSOR_METHODS = {name: globals()[name] for name in __all__}
