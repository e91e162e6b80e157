"""ember: a deep-learning framework that reads like NumPy and trains like PyTorch.

>>> import ember
>>> x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

from . import _tensor_methods  # noqa: F401  (attaches the Tensor methods)
from . import autograd, cuda, dtypes, optim, random
from ._config import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from ._errors import (
    AutogradError,
    DeviceError,
    DTypeError,
    EmberError,
    EmberIndexError,
    ShapeError,
)
from ._legacy import CPU_TYPES as _CPU_TYPES
from ._shape import broadcast_shapes as _broadcast_shapes
from ._tensor import Size, Tensor
from .backend import Device, device
from .dtypes import (
    DType,
    bfloat16,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .dtypes import bool_ as bool  # noqa: A001  (PyTorch spells it ember.bool)
from .functions.conversion import *  # noqa: F403
from .functions.creation import *  # noqa: F403
from .functions.elementwise import *  # noqa: F403
from .functions.linalg import *  # noqa: F403
from .functions.reduce import *  # noqa: F403
from .functions.shape import *  # noqa: F403
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

FloatTensor = _CPU_TYPES["FloatTensor"]
DoubleTensor = _CPU_TYPES["DoubleTensor"]
HalfTensor = _CPU_TYPES["HalfTensor"]
BFloat16Tensor = _CPU_TYPES["BFloat16Tensor"]
ByteTensor = _CPU_TYPES["ByteTensor"]
CharTensor = _CPU_TYPES["CharTensor"]
ShortTensor = _CPU_TYPES["ShortTensor"]
IntTensor = _CPU_TYPES["IntTensor"]
LongTensor = _CPU_TYPES["LongTensor"]
BoolTensor = _CPU_TYPES["BoolTensor"]


def is_tensor(obj) -> bool:
    """Whether ``obj`` is an ember Tensor.

    >>> import ember
    >>> ember.is_tensor(ember.ones(1)), ember.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


def broadcast_shapes(*shapes) -> Size:
    """The shape these shapes broadcast to.

    >>> import ember
    >>> ember.broadcast_shapes((2, 1), (3,))
    ember.Size([2, 3])
    """
    return Size(_broadcast_shapes("broadcast_shapes", *(tuple(s) for s in shapes)))


__version__ = "0.1.0"
