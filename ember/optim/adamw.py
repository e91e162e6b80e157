"""``ember.optim.adamw``: PyTorch's ``torch.optim.adamw`` path for ``AdamW`` (defined in
``adam.py``), so code importing from it and ``torch.save`` files naming it find ember's.

>>> import ember
>>> from ember.optim.adamw import AdamW
>>> AdamW is ember.optim.AdamW
True
"""

from .adam import AdamW

__all__ = ["AdamW"]
