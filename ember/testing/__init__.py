"""``ember.testing``: PyTorch's ``torch.testing``: ``assert_close`` (and its deprecated
``assert_allclose``) to check results, ``make_tensor`` to make test inputs.

>>> import ember
>>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
"""

from .comparison import assert_allclose, assert_close
from .creation import make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
