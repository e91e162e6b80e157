"""``ember.distributed.algorithms``: ``Join`` for uneven inputs (PyTorch's
``torch.distributed.algorithms``).

>>> from ember.distributed.algorithms import Join, Joinable, JoinHook
>>> Join.__name__
'Join'
"""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
