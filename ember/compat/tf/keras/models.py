"""Keras models: ``Sequential`` and subclassed ``Model`` with ``compile`` / ``fit`` /
``evaluate`` / ``predict`` / ``summary``.

``fit`` runs the Keras training step eagerly (forward with ``training=True``, the compiled
loss, ``GradientTape`` gradients of ``trainable_variables``, ``optimizer.apply_gradients``),
over batches of ``batch_size`` (default 32; the last may be smaller), shuffled each epoch
with ember's generator unless ``shuffle=False``. Its ``History`` records per epoch the mean of
the batch losses weighted by batch size (``loss``), each metric over the epoch, and with
``validation_data`` (or ``validation_split``, the last fraction of the data) ``val_loss`` and
``val_<metric>``, as Keras does.

>>> import numpy as np, ember.compat.tf as tf
>>> tf.random.set_seed(0)
>>> model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
...                              tf.keras.layers.Dense(1)])
>>> model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
>>> x, y = np.random.rand(64, 4), np.random.rand(64, 1)
>>> h = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
>>> len(h.history["loss"]), model.predict(x, verbose=0).shape
(3, (64, 1))
"""

from __future__ import annotations

import sys
import time

import numpy as np

import ember
from ember._errors import EmberError, ShapeError
from ember._tensor import Tensor

from ..tape import GradientTape
from . import callbacks as _callbacks
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from .layers import InputLayer, Layer, as_input


def _length(x) -> int:
    return int(x.shape[0])


def _take(x: Tensor, start: int, stop: int, order: Tensor | None) -> Tensor:
    return x[start:stop] if order is None else x[order[start:stop]]


