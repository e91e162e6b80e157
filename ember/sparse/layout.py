"""Memory layouts, as PyTorch names them: ``ember.strided`` (dense) and ``ember.sparse_coo``.

>>> import ember
>>> ember.ones(2).layout, ember.ones(2).to_sparse().layout
(ember.strided, ember.sparse_coo)
"""

from __future__ import annotations


class layout:  # noqa: N801  (PyTorch's class name: torch.layout)
    """A tensor layout; the instances are ``ember.strided`` and ``ember.sparse_coo``.

    >>> import ember
    >>> str(ember.sparse_coo)
    'ember.sparse_coo'
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module-level name: one object per layout


strided = layout("strided")
sparse_coo = layout("sparse_coo")

__all__ = ["layout", "strided", "sparse_coo"]
