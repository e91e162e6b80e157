"""Storages: the memory a tensor's elements live in, as PyTorch's ``torch.storage`` shows it.

``Tensor.untyped_storage()`` is the allocation the tensor's array views (bytes), and
``Tensor.storage()`` the same memory read as the tensor's dtype (PyTorch's deprecated
``TypedStorage``). A view and its base have one storage: it begins where the base's buffer
begins, whatever the view's offset (``Tensor.storage_offset()``), so comparing
``data_ptr()`` of two storages tells whether two tensors share memory. Both are read-only
snapshots of where the memory is and what it holds: writes through a storage are not
supported (write through the tensor).

>>> import ember
>>> x = ember.arange(6.0)
>>> v = x[2:]
>>> v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), v.storage_offset()
(True, 2)
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes as _dt
from ._errors import EmberError
from .backend import Device, device_of


def root_array(array):
    """The array that owns ``array``'s memory (the end of its chain of bases).

    >>> import numpy as np
    >>> a = np.zeros(4)
    >>> root_array(a[1:][::2]) is a
    True
    """
    kind = type(array)
    root, base = array, getattr(array, "base", None)
    while base is not None:
        if isinstance(base, kind):
            root = base
        base = getattr(base, "base", None)  # through NumPy's as_strided DummyArray too
    return root


def _pointer(array) -> int:
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return int(array.data.ptr)


def _checked(array, what: str):
    if getattr(array, "is_symbol", False):
        raise EmberError(f"{what}: a symbolic tensor (ember.static / ember.compile) has no storage")
    return array


def storage_offset(array) -> int:
    """Where ``array``'s first element is in its storage, in elements.

    >>> import numpy as np
    >>> storage_offset(np.arange(5)[3:])
    3
    """
    _checked(array, "storage_offset")
    return (_pointer(array) - _pointer(root_array(array))) // array.itemsize


_warned_typed_storage = [False]  # PyTorch warns once per process


def warn_typed_storage_removal() -> None:
    """PyTorch's UserWarning that TypedStorage is deprecated, the first time only (as PyTorch:
    ``Tensor.storage()`` calls it).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     warn_typed_storage_removal()
    """
    if _warned_typed_storage[0]:
        return
    _warned_typed_storage[0] = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
        UserWarning,
        stacklevel=3,
    )


class UntypedStorage:
    """The bytes of the allocation behind a tensor (``Tensor.untyped_storage()``).

    >>> import ember
    >>> s = ember.ones(2, dtype=ember.int16).untyped_storage()
    >>> s.nbytes(), len(s), s.tolist()
    (4, 4, [1, 0, 1, 0])
    """

    __slots__ = ("_array",)

    def __init__(self, array) -> None:
        self._array = root_array(_checked(array, "untyped_storage"))

    def data_ptr(self) -> int:
        """The address the storage begins at (0 when it holds no bytes, as PyTorch)."""
        return _pointer(self._array) if self._array.nbytes else 0

    def nbytes(self) -> int:
        """Bytes in the storage."""
        return int(self._array.nbytes)

    def size(self) -> int:
        """Bytes in the storage (an untyped storage's elements are bytes)."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    @property
    def device(self) -> Device:
        return device_of(self._array)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def _host_bytes(self) -> np.ndarray:
        a = self._array
        host = a if isinstance(a, np.ndarray) else a.get()
        return np.ascontiguousarray(host).reshape(-1).view(np.uint8)

    def tolist(self) -> list:
        """The bytes, as a list of ints (copied to the host)."""
        return self._host_bytes().tolist()

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage:
    """The allocation behind a tensor read as the tensor's dtype (``Tensor.storage()``, which
    PyTorch deprecates in favour of ``untyped_storage()``).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = ember.tensor([1, 2, 3])[1:].storage()
    >>> s.size(), s.dtype, s.element_size(), s.tolist()
    (3, ember.int64, 8, [1, 2, 3])
    """

    __slots__ = ("_untyped", "_dtype")

    def __init__(self, array) -> None:
        self._untyped = UntypedStorage(array)
        self._dtype = _dt.from_numpy_dtype(array.dtype)

    @property
    def dtype(self) -> _dt.DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._untyped.device

    @property
    def is_cuda(self) -> bool:
        return self._untyped.is_cuda

    def untyped(self) -> UntypedStorage:
        """The same memory as bytes."""
        return self._untyped

    def data_ptr(self) -> int:
        """The address the storage begins at (0 when it is empty)."""
        return self._untyped.data_ptr()

    def nbytes(self) -> int:
        """Bytes in the storage."""
        return self._untyped.nbytes()

    def element_size(self) -> int:
        """Bytes per element of the dtype."""
        return self._dtype.np.itemsize

    def size(self) -> int:
        """Elements of the dtype in the storage."""
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def tolist(self) -> list:
        """The values, as a list of Python numbers (copied to the host)."""
        n = self.size() * self.element_size()
        return self._untyped._host_bytes()[:n].view(self._dtype.np).tolist()

    def __repr__(self) -> str:
        return f"TypedStorage(size={self.size()}, dtype={self.dtype}, device={self.device})"


__all__ = ["TypedStorage", "UntypedStorage"]
