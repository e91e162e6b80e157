"""Keras layers over ember: ``Dense``, ``Conv2D``, ``MaxPooling2D``, ``Flatten``, ``Dropout``...

A layer is an ``ember.nn.Module`` whose weights are ``tf.Variable``s (kernel and bias made by
``add_weight``). Weights are made on the first call, from the input's shape (``build``), unless
an ``input_shape`` says it sooner. Following Keras: Dense kernels are ``(in, out)``, glorot-
uniform, with zero biases; images are channels-last (NHWC) and ``Conv2D`` kernels
``(kh, kw, in, out)``; ``padding`` is ``"valid"`` or ``"same"`` (TensorFlow's: any odd pixel
of padding goes at the bottom and right); ``Dropout`` is active only when called with
``training=True`` (as ``fit`` does).

>>> import ember.compat.tf as tf
>>> layer = tf.keras.layers.Dense(3, activation="relu")
>>> y = layer(tf.ones((2, 5)))
>>> y.shape, layer.kernel.shape, layer.bias.numpy()
(ember.Size([2, 3]), ember.Size([5, 3]), array([0., 0., 0.], dtype=float32))
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np

import ember
import ember.nn.functional as F
from ember._errors import EmberError, ShapeError
from ember._tensor import Tensor
from ember.nn.module import Module

from .. import ops as _ops
from ..variables import Variable
from . import activations, initializers

_name_counts: dict = {}


def _unique_name(base: str) -> str:
    k = _name_counts.get(base, 0)
    _name_counts[base] = k + 1
    return base if k == 0 else f"{base}_{k}"


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def _pair(x, what: str) -> tuple[int, int]:
    if isinstance(x, int):
        return (x, x)
    x = tuple(int(v) for v in x)
    if len(x) != 2:
        raise EmberError(f"{what}: expected an int or a pair of ints, got {x}")
    return x


def as_input(x) -> Tensor:
    """Model input as a tensor: NumPy float64 data become float32 (Keras' float type)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype == np.float64:
            x = x.astype(np.float32)
        return ember.from_numpy(np.ascontiguousarray(x))
    return _ops.convert_to_tensor(x)


class Layer(Module):
    """Base class of Keras layers: override ``build(input_shape)`` (make weights with
    ``add_weight``) and ``call(inputs, training=None)``.

    >>> import ember.compat.tf as tf
    >>> class Scale(tf.keras.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.s = self.add_weight("s", (input_shape[-1],), initializer="ones")
    ...     def call(self, x):
    ...         return x * self.s
    >>> Scale()(tf.ones((2, 3))).shape
    ember.Size([2, 3])
    """

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype=None,
        input_shape=None,
        input_dim=None,
        **kwargs,
    ) -> None:
        super().__init__()
        if kwargs:
            raise EmberError(
                f"{type(self).__name__}: unexpected keyword argument '{next(iter(kwargs))}'"
            )
        self.name = name or _unique_name(_snake(type(self).__name__))
        self.built = False
        self._trainable = bool(trainable)
        self._weights: list = []
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        self._input_shape = None if input_shape is None else (None, *tuple(input_shape))
        self._output_shape = None
        self._call_takes_training = "training" in inspect.signature(self.call).parameters

    # -- weights ----------------------------------------------------------------------------
    def add_weight(
        self,
        name: str | None = None,
        shape=(),
        initializer="glorot_uniform",
        dtype=None,
        trainable: bool = True,
        **kwargs,
    ) -> Variable:
        """Make a Variable of ``shape`` set by ``initializer``, and register it as
        ``self.<name>``."""
        name = name or f"weight_{len(self._weights)}"
        init = initializers.get(initializer)
        value = init(tuple(int(s) for s in shape), _ops.float32 if dtype is None else dtype)
        v = Variable(value, trainable=trainable, name=f"{self.name}/{name}")
        setattr(self, name, v)
        self._weights.append(v)
        return v

    def _sublayers(self) -> list:
        return [m for m in self.modules() if isinstance(m, Layer)]

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)

    @property
    def weights(self) -> list:
        """Every weight of this layer and the layers inside it (trainable ones first)."""
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def trainable_weights(self) -> list:
        out = []
        for layer in self._sublayers():
            if not layer._trainable:
                continue
            out += [w for w in layer._weights if w.trainable and not _has(out, w)]
        return out

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        trainable = self.trainable_weights
        out = []
        for layer in self._sublayers():
            out += [w for w in layer._weights if not _has(trainable, w) and not _has(out, w)]
        return out

    non_trainable_variables = non_trainable_weights

    def count_params(self) -> int:
        """The number of numbers in the weights."""
        return sum(w.numel() for w in self.weights)

    def get_weights(self) -> list:
        """The weights as NumPy arrays (copies)."""
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights) -> None:
        """Set the weights from arrays, in the order of ``get_weights``."""
        mine = self.weights
        weights = list(weights)
        if len(weights) != len(mine):
            raise EmberError(
                f"{self.name}.set_weights: expected {len(mine)} arrays, got {len(weights)}"
            )
        for w, value in zip(mine, weights):
            w.assign(np.asarray(value))

    # -- calling ------------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        """Make the weights for inputs of ``input_shape`` (batch size first, maybe None)."""
        self.built = True

    def call(self, inputs, training=None):
        raise NotImplementedError(f"{type(self).__name__}.call is not defined")

    def forward(self, inputs, training=None):
        return self(inputs, training=training)

    def __call__(self, inputs, training=None, **kwargs):
        x = as_input(inputs) if not isinstance(inputs, (list, tuple, dict)) else inputs
        if not self.built:
            shape = tuple(x.shape) if isinstance(x, Tensor) else None
            with _ops.init_scope():  # weights are made eagerly, even in tf.function
                self.build(shape)
            self.built = True
        if self._call_takes_training:
            out = self.call(x, training=training, **kwargs)
        else:
            out = self.call(x, **kwargs)
        if isinstance(out, Tensor):
            self._output_shape = (None, *tuple(out.shape)[1:])
        return out

    def compute_output_shape(self, input_shape) -> tuple:
        """The output shape for ``input_shape`` (found by running a batch of one)."""
        with ember.no_grad():
            x = ember.zeros(tuple(1 if s is None else s for s in input_shape))
            out = self(x, training=False)
        return (input_shape[0], *tuple(out.shape)[1:])

    @property
    def output_shape(self):
        if self._output_shape is None:
            raise EmberError(f"the layer {self.name!r} has not been called yet")
        return self._output_shape

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