class Model(Layer):
    """A model: subclass it, make layers in ``__init__`` and define ``call(inputs,
    training=None)``; then ``compile`` and ``fit`` as any Keras model.

    >>> import ember.compat.tf as tf
    >>> class MLP(tf.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = tf.keras.layers.Dense(16, activation="relu")
    ...         self.out = tf.keras.layers.Dense(3)
    ...     def call(self, x):
    ...         return self.out(self.hidden(x))
    >>> m = MLP()
    >>> m(tf.ones((2, 5))).shape, len(m.trainable_variables)
    (ember.Size([2, 3]), 4)
    """

    def __init__(self, *args, **kwargs) -> None:
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise EmberError(
                "Model(inputs, outputs): the functional API is not supported; use "
                "keras.Sequential or subclass keras.Model and define call()"
            )
        super().__init__(**kwargs)
        self.optimizer = None
        self.compiled_loss = None
        self.compiled_metrics: list = []
        self.stop_training = False
        self.history = None

    @property
    def layers(self) -> list:
        """The layers directly inside the model, in order."""
        return [m for m in self.children() if isinstance(m, Layer)]

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """The layer called ``name`` (or at ``index``)."""
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise EmberError(f"{self.name}: no layer named {name!r}")

    # -- compile ------------------------------------------------------------------------------
    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        metrics=None,
        loss_weights=None,
        weighted_metrics=None,
        run_eagerly=None,
        steps_per_execution=None,
        jit_compile=None,
        **kwargs,
    ) -> None:
        """Set the optimizer (an instance or ``"sgd"`` / ``"adam"`` / ``"rmsprop"``), the loss
        (an instance, a name, or a function) and the metrics to report."""
        if kwargs:
            raise EmberError(f"compile: unexpected keyword argument '{next(iter(kwargs))}'")
        if loss_weights is not None or weighted_metrics is not None:
            raise EmberError("compile: loss_weights and weighted_metrics are not supported")
        self.optimizer = _optimizers.get(optimizer)
        self.compiled_loss = None if loss is None else _losses.get(loss)
        self.loss = loss
        self.compiled_metrics = [_metrics.get(m, self.compiled_loss) for m in metrics or []]

    @property
    def metrics_names(self) -> list:
        return ["loss"] + [m.name for m in self.compiled_metrics]

    def _check_compiled(self, what: str) -> None:
        if self.optimizer is None or self.compiled_loss is None:
            raise EmberError(
                f"{what}: the model must be compiled with an optimizer and a loss first: "
                "model.compile(optimizer=..., loss=...)"
            )

    # -- steps --------------------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The compiled loss of ``y_pred`` against ``y``."""
        return self.compiled_loss(y, y_pred, sample_weight)

    def train_step(self, x, y):
        """One training step on a batch; returns the loss and the predictions (no history)."""
        variables = self.trainable_variables
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred)
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return loss.detach(), y_pred.detach()

    def test_step(self, x, y):
        """Loss and predictions for a batch, without training."""
        with ember.no_grad():
            y_pred = self(x, training=False)
            return self.compute_loss(x, y, y_pred), y_pred

    # -- data ---------------------------------------------------------------------------------
    def _prepare(self, x, y, what: str):
        x = as_input(x)
        if y is None:
            raise EmberError(f"{what}: give the targets y along with x")
        y = as_input(y)
        if _length(x) != _length(y):
            raise ShapeError(
                f"{what}: x has {_length(x)} examples but y has {_length(y)} "
                f"(shapes {tuple(x.shape)} and {tuple(y.shape)})"
            )
        return x, y

    def _batches(self, x, y, batch_size, shuffle: bool):
        if y is None and not isinstance(x, (Tensor, np.ndarray)):
            for xb, yb in x:  # an iterable of (x, y) batches, such as an ember DataLoader
                yield as_input(xb), as_input(yb)
            return
        n = _length(x)
        order = ember.randperm(n) if shuffle else None
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            yield (
                _take(x, start, stop, order),
                (None if y is None else _take(y, start, stop, order)),
            )

    def _reset_metrics(self) -> None:
        for m in self.compiled_metrics:
            m.reset_state()

    def _epoch_logs(self, total: float, count: int) -> dict:
        """The mean loss over ``count`` samples, then each metric's result."""
        logs = {"loss": total / max(count, 1)}
        for m in self.compiled_metrics:
            logs[m.name] = float(m.result())
        return logs

    def _run_eval(self, x, y, batch_size: int) -> dict:
        self._reset_metrics()
        total, count = 0.0, 0
        for xb, yb in self._batches(x, y, batch_size, False):
            loss, y_pred = self.test_step(xb, yb)
            n = _length(xb)
            total += float(loss) * n
            count += n
            for m in self.compiled_metrics:
                m.update_state(yb, y_pred)
        return self._epoch_logs(total, count)

    # -- fit / evaluate / predict --------------------------------------------------------------
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs: int = 1,
        verbose="auto",
        callbacks=None,
        validation_split: float = 0.0,
        validation_data=None,
        shuffle: bool = True,
        initial_epoch: int = 0,
        **kwargs,
    ):
        """Train for ``epochs`` passes over ``(x, y)`` (arrays or tensors; or ``x`` an
        iterable of ``(x, y)`` batches); returns the ``History``."""
        if kwargs:
            raise EmberError(f"fit: unexpected keyword argument '{next(iter(kwargs))}'")
        self._check_compiled("fit")
        batch_size = int(batch_size or 32)
        iterable = y is None and x is not None and not isinstance(x, (Tensor, np.ndarray))
        if not iterable:
            x, y = self._prepare(x, y, "fit")
        if validation_split and not iterable:
            n = _length(x)
            split = int(n * (1 - validation_split))
            validation_data = (x[split:], y[split:])
            x, y = x[:split], y[:split]
        if validation_data is not None:
            if len(validation_data) != 2:
                raise EmberError("fit: validation_data must be (x_val, y_val)")
            xv, yv = self._prepare(*validation_data, "fit (validation_data)")
        history = _callbacks.History()
        cbs = [history, *(callbacks or [])]
        steps = None if iterable else -(-_length(x) // batch_size)
        for cb in cbs:
            cb.set_model(self)
            cb.set_params({"epochs": epochs, "steps": steps, "verbose": verbose})
        if not iterable and not self.built:
            self(x[:1])  # build the layers before the optimizer sees the variables
        self.optimizer.build(self.trainable_variables)
        verbose = 1 if verbose == "auto" else int(verbose)
        self.stop_training = False
        for cb in cbs:
            cb.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            start_time = time.perf_counter()
            for cb in cbs:
                cb.on_epoch_begin(epoch)
            self._reset_metrics()
            total, count = 0.0, 0
            for step, (xb, yb) in enumerate(self._batches(x, y, batch_size, shuffle)):
                for cb in cbs:
                    cb.on_train_batch_begin(step)
                loss, y_pred = self.train_step(xb, yb)
                n = _length(xb)
                total += float(loss) * n
                count += n
                for m in self.compiled_metrics:
                    m.update_state(yb, y_pred)
                for cb in cbs:
                    cb.on_train_batch_end(step, {"loss": total / count})
            logs = self._epoch_logs(total, count)
            if validation_data is not None:
                val = self._run_eval(xv, yv, batch_size)
                logs.update({"val_" + k: v for k, v in val.items()})
            if verbose:
                shown = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
                took = time.perf_counter() - start_time
                print(f"Epoch {epoch + 1}/{epochs}", file=sys.stdout)
                print(f"{step + 1}/{step + 1} - {took:.0f}s - {shown}", file=sys.stdout)
            for cb in cbs:
                cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        for cb in cbs:
            cb.on_train_end()
        self.history = history
        return history

    def evaluate(
        self, x=None, y=None, batch_size=None, verbose="auto", return_dict: bool = False, **kwargs
    ):
        """The loss (and metrics) over ``(x, y)``: a float if there are no metrics, else
        ``[loss, metric...]`` (a dict with ``return_dict=True``)."""
        self._check_compiled("evaluate")
        x, y = self._prepare(x, y, "evaluate")
        logs = self._run_eval(x, y, int(batch_size or 32))
        if verbose not in (0, "auto") or verbose == 1:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), file=sys.stdout)
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", **kwargs) -> np.ndarray:
        """The model's outputs for ``x`` (``training=False``) as a NumPy array."""
        x = as_input(x)
        outs = []
        with ember.no_grad():
            for xb, _ in self._batches(x, None, int(batch_size or 32), False):
                outs.append(self(xb, training=False).numpy(force=True))
        return np.concatenate(outs) if outs else np.zeros((0,), np.float32)

    def train_on_batch(self, x, y):
        """One training step on ``(x, y)``; the loss (``[loss, metric...]`` with metrics)."""
        self._check_compiled("train_on_batch")
        x, y = self._prepare(x, y, "train_on_batch")
        if not self.built:
            self(x[:1])
        self._reset_metrics()
        loss, y_pred = self.train_step(x, y)
        for m in self.compiled_metrics:
            m.update_state(y, y_pred)
        values = [float(loss)] + [float(m.result()) for m in self.compiled_metrics]
        return values[0] if len(values) == 1 else values

    def test_on_batch(self, x, y):
        """The loss (and metrics) on one batch, without training."""
        self._check_compiled("test_on_batch")
        x, y = self._prepare(x, y, "test_on_batch")
        values = list(self._run_eval(x, y, _length(x)).values())
        return values[0] if len(values) == 1 else values

    def predict_on_batch(self, x) -> np.ndarray:
        """The outputs for one batch as a NumPy array."""
        with ember.no_grad():
            return self(as_input(x), training=False).numpy(force=True)

    # -- summary ------------------------------------------------------------------------------
    def summary(self, line_length: int | None = None, positions=None, print_fn=None) -> None:
        """Print a table of the layers, their output shapes and numbers of parameters."""
        if not self.built:
            raise EmberError(
                f"summary: the model {self.name!r} has not yet been built; build it by calling "
                "build(input_shape), by calling it on a batch of data, or by giving the first "
                "layer an input_shape (or starting with keras.Input)"
            )
        print_fn = print_fn or print
        width = line_length or 65
        cols = [int(width * 0.45), int(width * 0.85), width]
        lines = [f'Model: "{self.name}"', "_" * width]
        lines.append(_row(["Layer (type)", "Output Shape", "Param #"], cols))
        lines.append("=" * width)
        for i, layer in enumerate(self.layers):
            shape = "?" if layer._output_shape is None else str(layer._output_shape)
            lines.append(
                _row(
                    [f"{layer.name} ({type(layer).__name__})", shape, str(layer.count_params())],
                    cols,
                )
            )
            lines.append(("=" if i == len(self.layers) - 1 else "_") * width)
        if not self.layers:
            lines.append("=" * width)
        trainable = sum(w.numel() for w in self.trainable_weights)
        total = self.count_params()
        lines += [
            f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}",
            "_" * width,
        ]
        for line in lines:
            print_fn(line)


