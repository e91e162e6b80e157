"""ember.utils: PyTorch's ``torch.utils`` layout (``ember.utils.data`` is ``ember.data``).

>>> from ember.utils.data import DataLoader
>>> import ember
>>> DataLoader is ember.data.DataLoader
True
"""

from . import data

__all__ = ["data"]
