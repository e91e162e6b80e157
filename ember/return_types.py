"""``ember.return_types``: the named tuples PyTorch's multi-result functions return.

``x.max(dim=1)`` is an ``ember.return_types.max``: a tuple (indexable, unpackable, equal to
the plain tuple) whose fields are also attributes, printed as PyTorch prints its structseqs.

>>> import ember
>>> r = ember.tensor([[1.0, 5.0], [4.0, 3.0]]).max(dim=1)
>>> r
ember.return_types.max(
values=tensor([5., 4.]),
indices=tensor([1, 0]))
>>> values, indices = r
>>> isinstance(r, tuple), r.indices is indices
(True, True)
"""

from __future__ import annotations

from collections import namedtuple

# Each result type PyTorch names in torch.return_types (its `_out` twins aside) and its fields.
FIELDS: dict[str, tuple[str, ...]] = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"),
    "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"),
    "median": ("values", "indices"),
    "min": ("values", "indices"),
    "mode": ("values", "indices"),
    "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}


def _repr(self) -> str:
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
    return f"{__name__}.{type(self).__name__}(\n{body})"


def _new(cls, *args, **kwargs):
    # PyTorch builds a structseq from one sequence (`torch.return_types.max((v, i))`); ember's
    # tree helpers build named tuples field by field (`type(r)(*items)`): both are accepted.
    if len(args) == 1 and not kwargs and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple.__new__(cls, cls._base(*args, **kwargs))


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """A tuple type named ``ember.return_types.<name>`` with ``fields`` as attributes.

    >>> pair = structseq("pair", ("a", "b"))
    >>> pair((1, 2)).b, pair(1, 2) == (1, 2)
    (2, True)
    """
    base = namedtuple(name, fields)
    namespace = {"__slots__": (), "__repr__": _repr, "__new__": _new, "_base": base}
    cls = type(name, (base,), namespace)
    cls.__module__ = __name__
    cls.__qualname__ = name
    return cls


for _name, _fields in FIELDS.items():
    globals()[_name] = structseq(_name, _fields)

__all__ = list(FIELDS)