def _row(fields: list, cols: list) -> str:
    out = ""
    for field, stop in zip(fields, cols):
        out += " " + field if not out else field
        out = out[: stop - 1].ljust(stop)
    return out.rstrip()


class Sequential(Model):
    """A stack of layers, each feeding the next. The model is built (weights made) as soon
    as the input shape is known: from a leading ``keras.Input(shape=...)``, the first layer's
    ``input_shape``, ``build(input_shape)``, or the first call.

    >>> import ember.compat.tf as tf
    >>> tf.keras.backend.clear_session()  # restart the automatic layer names
    >>> model = tf.keras.Sequential([
    ...     tf.keras.layers.Dense(64, activation="relu", input_shape=(784,)),
    ...     tf.keras.layers.Dropout(0.2),
    ...     tf.keras.layers.Dense(10),
    ... ])
    >>> model.summary()  # doctest: +NORMALIZE_WHITESPACE
    Model: "sequential"
    _________________________________________________________________
     Layer (type)                Output Shape              Param #
    =================================================================
     dense (Dense)               (None, 64)                50240
    _________________________________________________________________
     dropout (Dropout)           (None, 64)                0
    _________________________________________________________________
     dense_1 (Dense)             (None, 10)                650
    =================================================================
    Total params: 50,890
    Trainable params: 50,890
    Non-trainable params: 0
    _________________________________________________________________
    """

    def __init__(self, layers=None, name: str | None = None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self._stack: list = []
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list:
        return list(self._stack)

    def add(self, layer: Layer) -> None:
        """Put ``layer`` on top of the stack."""
        if not isinstance(layer, Layer):
            raise EmberError(f"Sequential.add: expected a keras layer, got {type(layer).__name__}")
        if isinstance(layer, InputLayer):
            if self._stack:
                raise EmberError("Sequential.add: an Input can only come first")
            self._input_shape = layer._input_shape
        else:
            if not self._stack and self._input_shape is None:
                self._input_shape = layer._input_shape
            self._stack.append(layer)
            self.add_module(str(len(self._stack) - 1), layer)
        if self._input_shape is not None and self._stack:
            self.build(self._input_shape)

    def build(self, input_shape=None) -> None:
        """Make every layer's weights for inputs of ``input_shape`` (batch size first)."""
        if input_shape is None:
            input_shape = self._input_shape
        if input_shape is None:
            raise EmberError("Sequential.build: give the input shape, e.g. build((None, 784))")
        input_shape = (None, *tuple(input_shape)[1:])
        self._input_shape = input_shape
        with ember.no_grad():
            x = ember.zeros(tuple(1 if s is None else s for s in input_shape))
            for layer in self._stack:
                x = layer(x, training=False)
        self._output_shape = (None, *tuple(x.shape)[1:])
        self.built = True

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._stack:
            x = layer(x, training=training)
        return x

    def pop(self) -> Layer:
        """Remove the top layer."""
        layer = self._stack.pop()
        delattr(self, str(len(self._stack)))
        return layer


__all__ = ["Model", "Sequential"]
