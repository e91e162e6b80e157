"""``ember.utils.data``: the same objects as ``ember.data``, for code written against
``torch.utils.data``.

>>> from ember.utils.data import TensorDataset, DataLoader, default_collate
>>> default_collate([1, 2])
tensor([1, 2])
"""

from ..data import *  # noqa: F403
from ..data import __all__  # noqa: F401
