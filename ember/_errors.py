"""ember's exception types: every one is an ``EmberError`` and keeps PyTorch's built-in base.

PyTorch raises ``RuntimeError`` for shape and autograd mistakes, ``TypeError`` for wrong dtypes
and ``IndexError`` for out-of-range indices; ember's errors subclass the same built-ins so
``except RuntimeError`` code ported from PyTorch keeps working.
"""


class EmberError(RuntimeError):
    """Base of every error ember raises on purpose."""


class ShapeError(EmberError, ValueError):
    """Shapes that do not fit the op (names the op and both shapes)."""


class DTypeError(EmberError, TypeError):
    """A dtype the op does not accept, or a cast it refuses."""


class DeviceError(EmberError):
    """Tensors on different devices in one op, or a device that is not available."""


class EmberIndexError(EmberError, IndexError):
    """An index out of range (names the dimension and its size)."""


class AutogradError(EmberError):
    """Misuse of autograd: freed graphs, in-place changes of saved tensors, and the like."""
