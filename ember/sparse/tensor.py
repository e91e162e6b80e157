"""The sparse COO tensor: a Tensor whose contents are an (indices, values) pair.

``SparseTensor`` subclasses ``Tensor`` (``isinstance(s, ember.Tensor)`` holds, as in PyTorch),
keeps the int64 ``indices`` ``(sparse_dim, nnz)`` and the ``values`` ``(nnz, *dense dims)`` as
ordinary tensors, and reports its own shape, dtype, device and autograd state. Where a dense
tensor holds its array (``_data``), a sparse one holds a ``_SparseData`` that refuses every
use: a dense op handed a sparse tensor stops with a ``SparseUnsupportedError`` naming the
function called and ``sparse_coo``, never computing on something else. Dense code pays
nothing for this.

Autograd flows through the values: a sparse tensor built from values with history is not a
leaf (its ``grad_fn`` is the values'); one made with ``requires_grad=True`` is a leaf owning
its values, and its ``.grad`` is gathered from where backward left it: a sparse gradient on
its sparsity pattern (``ember.sparse.mm``, ``to_dense``, ``ember.sparse.sum``), or a dense one
(``ember.mm``, ``matmul``, ``@``, ``spmm``, as ``torch.mm`` gives) through a dense stand-in
(``_port``, a broadcast zero: no memory) that only receives gradients.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> s.shape, s.dtype, s.is_sparse, s._nnz()
(ember.Size([2, 2]), ember.float32, True, 2)
>>> ember.exp(s)
Traceback (most recent call last):
ember.sparse.tensor.SparseUnsupportedError: exp: not supported for sparse_coo tensors (got size ...
"""

from __future__ import annotations

import os
import traceback

from .._errors import AutogradError, DTypeError, EmberError
from .._shape import wrap_dim
from .._tensor import Size, Tensor, _init, _new
from ..backend import device_of, xp_of
from ..ops.base import apply
from ..ops.sparse import SparseCooTensorWithDimsAndTensors
from .layout import sparse_coo

_EMBER_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_HERE = os.path.abspath(__file__)
_WRAPPERS = frozenset({"wrapper", "call", "inner", "wrapped", "decorated"})  # decorators' frames


class SparseUnsupportedError(EmberError, NotImplementedError):
    """A dense-only function was given a sparse_coo tensor (PyTorch raises
    ``NotImplementedError`` there)."""


def _entry_point() -> str:
    """The ember function the user called: the outermost public frame of the innermost run of
    ember frames on the stack (the error is raised deep inside it, where its name is unknown)."""
    best = fallback = None
    inside = False
    for frame, _ in traceback.walk_stack(None):
        code = frame.f_code
        path = os.path.abspath(code.co_filename)
        if not path.startswith(_EMBER_ROOT):
            if inside:
                break
            continue
        if path == _HERE:
            continue
        inside = True
        name = code.co_name
        if name == "forward" and "." in code.co_qualname:  # a module's forward: its class name
            name = code.co_qualname.split(".")[-2]
        fallback = fallback or name.strip("_")
        if not name.startswith(("_", "<")) and name not in _WRAPPERS:
            best = name
    return best or fallback or "this function"