def _has(items: list, x) -> bool:
    return any(x is y for y in items)


class InputLayer(Layer):
    """The input of a model: ``shape`` excludes the batch size."""

    def __init__(self, shape=None, batch_size=None, name=None, input_shape=None, **kwargs):
        shape = shape if shape is not None else input_shape
        super().__init__(name=name, input_shape=shape, **kwargs)

    def call(self, inputs):
        return inputs


def Input(shape=None, batch_size=None, name=None, dtype=None) -> InputLayer:  # noqa: N802
    """The input of a ``Sequential`` model: ``keras.Input(shape=(784,))`` (no batch size).

    >>> import ember.compat.tf as tf
    >>> m = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
    >>> m.built, m.output_shape
    (True, (None, 2))
    """
    if shape is None:
        raise EmberError("Input: give the shape of one example, e.g. keras.Input(shape=(784,))")
    return InputLayer(shape=tuple(shape), name=name)


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``: kernel ``(in, units)`` (glorot-uniform), bias
    zeros. Works on the last axis of inputs of any rank.

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.Dense(4)(tf.ones((5, 2, 3))).shape
    ember.Size([5, 2, 4])
    """

    def __init__(
        self,
        units: int,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        fan_in = input_shape[-1]
        self.kernel = self.add_weight("kernel", (fan_in, self.units), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)
        self.built = True

    def call(self, inputs):
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise ShapeError(
                f"Dense {self.name!r}: expected inputs with {self.kernel.shape[0]} features on "
                f"the last axis, got shape {tuple(inputs.shape)}"
            )
        out = ember.matmul(inputs, self.kernel)
        if self.use_bias:
            out = out + self.bias
        return out if self.activation is None else self.activation(out)

    def extra_repr(self) -> str:
        return f"units={self.units}, name={self.name!r}"


def _same_pads(size: int, k: int, s: int, d: int) -> tuple[int, int]:
    """TensorFlow's 'same' padding of one dimension: (before, after), the odd pixel after."""
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


