"""ember: a deep-learning framework that reads like NumPy and trains like PyTorch.

>>> import ember
>>> x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

import warnings as _warnings

# NumPy's floating-point RuntimeWarnings (log(0), 0/0, overflow in a cast) raised by ember's own
# modules stay silent, as PyTorch is: results carry inf/nan, and detect_anomaly finds them.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember(\.|$)")

from . import (  # ember.data, ember.utils.data (torch.utils.data)
    _tensor_methods,  # noqa: E402,F401  (attaches the Tensor methods)
    amp,  # noqa: E402  (mixed precision: ember.amp, ember.autocast)
    autograd,
    data,
    distributions,  # noqa: E402  (ember.distributions, as torch.distributions)
    dtypes,
    func,  # noqa: E402  (ember.func: function transforms, as torch.func)
    jit,  # noqa: E402  (ember.jit: torch.jit's entry points on ember.compile)
    linalg,  # noqa: E402  (ember.linalg, as torch.linalg)
    nn,
    optim,
    random,
    return_types,  # noqa: E402  (torch.return_types: max, sort, ... result tuples)
    sparse,  # noqa: E402  (ember.sparse: sparse COO tensors, as torch.sparse)
    static,  # noqa: E402  (ember.static: graphs, Session)
    testing,  # noqa: E402  (ember.testing: assert_close, make_tensor, as torch.testing)
    utils,
    viz,  # noqa: E402  (ember.viz: graph pictures; graphviz loads only to render)
)
from ._aliases import (  # noqa: E402  (torch.cuda / torch.backends / torch.accelerator paths)
    accelerator,
    backends,
    cuda,
)
from ._caches import clear_caches
from ._config import (
    are_deterministic_algorithms_enabled,
    enable_grad,
    get_num_threads,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    set_num_threads,
    use_deterministic_algorithms,
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
from ._repr import get_printoptions, printoptions, set_printoptions
from ._shape import broadcast_shapes_of as _broadcast_shapes_of
from ._tensor import Size, Tensor
from .amp.autocast_mode import (
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)
from .amp.device_aliases import register as _register_cpu
from .backend import Device, device, get_default_device, set_default_device
from .backend.cuda import get_float32_matmul_precision, set_float32_matmul_precision
from .dtypes import (
    DType,
    bfloat16,
    can_cast,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    is_floating_point,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .dtypes import bool_ as bool  # noqa: A001  (PyTorch spells it ember.bool)
from .functions.compare import *  # noqa: F403
from .functions.conversion import *  # noqa: F403
from .functions.creation import *  # noqa: F403
from .functions.elementwise import *  # noqa: F403
from .functions.elementwise_inplace import *  # noqa: F403
from .functions.indexing import *  # noqa: F403
from .functions.linalg import *  # noqa: F403
from .functions.logical import *  # noqa: F403
from .functions.math import *  # noqa: F403
from .functions.matrices import *  # noqa: F403
from .functions.numpy_names import add_numpy_names as _add_numpy_names
from .functions.out_arg import add_out_argument as _add_out_argument
from .functions.reduce import *  # noqa: F403
from .functions.sampling import *  # noqa: F403
from .functions.searching import *  # noqa: F403
from .functions.shape import *  # noqa: F403
from .functions.sorting import *  # noqa: F403
from .functions.special import *  # noqa: F403
from .functions.statistics import *  # noqa: F403
from .functions.structure import *  # noqa: F403
from .functions.tensor_flags import is_complex, is_nonzero
from .linalg import _torch_slogdet as slogdet
from .linalg import _torch_svd as svd
from .linalg import cholesky, det, logdet, matrix_power
from .linalg import inv as inverse
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)  # noqa: E501
from .serialization import CheckpointError, load, save
from .sparse.layout import layout, sparse_coo, strided
from .sparse.methods import *  # noqa: F403
from .static import compile  # noqa: E402,A004  (ember.compile)

cpu = _register_cpu()  # ember.cpu, ember.cpu.amp, ember.cuda.amp
_add_out_argument(globals())  # ember.add(x, y, out=r): PyTorch's out= keyword
_add_numpy_names(globals(), [n for n in list(globals()) if not n.startswith("_")])  # axis=
from .utils.summary import summary

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
    return Size(_broadcast_shapes_of(*shapes))


__version__ = "0.1.0"

# The top layer loads on first use (PEP 562), so `import ember` does not pay for the training
# loop, the ONNX exporter or the model zoo, and nothing below reaches them through the package
# root. `ember.train`, `import ember.train` and `from ember import train` work as before.
_LAZY_SUBMODULES = frozenset(
    {
        "models",  # the model zoo: mlp, cnn, lenet5, vgg, resnet
        "distributed",  # ember.distributed: collectives on MPI (mpi4py loads at init)
        "onnx",  # ember.onnx.export; the onnx package itself loads only on export
        "train",  # ember.train: Trainer, fit, callbacks
    }
)


def __getattr__(name: str):
    """Import ``ember.train``, ``ember.onnx`` and ``ember.models`` on first access.

    >>> import ember
    >>> ember.train.Trainer.__name__
    'Trainer'
    """
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")  # also sets ember.<name>
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, the lazily loaded submodules included."""
    return sorted(set(globals()) | _LAZY_SUBMODULES)
