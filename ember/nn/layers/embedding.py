"""Lookup-table modules: Embedding and EmbeddingBag.

>>> import ember
>>> ember.nn.Embedding(10, 3)(ember.tensor([[1, 2]])).shape
ember.Size([1, 2, 3])
"""

from __future__ import annotations

from ..._config import no_grad
from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .. import init
from .._functional.embedding import embedding
from .._functional.embedding_bag import embedding_bag
from ..module import Module
from ..parameter import Parameter
from .linear import _empty, _module_error


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings: bags are the rows of a 2-D input, or the
    slices of a 1-D input that ``offsets`` start.

    >>> import ember
    >>> bag = ember.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(ember.tensor([1, 2, 4, 5, 4]), ember.tensor([0, 2])).shape
    ember.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:  # fmt: skip
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        from ...functions.creation import empty

        w = (
            _weight
            if _weight is not None
            else empty(num_embeddings, embedding_dim, device=device, dtype=dtype)
        )
        self.weight = Parameter(w)
        if _weight is None:
            self.reset_parameters()

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:  # fmt: skip
        """An EmbeddingBag holding ``embeddings`` (frozen unless ``freeze=False``).

        >>> import ember
        >>> bag = ember.nn.EmbeddingBag.from_pretrained(ember.eye(3), mode="sum")
        >>> bag(ember.tensor([[0, 2]])), bag.weight.requires_grad
        (tensor([[1., 0., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, dim = embeddings.shape
        bag = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)  # fmt: skip
        bag.weight.requires_grad = not freeze
        return bag

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ..._config import no_grad

            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:  # fmt: skip
        try:
            return embedding_bag(input, self.weight, offsets, mode=self.mode,
                                 per_sample_weights=per_sample_weights,
                                 include_last_offset=self.include_last_offset,
                                 padding_idx=self.padding_idx)  # fmt: skip
        except ShapeError as e:
            raise ShapeError(str(e).replace("embedding_bag:", "EmbeddingBag:", 1)) from None

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"


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


__all__ = ["EmbeddingBag", "Embedding"]