class Conv2D(Layer):
    """2-D convolution over NHWC images (``data_format="channels_first"``: NCHW); kernel
    ``(kh, kw, in, filters)``, glorot-uniform; bias zeros; ``padding`` "valid" or "same".

    >>> import ember.compat.tf as tf
    >>> conv = tf.keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")
    >>> conv(tf.ones((2, 9, 9, 3))).shape, conv.kernel.shape
    (ember.Size([2, 5, 5, 8]), ember.Size([3, 3, 3, 8]))
    """

    def __init__(
        self,
        filters: int,
        kernel_size,
        strides=(1, 1),
        padding: str = "valid",
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "Conv2D kernel_size")
        self.strides = _pair(strides, "Conv2D strides")
        self.dilation_rate = _pair(dilation_rate, "Conv2D dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise EmberError(f"Conv2D: padding must be 'valid' or 'same', got {padding!r}")
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise EmberError(f"Conv2D: unknown data_format {data_format!r}")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        if len(input_shape) != 4:
            raise ShapeError(
                f"Conv2D {self.name!r}: expected 4-D inputs (batch, height, width, channels), "
                f"got shape {tuple(input_shape)}"
            )
        cin = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        kh, kw = self.kernel_size
        self.kernel = self.add_weight(
            "kernel", (kh, kw, cin, self.filters), self.kernel_initializer
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer)
        self.built = True

    def call(self, inputs):
        x = inputs.permute(0, 3, 1, 2) if self.data_format == "channels_last" else inputs
        if x.ndim != 4 or x.shape[1] != self.kernel.shape[2]:
            raise ShapeError(
                f"Conv2D {self.name!r}: expected {self.data_format} images with "
                f"{self.kernel.shape[2]} channels, got shape {tuple(inputs.shape)}"
            )
        w = self.kernel.permute(3, 2, 0, 1)
        padding = (0, 0)
        if self.padding == "same":
            (t, b), (left, r) = (
                _same_pads(x.shape[2], self.kernel_size[0], self.strides[0], self.dilation_rate[0]),
                _same_pads(x.shape[3], self.kernel_size[1], self.strides[1], self.dilation_rate[1]),
            )
            if t == b and left == r:
                padding = (t, left)
            else:
                x = F.pad(x, (left, r, t, b))
        out = F.conv2d(
            x, w, self.bias if self.use_bias else None, self.strides, padding, self.dilation_rate
        )
        if self.data_format == "channels_last":
            out = out.permute(0, 2, 3, 1)
        return out if self.activation is None else self.activation(out)

    def extra_repr(self) -> str:
        return (
            f"filters={self.filters}, kernel_size={self.kernel_size}, strides={self.strides}, "
            f"padding={self.padding!r}, name={self.name!r}"
        )


class _Pool2D(Layer):
    _fn = None

    def __init__(
        self, pool_size=(2, 2), strides=None, padding: str = "valid", data_format=None, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size, type(self).__name__ + " pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise EmberError(
                f"{type(self).__name__}: padding must be 'valid' or 'same', got {padding!r}"
            )
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        x = inputs.permute(0, 3, 1, 2) if self.data_format == "channels_last" else inputs
        if self.padding == "same":
            t, b = _same_pads(x.shape[2], self.pool_size[0], self.strides[0], 1)
            left, r = _same_pads(x.shape[3], self.pool_size[1], self.strides[1], 1)
            if t or b or left or r:
                x = self._pad(x, (left, r, t, b))
        out = self._pool(x)
        return out.permute(0, 2, 3, 1) if self.data_format == "channels_last" else out


class MaxPooling2D(_Pool2D):
    """Max over ``pool_size`` windows (default 2x2, stride = pool size), NHWC.

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.MaxPooling2D()(tf.ones((1, 5, 5, 2))).shape
    ember.Size([1, 2, 2, 2])
    """

    def _pad(self, x, pads):
        return F.pad(x, pads, value=-math.inf)

    def _pool(self, x):
        return F.max_pool2d(x, self.pool_size, self.strides)


class AveragePooling2D(_Pool2D):
    """Mean over ``pool_size`` windows (``padding="valid"`` only), NHWC.

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.AveragePooling2D()(tf.ones((1, 4, 4, 1))).shape
    ember.Size([1, 2, 2, 1])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.padding != "valid":
            raise EmberError("AveragePooling2D: only padding='valid' is supported")

    def _pool(self, x):
        return F.avg_pool2d(x, self.pool_size, self.strides)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


class Flatten(Layer):
    """Each example flattened to one dimension (row-major over NHWC, as Keras).

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.Flatten()(tf.ones((2, 3, 4, 5))).shape
    ember.Size([2, 60])
    """

    def call(self, inputs):
        return inputs.reshape(inputs.shape[0], -1)


class Reshape(Layer):
    """Each example reshaped to ``target_shape`` (the batch size stays).

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.Reshape((2, 3))(tf.ones((4, 6))).shape
    ember.Size([4, 2, 3])
    """

    def __init__(self, target_shape, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)

    def call(self, inputs):
        return inputs.reshape(inputs.shape[0], *self.target_shape)


class Dropout(Layer):
    """Zero each input with probability ``rate`` and scale the rest by ``1 / (1 - rate)``,
    only when called with ``training=True``.

    >>> import ember.compat.tf as tf
    >>> d = tf.keras.layers.Dropout(0.5)
    >>> d(tf.ones(4)).tolist(), sorted(set(d(tf.ones(100), training=True).tolist()))
    ([1.0, 1.0, 1.0, 1.0], [0.0, 2.0])
    """

    def __init__(self, rate: float, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise EmberError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        return F.dropout(inputs, self.rate, True)


class Activation(Layer):
    """Applies an activation (a name or a callable).

    >>> import ember.compat.tf as tf
    >>> tf.keras.layers.Activation("relu")(tf.constant([-1.0, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, activation, **kwargs) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation) or activations.linear

    def call(self, inputs):
        return self.activation(inputs)


class ReLU(Layer):
    """``max(x, 0)``."""

    def call(self, inputs):
        return F.relu(inputs)


class Softmax(Layer):
    """Softmax along ``axis`` (default the last)."""

    def __init__(self, axis: int = -1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return F.softmax(inputs, dim=self.axis)
