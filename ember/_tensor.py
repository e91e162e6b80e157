"""The Tensor: an array plus dtype/device metadata and autograd history.

This module holds storage, metadata and history only. Methods that compute (``+``, ``sum``,
``reshape``...) are attached from the ops side in ``ember/_tensor_methods.py``, so the import
graph points down: ops import Tensor, never the reverse.

>>> import ember
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> x.shape, x.dtype, x.is_leaf
(ember.Size([2]), ember.float32, True)
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._errors import AutogradError, DTypeError, EmberError, ShapeError
from ._shape import wrap_dim
from .backend import CPU, Device, device_of
from .backend.arrays import own_copy
from .storage import TypedStorage, UntypedStorage, storage_offset, warn_typed_storage_removal

_BY_NP = _dt._BY_NP


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's ``torch.Size``.

    >>> import ember
    >>> ember.zeros(2, 3).shape
    ember.Size([2, 3])
    """

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    # Slicing, ``+`` and ``*`` give a Size back, as torch.Size's do (a tuple's give a tuple).
    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class Tensor:
    """An n-dimensional array on a device, with optional autograd history.

    ``ember.Tensor(2, 3)`` makes an uninitialized float tensor of that shape and
    ``ember.Tensor([1, 2])`` a float tensor from data, as ``torch.Tensor`` does; prefer
    ``ember.tensor(data)``, which keeps integer data integer.

    >>> import ember
    >>> ember.Tensor([1, 2])
    tensor([1., 2.])
    """

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad",
        "_node",
        "_version",
        "_base",
        "_view_ops",
        "_readonly",
        "_hooks",
        "_retains_grad",
        "_post_acc_hooks",  # set only by register_post_accumulate_grad_hook (not in _make)
        "__weakref__",
    )
    __array_ufunc__ = None  # NumPy defers to our reflected operators: np.float32(2) * t is a Tensor
    __array_priority__ = 1000

    def __init__(self, *args, dtype=None, device=None, requires_grad: bool = False) -> None:
        dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
        if not args:
            arr = np.empty((0,), dtype=dt.np)
        elif len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
            data = args[0]
            data = data.numpy(force=True) if isinstance(data, Tensor) else data
            try:
                arr = np.array(data, dtype=dt.np)
            except (TypeError, ValueError) as e:
                raise EmberError(f"Tensor: can't build a {dt} tensor from {data!r}: {e}") from None
        else:
            shape = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
            arr = np.empty(_shape_of(shape, "Tensor"), dtype=dt.np)
        if device is not None and Device(device) != CPU:
            from .backend import to_device

            arr = to_device(arr, Device(device))
        _init(self, arr, False)
        if requires_grad:
            self.requires_grad = True

    # -- construction used by ops (no checks, no copies) -------------------------------------
    @classmethod
    def _make(cls, data, requires_grad: bool = False) -> Tensor:
        t = _new(cls)  # the hot path of every op: _init inlined
        t._data = data
        t._requires_grad = requires_grad
        t._grad = None
        t._node = None
        t._version = [0]
        t._base = None
        t._view_ops = None
        t._readonly = False
        t._hooks = None
        t._retains_grad = False
        return t

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension.

        >>> import ember
        >>> ember.zeros(2, 3).size(), ember.zeros(2, 3).size(-1)
        (ember.Size([2, 3]), 3)
        """
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim, "size")]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        """Number of dimensions.

        >>> import ember
        >>> ember.zeros(2, 3).dim()
        2
        """
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        """Number of elements.

        >>> import ember
        >>> ember.zeros(2, 3).numel()
        6
        """
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> _dt.DType:
        found = _BY_NP.get(self._data.dtype)  # one dict lookup: read on every op
        return found if found is not None else _dt.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> Device:
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating type.

        >>> import ember
        >>> ember.ones(1).is_floating_point()
        True
        """
        return self._data.dtype.kind == "f" or self.dtype.is_floating_point

    def element_size(self) -> int:
        """Bytes per element.

        >>> import ember
        >>> ember.ones(2, dtype=ember.float64).element_size()
        8
        """
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def get_device(self) -> int:
        """The GPU index of a cuda tensor, -1 for a CPU tensor (as in PyTorch).

        >>> import ember
        >>> ember.ones(1).get_device()
        -1
        """
        dev = self.device
        return -1 if dev.type == "cpu" else (dev.index or 0)

    def is_contiguous(self) -> bool:
        """Whether the elements are laid out in row-major order without gaps."""
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: int | None = None):
        """Strides in elements, as PyTorch reports them."""
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[wrap_dim(dim, self.ndim, "stride")]

    def data_ptr(self) -> int:
        """Address of the first element (equal for tensors sharing storage from the start)."""
        if type(self._data) is np.ndarray:
            return self._data.__array_interface__["data"][0]
        return int(self._data.data.ptr)

    def untyped_storage(self) -> UntypedStorage:
        """The allocation this tensor's elements live in, as bytes (shared by a view and its
        base: compare ``data_ptr()`` to tell whether two tensors share memory). Read-only.

        >>> import ember
        >>> x = ember.zeros(4)
        >>> x[1:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        True
        """
        return UntypedStorage(self._data)

    def storage(self) -> TypedStorage:
        """The allocation read as this tensor's dtype; PyTorch deprecates it (it warns once per
        process), prefer ``untyped_storage()``. Read-only.

        >>> import ember, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     ember.arange(4)[2:].storage().tolist()
        [0, 1, 2, 3]
        """
        warn_typed_storage_removal()
        return TypedStorage(self._data)

    def storage_offset(self) -> int:
        """Where the first element is in the storage, in elements (nonzero for views that start
        past their base's first element).

        >>> import ember
        >>> ember.zeros(3, 4)[1].storage_offset()
        4
        """
        return storage_offset(self._data)

    # -- autograd state ----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype")

    def _set_requires_grad(self, value: bool, who: str) -> None:
        """The setter's work; ``who`` opens the error for a non-float dtype (PyTorch words it
        three ways: the attribute, ``requires_grad_()`` and a factory's ``requires_grad=``)."""
        value = bool(value)
        if self._node is not None:
            if not value:
                raise AutogradError(
                    "you can only change requires_grad flags of leaf tensors; "
                    "use .detach() to get a tensor without history"
                )
            return
        if value and not self.is_floating_point():
            raise DTypeError(f"{who} can require gradients\n(got {self.dtype})")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self.

        >>> import ember
        >>> ember.ones(2).requires_grad_().requires_grad
        True
        """
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype")
        return self

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        node = self._node  # typed: its class carries PyTorch's grad_fn name
        return None if node is None else node.typed()

    @property
    def grad(self) -> Tensor | None:
        if self._grad is None and self._node is not None and not self._retains_grad:
            import warnings

            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf is being accessed; "
                "call .retain_grad() on it before backward() to keep its gradient",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise DTypeError(
                    f"assigned grad must be a Tensor or None, got {type(value).__name__}"
                )
            if value.shape != self.shape:
                raise EmberError(
                    f"assigned grad has shape {tuple(value.shape)} but the tensor has shape "
                    f"{tuple(self.shape)}"
                )
        self._grad = value

    @property
    def data(self) -> Tensor:
        """The same storage without history (and without version tracking: prefer detach())."""
        t = Tensor._make(self._data)
        t._readonly = self._readonly
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def _version_value(self) -> int:
        return self._version[0]

    def detach(self) -> Tensor:
        """A tensor sharing this one's storage (and version counter) but with no history.

        >>> import ember
        >>> ember.ones(2, requires_grad=True).detach().requires_grad
        False
        """
        t = Tensor._make(self._data)
        t._version = self._version
        t._readonly = self._readonly
        return t

    def detach_(self) -> Tensor:
        """Drop this tensor's history in place."""
        self._node = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self._node is None:
            return
        self._retains_grad = True
        self._node.retain(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient.

        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> (x * 3).sum().backward(); x.grad
        tensor([6., 6.])
        """
        if not self._requires_grad:
            raise AutogradError("cannot register a hook on a tensor that doesn't require gradient")
        if self._node is not None:
            hooks = self._node.hooks
            if hooks is None:
                hooks = self._node.hooks = []
        else:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` once this leaf's ``.grad`` is final for a ``backward()`` (its
        gradient accumulated, while backward may still run elsewhere): DDP starts averaging a
        bucket of gradients there.

        >>> import ember
        >>> w = ember.ones(2, requires_grad=True)
        >>> h = w.register_post_accumulate_grad_hook(lambda t: print("final", t.grad))
        >>> (w * 3).sum().backward()
        final tensor([3., 3.])
        """
        if self._node is not None:
            raise AutogradError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors "
                f"(shape {tuple(self.shape)})"
            )
        if not self._requires_grad:
            raise AutogradError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = getattr(self, "_post_acc_hooks", None)
        if hooks is None:
            hooks = self._post_acc_hooks = []
        hooks.append(hook)
        POST_ACCUMULATE_HOOKS[0] += 1
        return _HookHandle(hooks, hook, POST_ACCUMULATE_HOOKS)

    # -- conversion to Python and NumPy ---------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array sharing memory (CPU tensors without grad, as in PyTorch).

        >>> import ember
        >>> ember.ones(2).numpy()
        array([1., 1.], dtype=float32)
        """
        if self._requires_grad and not force:
            raise AutogradError(
                "can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()"
            )
        if type(self._data) is not np.ndarray:
            if not force:
                raise EmberError(
                    f"can't convert a {self.device} tensor to numpy; copy it to the host first "
                    "with tensor.cpu()"
                )
            from .backend import to_device

            return to_device(self._data, CPU)
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self._data if type(self._data) is np.ndarray else self.numpy(force=True)
        return arr if dtype is None else arr.astype(dtype)

    def item(self):
        """The value of a one-element tensor as a Python number.

        >>> import ember
        >>> ember.tensor([2.5]).item()
        2.5
        """
        if self._data.size != 1:
            raise EmberError(
                f"item: a Tensor with {self._data.size} elements cannot be converted to a "
                "Python scalar"
            )
        arr = self.numpy(force=True).reshape(())
        return float(arr) if arr.dtype == _dt.bfloat16.np else arr.item()

    def _scalar(self, kind: str):
        if self._data.size != 1:
            raise ShapeError(
                f"{kind}(): only one element tensors can be converted to Python scalars "
                f"(got shape {tuple(self._data.shape)})"
            )
        return self.item()

    def tolist(self):
        """The data as (nested) Python lists of numbers.

        >>> import ember
        >>> ember.tensor([[1, 2]]).tolist()
        [[1, 2]]
        """
        arr = self.numpy(force=True)
        if arr.dtype == _dt.bfloat16.np:
            arr = arr.astype(np.float32)
        return arr.tolist()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise EmberError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise EmberError(
                f"Boolean value of Tensor with {self._data.size} elements is ambiguous"
            )
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:  # a TypeError, as in PyTorch (and an EmberError)
            raise DTypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        """The sub-tensors along dimension 0 (views); a 0-d tensor is not iterable (a
        ``TypeError``, as in PyTorch: without this, Python's fallback would iterate it as
        empty).

        >>> import ember
        >>> [t.tolist() for t in ember.tensor([[1, 2], [3, 4]])]
        [[1, 2], [3, 4]]
        >>> list(ember.tensor(3))
        Traceback (most recent call last):
        ember._errors.DTypeError: iteration over a 0-d tensor
        """
        if self._data.ndim == 0:
            raise DTypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__  # by identity, as PyTorch's; the C slot keeps dict lookups fast

    def __repr__(self) -> str:
        from ._repr import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)  # f"{loss:.3f}" and f"{loss}" print the number
        return object.__format__(self, spec)

    def __reduce__(self):
        return (_rebuild, (self.numpy(force=True).copy(), self._requires_grad))

    def __deepcopy__(self, memo: dict) -> Tensor:
        """``copy.deepcopy``: a copy on the same device, with ``requires_grad`` and a copy of
        ``.grad``, as PyTorch's; only a leaf may be copied (a result keeps its history).

        >>> import copy, ember
        >>> w = ember.ones(2, requires_grad=True)
        >>> (w * 2).sum().backward()
        >>> copy.deepcopy(w).grad
        tensor([2., 2.])
        """
        if id(self) in memo:
            return memo[id(self)]
        if self._node is not None:
            raise AutogradError(
                "deepcopy: only tensors created explicitly by the user (graph leaves) support "
                f"the deepcopy protocol, as in PyTorch; this {tuple(self.shape)} tensor has "
                f"grad_fn={self.grad_fn.name()} (detach() it first)"
            )
        result = type(self)._make(own_copy(self._data), self._requires_grad)
        memo[id(self)] = result
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        return result


def _shape_of(shape, op: str) -> tuple:
    """``shape`` as a tuple of non-negative ints, or an error naming ``op``."""
    out = []
    for s in shape:
        if isinstance(s, (bool, float, np.floating)) or not hasattr(s, "__index__"):
            raise ShapeError(
                f"{op}: size must be a tuple of ints, got {type(s).__name__} {s!r} "
                f"in {tuple(shape)}"
            )
        s = s.__index__()
        if s < 0:
            raise ShapeError(f"{op}: negative dimension {s} in size {tuple(shape)}")
        out.append(s)
    return tuple(out)


_new = object.__new__


def _rebuild(array, requires_grad):
    return Tensor._make(array, requires_grad)


def _init(t: Tensor, data, requires_grad: bool) -> None:
    t._data = data
    t._requires_grad = requires_grad
    t._grad = None
    t._node = None
    t._version = [0]
    t._base = None
    t._view_ops = None
    t._readonly = False
    t._hooks = None
    t._retains_grad = False


# How many post-accumulate-grad hooks are registered: the engine looks for them only when > 0.
POST_ACCUMULATE_HOOKS = [0]


class _HookHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook away."""

    def __init__(self, hooks: list, hook, counter: list | None = None) -> None:
        self._hooks, self._hook, self._counter = hooks, hook, counter

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
            if self._counter is not None:
                self._counter[0] -= 1
