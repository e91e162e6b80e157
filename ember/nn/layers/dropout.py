"""Dropout modules: Dropout, Dropout1d/2d/3d (whole channels) and AlphaDropout.

>>> import ember
>>> ember.nn.Dropout(0.5).eval()(ember.ones(3))
tensor([1., 1., 1.])
"""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d
from ..module import Module


class Dropout(Module):
    """Zero elements with probability ``p`` in training; identity in eval.

    >>> import ember
    >>> ember.nn.Dropout(0.5).eval()(ember.ones(2))
    tensor([1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zero whole channels with probability ``p`` in training (survivors scaled by 1/(1-p)).

    >>> import ember
    >>> ember.nn.Dropout2d(0.2)
    Dropout2d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout for SELU networks (keeps zero mean and unit variance).

    >>> import ember
    >>> ember.nn.AlphaDropout(0.2).eval()(ember.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training, self.inplace)


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) input with probability ``p`` in training.

    >>> import ember
    >>> ember.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) input with probability ``p`` in training.

    >>> import ember
    >>> ember.nn.Dropout3d(0.2)
    Dropout3d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


__all__ = ["Dropout", "Dropout2d", "AlphaDropout", "Dropout1d", "Dropout3d"]
