"""In-place forms of the elementwise ops: ``x.exp_()``, ``x.relu_()``, ``x.masked_fill_(m, v)``,
``x //= y``, ``x &= y``...

Each is ``apply_inplace(x, out_of_place_op, ...)`` (see ``ember.functions.inplace``), so
autograd's in-place rules hold; without autograd recording, a float tensor's op whose forward
takes ``out=`` runs that forward straight into the tensor's array. ``add_``, ``mul_``,
``clamp_``... live in ``ember.functions.inplace``.

>>> import ember
>>> x = ember.tensor([-1.0, 2.0])
>>> x.relu_(), x
(tensor([0., 2.]), tensor([0., 2.]))
"""

from __future__ import annotations

import numpy as np

from .._config import graph_tracer, state
from .._errors import DTypeError, EmberError
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..backend import xp_of
from ..dtypes import is_float_np
from ..ops import elementwise as E
from . import elementwise as F
from . import logical
from . import math as M
from .inplace import _recording, apply_inplace, recorded_into

_UNARY_DOC = """In-place ``{fn}``: writes ``{fn}(self)`` into ``self`` and returns it.

    >>> import ember
    >>> x = ember.tensor([0.5, 0.25])
    >>> ember.equal(x.clone().{name}(), ember.{fn}(x))
    True
    """

_BINARY_DOC = """In-place ``{fn}``: writes ``{fn}(self, other)`` into ``self`` and returns it.

    >>> import ember
    >>> x = ember.tensor([{a}])
    >>> ember.equal(x.clone().{name}({b}), ember.{fn}(x, {b}))
    True
    """


def _fast_unary(x: Tensor, op) -> bool:
    """Run ``op``'s forward into ``x``'s own array when autograd is not recording; False if
    it can't (the forward takes no ``out``, the dtype is not floating, a read-only view)."""
    d = x._data
    if not op.writes_out or not is_float_np(d.dtype) or x._readonly:
        return False
    if (state.grad_enabled and x._requires_grad) or graph_tracer(x) is not None:
        return False
    op.forward(np if type(d) is np.ndarray else xp_of(d), d, out=d)
    x._version[0] += 1
    return True


def _unary(name: str, fn, saves: bool, op):
    def method(self: Tensor) -> Tensor:
        if op is not None and (_fast_unary(self, op) or recorded_into(self, op, None, name)):
            return self
        return apply_inplace(self, fn, name=name, saves_inputs=saves)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _UNARY_DOC.format(fn=fn.__name__, name=name)
    return method


def _binary(name: str, fn, saves: bool, example=("7.0, -7.5", "2")):
    def method(self: Tensor, other) -> Tensor:
        return apply_inplace(self, fn, other, name=name, saves_inputs=saves)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _BINARY_DOC.format(fn=fn.__name__, name=name, a=example[0], b=example[1])
    return method


# (name, out-of-place function, whether its vjp reads the input, the op it applies to floats)
_UNARY = [
    ("abs_", F.abs, True, E.Abs()),
    ("neg_", F.neg, False, E.NEG),
    ("sign_", F.sign, False, E.SIGN),
    ("reciprocal_", F.reciprocal, False, E.Reciprocal()),
    ("square_", F.square, True, E.PowScalar(2)),
    ("exp_", M.exp, False, E.EXP),
    ("expm1_", M.expm1, False, E.Expm1()),
    ("log_", M.log, True, E.LOG),
    ("log1p_", M.log1p, True, E.Log1p()),
    ("log2_", M.log2, True, E.Log2()),
    ("log10_", M.log10, True, E.Log10()),
    ("sqrt_", M.sqrt, False, E.SQRT),
    ("rsqrt_", M.rsqrt, False, E.Rsqrt()),
    ("sin_", M.sin, True, E.SIN),
    ("cos_", M.cos, True, E.COS),
    ("tan_", M.tan, False, E.Tan()),
    ("sinh_", M.sinh, True, E.SINH),
    ("cosh_", M.cosh, True, E.COSH),
    ("asin_", M.asin, True, E.Asin()),
    ("acos_", M.acos, True, E.Acos()),
    ("atan_", M.atan, True, E.Atan()),
    ("tanh_", M.tanh, False, E.Tanh()),
    ("sigmoid_", M.sigmoid, False, E.Sigmoid()),
    ("relu_", M.relu, False, E.Relu()),
    ("erf_", M.erf, True, E.Erf()),
    ("erfc_", M.erfc, True, E.Erfc()),
    ("floor_", M.floor, False, E.Floor()),
    ("ceil_", M.ceil, False, E.Ceil()),
    ("trunc_", M.trunc, False, E.Trunc()),
    ("frac_", M.frac, False, None),
    ("logical_not_", logical.logical_not, False, E.LogicalNot()),
    ("bitwise_not_", logical.bitwise_not, False, E.BitwiseNot()),
]

