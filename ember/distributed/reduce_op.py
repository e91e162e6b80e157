"""``ReduceOp``: how a reducing collective combines the ranks' values.

>>> from ember.distributed import ReduceOp
>>> ReduceOp.SUM, ReduceOp.AVG.name
(<ReduceOp.SUM: 0>, 'AVG')
"""

from __future__ import annotations

import enum


class ReduceOp(enum.IntEnum):
    """SUM, AVG (the sum divided by the group's size; floating point only), PRODUCT, MIN, MAX.

    >>> from ember.distributed import ReduceOp
    >>> ReduceOp.MAX in (ReduceOp.MIN, ReduceOp.MAX)
    True
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


__all__ = ["ReduceOp"]