class _SparseData:
    """A sparse tensor's ``_data``: every attribute, item, NumPy protocol and iteration raises."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def _refuse(self, *args, **kwargs):
        raise SparseUnsupportedError(
            f"{_entry_point()}: not supported for sparse_coo tensors (got {self.what}); convert "
            "with .to_dense() first, or use ember.sparse's functions"
        )

    def __getattr__(self, name):
        self._refuse()

    __getitem__ = __setitem__ = __len__ = __iter__ = __array__ = __float__ = __int__ = _refuse
    __array_ufunc__ = __array_function__ = _refuse


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout=ember.sparse_coo``); build one with
    ``ember.sparse_coo_tensor`` or ``dense.to_sparse()``.

    >>> import ember
    >>> ember.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
    tensor(indices=tensor([[0],
                           [1]]),
           values=tensor([2.]),
           size=(2, 2), nnz=1, layout=ember.sparse_coo)
    """

    __slots__ = ("_idx", "_vals", "_size", "_coalesced", "_owns", "_port")
    is_sparse = True
    layout = sparse_coo

    @classmethod
    def _build(
        cls,
        indices: Tensor,
        values: Tensor,
        size: tuple,
        coalesced: bool,
        requires_grad: bool = False,
        alias: bool = False,
    ) -> SparseTensor:
        """The sparse tensor of these parts (no checks). Values without history are taken as
        its own leaf (a fresh Tensor on their storage); with history, as they are (``alias``:
        through ``SparseCooTensorWithDimsAndTensors``, PyTorch's node for the constructor)."""
        t = _new(cls)
        _init(t, _SparseData(f"size {tuple(size)}, {values.dtype}"), False)
        owns = not values._requires_grad
        if owns:
            values = values.detach()
        elif alias:
            values = apply(SparseCooTensorWithDimsAndTensors(), values)
        if requires_grad:
            if not owns:
                raise AutogradError(
                    "sparse_coo_tensor: requires_grad=True needs values without history (got "
                    f"values of shape {tuple(values.shape)} with grad_fn); pass values.detach()"
                )
            values.requires_grad_()
        t._idx, t._vals, t._size = indices, values, tuple(size)
        t._coalesced, t._owns, t._port = bool(coalesced), owns, None
        return t

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._size)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension.

        >>> import ember
        >>> ember.eye(3).to_sparse().size(0)
        3
        """
        return (
            Size(self._size) if dim is None else self._size[wrap_dim(dim, len(self._size), "size")]
        )

    @property
    def ndim(self) -> int:
        return len(self._size)

    def dim(self) -> int:
        """Number of dimensions (sparse and dense).

        >>> import ember
        >>> ember.eye(3).to_sparse().dim()
        2
        """
        return len(self._size)

    ndimension = dim

    def numel(self) -> int:
        """Number of elements of the dense tensor it stands for.

        >>> import ember
        >>> ember.eye(3).to_sparse().numel()
        9
        """
        return Size(self._size).numel()

    nelement = numel

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return device_of(self._vals._data)

    def is_floating_point(self) -> bool:
        """Whether the values are floating point.

        >>> import ember
        >>> ember.eye(2).to_sparse().is_floating_point()
        True
        """
        return self._vals.is_floating_point()

    def element_size(self) -> int:
        """Bytes per value.

        >>> import ember
        >>> ember.eye(2).to_sparse().element_size()
        4
        """
        return self._vals.element_size()

    def sparse_dim(self) -> int:
        """How many leading dimensions are sparse (indexed by ``indices``).

        >>> import ember
        >>> ember.eye(2).to_sparse().sparse_dim()
        2
        """
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        """How many trailing dimensions each value has.

        >>> import ember
        >>> ember.eye(2).to_sparse(1).dense_dim()
        1
        """
        return len(self._size) - self._idx.shape[0]

    def _nnz(self) -> int:
        """Number of stored entries (repeats included while uncoalesced).

        >>> import ember
        >>> ember.eye(3).to_sparse()._nnz()
        3
        """
        return self._vals.shape[0]

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique.

        >>> import ember
        >>> ember.sparse_coo_tensor([[0, 0]], [1.0, 2.0]).is_coalesced()
        False
        """
        return self._coalesced

    def _indices(self) -> Tensor:
        """The stored indices, as they are (coalesced or not).

        >>> import ember
        >>> ember.sparse_coo_tensor([[1, 0]], [1.0, 2.0])._indices()
        tensor([[1, 0]])
        """
        return self._idx

    def _values(self) -> Tensor:
        """The stored values, as they are (coalesced or not).

        >>> import ember
        >>> ember.sparse_coo_tensor([[1, 0]], [1.0, 2.0])._values()
        tensor([1., 2.])
        """
        return self._vals

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor.

        >>> import ember
        >>> ember.sparse_coo_tensor([[1, 1]], [1.0, 2.0]).coalesce().indices()
        tensor([[1]])
        """
        self._require_coalesced("indices")
        return self._idx

    def values(self) -> Tensor:
        """The values of a coalesced tensor.

        >>> import ember
        >>> ember.sparse_coo_tensor([[1, 1]], [1.0, 2.0]).coalesce().values()
        tensor([3.])
        """
        self._require_coalesced("values")
        return self._vals

    def _require_coalesced(self, what: str) -> None:
        if not self._coalesced:
            raise EmberError(
                f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first "
                f"(size {self._size}, nnz={self._nnz()})"
            )

    # -- autograd state ----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._vals._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype")

    def _set_requires_grad(self, value: bool, who: str) -> None:
        """The attribute's and ``requires_grad_()``'s work: a leaf's flag is its values'."""
        if not self._owns:
            if not value:
                raise AutogradError(
                    "you can only change requires_grad flags of leaf tensors; use .detach() to "
                    "get a sparse tensor without history"
                )
            return
        self._vals._set_requires_grad(value, who)

    @property
    def is_leaf(self) -> bool:
        return self._owns

    @property
    def grad_fn(self):
        return None if self._owns else self._vals._node

    @property
    def grad(self) -> Tensor | None:
        if not self._owns:
            return None
        from .gradient import leaf_grad

        return leaf_grad(self)

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            raise EmberError(
                f"grad: only None can be assigned to a sparse tensor's grad (size {self._size})"
            )
        self._vals._grad = None
        if self._port is not None:
            self._port._grad = None

    def _grad_port(self) -> Tensor:
        """The dense stand-in that receives this leaf's gradient where PyTorch's is dense."""
        if self._port is None:
            v = self._vals._data
            xp = xp_of(v)
            port = Tensor._make(xp.broadcast_to(xp.zeros((), v.dtype), self._size), True)
            port._readonly = True
            self._port = port
        return self._port

    def detach(self) -> SparseTensor:
        """The same indices and values, without history.

        >>> import ember
        >>> s = ember.sparse_coo_tensor([[0]], [1.0], requires_grad=True)
        >>> s.detach().requires_grad
        False
        """
        return SparseTensor._build(self._idx, self._vals.detach(), self._size, self._coalesced)

    # -- conversion -------------------------------------------------------------------------
    def numpy(self, *, force: bool = False):
        """Refused, as in PyTorch: convert with ``to_dense()`` first."""
        raise DTypeError(
            f"can't convert Sparse layout tensor to numpy (size {self._size}). Use "
            "Tensor.to_dense() first."
        )

    def __len__(self) -> int:
        if not self._size:
            raise DTypeError("len() of a 0-d tensor")
        return self._size[0]

    def __repr__(self) -> str:
        from .printing import sparse_repr

        return sparse_repr(self)

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild, (self._idx, self._vals.detach(), self._size, self._coalesced))

    __deepcopy__ = None  # copied through ``__reduce__`` (its own parts), not a dense tensor's


def _rebuild(indices, values, size, coalesced):
    return SparseTensor._build(indices, values, size, coalesced)


__all__ = ["SparseTensor", "SparseUnsupportedError"]
