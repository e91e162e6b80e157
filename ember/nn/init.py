"""Parameter initialization (PyTorch's ``torch.nn.init``): fill tensors in place, without
recording gradients, from ember's default generator (or ``generator=``), and return them.

>>> import ember
>>> from ember.nn import init
>>> w = ember.empty(3, 5)
>>> init._calculate_fan_in_and_fan_out(w)
(5, 3)
>>> _ = ember.manual_seed(0)
>>> init.kaiming_uniform_(w, a=5 ** 0.5) is w
True
>>> bool(abs(w.numpy()).max() <= 1 / 5 ** 0.5)
True
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import random as _random
from .._config import no_grad
from .._tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]


def _check(tensor, name: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{name}: expected an ember Tensor, got {type(tensor).__name__}")


def _native(tensor: Tensor):
    """The NumPy dtype to sample in: the tensor's own for float32/float64, else float32."""
    dt = tensor._data.dtype
    return dt if dt in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float32)


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy host ``values`` into ``tensor`` in place (any device), without recording."""
    with no_grad():
        tensor.copy_(Tensor._make(np.ascontiguousarray(values).reshape(tuple(tensor.shape))))
    return tensor


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    linear / conv / sigmoid: 1, tanh: 5/3, relu: sqrt(2), leaky_relu: sqrt(2 / (1 + slope^2))
    with ``param`` the negative slope (default 0.01), selu: 3/4.

    >>> from ember.nn import init
    >>> init.calculate_gain("tanh"), round(init.calculate_gain("leaky_relu", 0.2), 4)
    (1.6666666666666667, 1.3868)
    """
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn uniformly from ``[a, b)``.

    >>> import ember
    >>> w = ember.nn.init.uniform_(ember.empty(1000), -1, 1)
    >>> bool(w.numpy().min() >= -1 and w.numpy().max() < 1)
    True
    """
    _check(tensor, "uniform_")
    g = _random.rng(generator)
    values = g.random(tuple(tensor.shape), dtype=_native(tensor))
    return _write(tensor, values * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from N(mean, std²).

    >>> import ember
    >>> ember.nn.init.normal_(ember.empty(2, 3), std=0.02).shape
    ember.Size([2, 3])
    """
    _check(tensor, "normal_")
    g = _random.rng(generator)
    values = g.standard_normal(tuple(tensor.shape), dtype=_native(tensor))
    return _write(tensor, values * std + mean)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Fill with values from N(mean, std²) truncated to ``[a, b]`` (``a``, ``b`` absolute).

    Sampled by rejection: redrawing normals when the interval holds more than 30% of the
    mass, else uniform proposals on ``[a, b]`` accepted by the normal density (as PyTorch).

    >>> import ember
    >>> w = ember.nn.init.trunc_normal_(ember.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> float(w.numpy().min()) >= -0.5 and float(w.numpy().max()) <= 0.5
    True
    """
    _check(tensor, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    g = _random.rng(generator)
    n = tensor.numel()
    out = np.empty(n, dtype=np.float64)
    pending = np.arange(n)
    p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if p > 0.3:
        while pending.size:
            draw = g.standard_normal(pending.size) * std + mean
            ok = (draw >= a) & (draw <= b)
            out[pending[ok]] = draw[ok]
            pending = pending[~ok]
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        while pending.size:
            draw = g.uniform(a, b, pending.size)
            log_density = -0.5 * ((draw - mean) / std) ** 2 - log_peak
            ok = np.log(g.random(pending.size)) <= log_density
            out[pending[ok]] = draw[ok]
            pending = pending[~ok]
    return _write(tensor, np.clip(out, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import ember
    >>> ember.nn.init.constant_(ember.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    _check(tensor, "constant_")
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import ember
    >>> ember.nn.init.ones_(ember.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import ember
    >>> ember.nn.init.zeros_(ember.empty(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal).

    >>> import ember
    >>> ember.nn.init.eye_(ember.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    _check(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta (identity convolution),
    per group of output channels.

    >>> import ember
    >>> w = ember.nn.init.dirac_(ember.empty(2, 2, 3))
    >>> w.numpy()[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check(tensor, "dirac_")
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_per_group + d, d) + centre] = 1
    return _write(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)``: ``size(1)`` and ``size(0)`` times the receptive field size.

    >>> import ember
    >>> ember.nn.init._calculate_fan_in_and_fan_out(ember.empty(16, 3, 5, 5))
    (75, 400)
    """
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field_size = 1
    for s in tuple(tensor.shape)[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import ember
    >>> w = ember.nn.init.xavier_uniform_(ember.empty(3, 5))
    >>> bool(abs(w.numpy()).max() <= (6 / 8) ** 0.5)
    True
    """
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import ember
    >>> ember.nn.init.xavier_normal_(ember.empty(3, 5)).shape
    ember.Size([3, 5])
    """
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _zero_element(tensor: Tensor) -> bool:
    """Whether ``tensor`` has no elements (warning, at the initializer's caller, that
    initializing it is a no-op)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def _kaiming_std(tensor: Tensor, a, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He uniform: U(-bound, bound), ``bound = gain(nonlinearity, a) * sqrt(3 / fan)``.

    ``mode`` picks ``fan_in`` (keeps forward variance) or ``fan_out`` (backward). PyTorch's
    default Linear/Conv init is ``kaiming_uniform_(w, a=sqrt(5))``.

    >>> import ember
    >>> w = ember.nn.init.kaiming_uniform_(ember.empty(4, 6), nonlinearity="relu")
    >>> bool(abs(w.numpy()).max() <= (6 / 6) ** 0.5)
    True
    """
    _check(tensor, "kaiming_uniform_")
    if _zero_element(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He normal: N(0, std²), ``std = gain(nonlinearity, a) / sqrt(fan)``.

    >>> import ember
    >>> ember.nn.init.kaiming_normal_(ember.empty(4, 6), mode="fan_out").shape
    ember.Size([4, 6])
    """
    _check(tensor, "kaiming_normal_")
    if _zero_element(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (the tensor seen as ``size(0) x rest``), times
    ``gain``: QR of a Gaussian matrix with the signs of R's diagonal fixed.

    >>> import ember, numpy as np
    >>> w = ember.nn.init.orthogonal_(ember.empty(3, 5)).numpy()
    >>> np.allclose(w @ w.T, np.eye(3), atol=1e-5)
    True
    """
    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _random.rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, q * gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-D tensor from N(0, std²) with a fraction ``sparsity`` of each column zeroed.

    >>> import ember
    >>> w = ember.nn.init.sparse_(ember.empty(10, 3), sparsity=0.5)
    >>> [bool((w.numpy()[:, j] == 0).sum() >= 5) for j in range(3)]
    [True, True, True]
    """
    _check(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    num_zeros = math.ceil(sparsity * rows)
    g = _random.rng(generator)
    values = g.standard_normal((rows, cols), dtype=_native(tensor)) * std
    for col in range(cols):
        values[g.permutation(rows)[:num_zeros], col] = 0
    return _write(tensor, values)