_BINARY = [
    ("floor_divide_", F.floor_divide, False),
    ("remainder_", F.remainder, True),
    ("fmod_", F.fmod, True),
    ("atan2_", M.atan2, True),
    ("clamp_min_", F.clamp_min, True),
    ("clamp_max_", F.clamp_max, True),
    ("logical_and_", logical.logical_and, False),
    ("logical_or_", logical.logical_or, False),
    ("logical_xor_", logical.logical_xor, False),
]
_BITWISE = [
    ("bitwise_and_", logical.bitwise_and),
    ("bitwise_or_", logical.bitwise_or),
    ("bitwise_xor_", logical.bitwise_xor),
]

TENSOR_METHODS: dict = {}
for _name, _fn, _saves, _op in _UNARY:
    TENSOR_METHODS[_name] = _unary(_name, _fn, _saves, _op)
for _name, _fn, _saves in _BINARY:
    TENSOR_METHODS[_name] = _binary(_name, _fn, _saves)
for _name, _fn in _BITWISE:
    TENSOR_METHODS[_name] = _binary(_name, _fn, False, example=("12, 5", "10"))


def round_(self: Tensor, *, decimals: int = 0) -> Tensor:
    """In-place ``round``.

    >>> import ember
    >>> ember.tensor([0.5, 1.5, 2.46]).round_(decimals=1)
    tensor([0.5000, 1.5000, 2.5000])
    """
    if decimals == 0 and _fast_unary(self, E.Round()):
        return self
    return apply_inplace(self, M.round, name="round_", decimals=decimals)


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    """Write ``value`` where ``mask`` is True (mask bool, broadcastable to this shape).

    >>> import ember
    >>> x = ember.zeros(2, 2)
    >>> x.masked_fill_(ember.tensor([True, False]), 5.0)
    tensor([[5., 0.],
            [5., 0.]])
    """
    if not _recording(self, (value,)):
        F._check_bool_mask(mask, "masked_fill_", "mask")
        shape = tuple(self.shape)
        if broadcast_shapes("masked_fill_", shape, tuple(mask.shape)) != shape:
            raise EmberError(
                f"masked_fill_: the mask of shape {tuple(mask.shape)} cannot be broadcast to the "
                f"tensor's shape {shape}"
            )
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise EmberError(
                    "masked_fill_: only supports a 0-dimensional value tensor, but got tensor with "
                    f"{value.ndim} dimension(s)"
                )
            value = value._data
        elif isinstance(value, complex) or not isinstance(value, (int, float, np.generic)):
            raise DTypeError(f"masked_fill_: value must be a number or a 0-d tensor, got {value!r}")
        d = self._data
        if self._readonly:
            raise EmberError("masked_fill_: the tensor is a read-only broadcast view; clone() it")
        xp = np if type(d) is np.ndarray else xp_of(d)
        xp.copyto(d, xp.asarray(value, dtype=d.dtype), where=mask._data)
        self._version[0] += 1
        return self
    # where() reads only the mask, never the old value: no copy needed
    return apply_inplace(self, F.masked_fill, mask, value, name="masked_fill_")


def _augmented(method: str):
    """The augmented-assignment operator (``x //= y``...) behind the in-place ``method``."""

    def op(self, other):
        return TENSOR_METHODS[method](self, other)

    return op


TENSOR_METHODS.update(
    {
        "round_": round_,
        "fix_": TENSOR_METHODS["trunc_"],
        "absolute_": TENSOR_METHODS["abs_"],
        "negative_": TENSOR_METHODS["neg_"],
        "arcsin_": TENSOR_METHODS["asin_"],
        "arccos_": TENSOR_METHODS["acos_"],
        "arctan_": TENSOR_METHODS["atan_"],
        "arctan2_": TENSOR_METHODS["atan2_"],
        "masked_fill_": masked_fill_,
        "__ifloordiv__": _augmented("floor_divide_"),
        "__imod__": _augmented("remainder_"),
        "__iand__": _augmented("bitwise_and_"),
        "__ior__": _augmented("bitwise_or_"),
        "__ixor__": _augmented("bitwise_xor_"),
    }
)

# PyTorch also has these as functions: ember.relu_(x), ember.exp_(x)...
abs_ = TENSOR_METHODS["abs_"]
neg_ = TENSOR_METHODS["neg_"]
exp_ = TENSOR_METHODS["exp_"]
log_ = TENSOR_METHODS["log_"]
sqrt_ = TENSOR_METHODS["sqrt_"]
sigmoid_ = TENSOR_METHODS["sigmoid_"]
tanh_ = TENSOR_METHODS["tanh_"]
relu_ = TENSOR_METHODS["relu_"]
sin_ = TENSOR_METHODS["sin_"]
cos_ = TENSOR_METHODS["cos_"]
floor_ = TENSOR_METHODS["floor_"]
ceil_ = TENSOR_METHODS["ceil_"]
trunc_ = TENSOR_METHODS["trunc_"]
reciprocal_ = TENSOR_METHODS["reciprocal_"]
rsqrt_ = TENSOR_METHODS["rsqrt_"]
erf_ = TENSOR_METHODS["erf_"]

__all__ = [
    "abs_",
    "neg_",
    "exp_",
    "log_",
    "sqrt_",
    "sigmoid_",
    "tanh_",
    "relu_",
    "sin_",
    "cos_",
    "floor_",
    "ceil_",
    "trunc_",
    "reciprocal_",
    "rsqrt_",
    "erf_",
    "round_",
]
