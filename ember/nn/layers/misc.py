"""Dropout, Dropout2d, Embedding.

>>> import ember
>>> ember.nn.Embedding(10, 3)(ember.tensor([[1, 2]])).shape
ember.Size([1, 2, 3])
"""

from __future__ import annotations

from ..._config import no_grad
from ..._errors import EmberError
from ..._tensor import Tensor
from .. import init
from .._functional.misc import alpha_dropout, dropout, dropout2d, embedding
from ..module import Module
from ..parameter import Parameter
from .linear import _empty, _module_error


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
        return alpha_dropout(input, self.p, self.training)


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim`` (N(0, 1) init).

    >>> import ember
    >>> ember.nn.Embedding(5, 2, padding_idx=0).weight[0].tolist()
    [0.0, 0.0]
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Embedding: padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(
                _empty(num_embeddings, embedding_dim, device=device, dtype=dtype),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx=None,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding holding ``embeddings`` (frozen unless ``freeze=False``)."""
        rows, dim = embeddings.shape
        return cls(
            rows,
            dim,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def forward(self, input: Tensor) -> Tensor:
        try:
            return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


__all__ = ["Dropout", "Dropout2d", "AlphaDropout", "Embedding"]
