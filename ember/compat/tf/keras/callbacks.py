"""Keras callbacks: ``Callback`` (hooks ``fit`` calls), ``History`` (what ``fit`` returns),
``LambdaCallback``, ``EarlyStopping``.

>>> import ember.compat.tf as tf
>>> h = tf.keras.callbacks.History()
>>> h.on_epoch_end(0, {"loss": 0.5}); h.history
{'loss': [0.5]}
"""

from __future__ import annotations

import numpy as np


class Callback:
    """Override any of ``on_train_begin/end(logs)``, ``on_epoch_begin/end(epoch, logs)``,
    ``on_train_batch_begin/end(batch, logs)``; ``self.model`` is the model being fit."""

    def __init__(self) -> None:
        self.model = None
        self.params: dict = {}

    def set_model(self, model) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_begin(self, logs=None) -> None: ...

    def on_train_end(self, logs=None) -> None: ...

    def on_epoch_begin(self, epoch: int, logs=None) -> None: ...

    def on_epoch_end(self, epoch: int, logs=None) -> None: ...

    def on_train_batch_begin(self, batch: int, logs=None) -> None: ...

    def on_train_batch_end(self, batch: int, logs=None) -> None: ...


class History(Callback):
    """``history``: a dict from each logged name (``loss``, ``val_loss``, metrics) to its list
    of per-epoch values; ``epoch``: the epoch numbers."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict = {}
        self.epoch: list = []

    def on_train_begin(self, logs=None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ) -> None:
        super().__init__()
        for name, fn in [
            ("on_epoch_begin", on_epoch_begin),
            ("on_epoch_end", on_epoch_end),
            ("on_train_begin", on_train_begin),
            ("on_train_end", on_train_end),
            ("on_train_batch_begin", on_train_batch_begin),
            ("on_train_batch_end", on_train_batch_end),
        ]:
            if fn is not None:
                setattr(self, name, fn)


class EarlyStopping(Callback):
    """Stop ``fit`` when ``monitor`` (default ``val_loss``) has not improved by ``min_delta``
    for ``patience`` epochs; ``restore_best_weights`` puts the best weights back."""

    def __init__(
        self,
        monitor: str = "val_loss",
        min_delta: float = 0.0,
        patience: int = 0,
        mode: str = "auto",
        restore_best_weights: bool = False,
        **kwargs,
    ) -> None:
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.sign = 1.0 if mode == "min" else -1.0
        self.restore_best_weights = restore_best_weights

    def on_train_begin(self, logs=None) -> None:
        self.wait, self.best, self.best_weights, self.stopped_epoch = 0, np.inf, None, 0

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        value = (logs or {}).get(self.monitor)
        if value is None:
            return
        score = self.sign * value
        if score < self.best - self.min_delta:
            self.best, self.wait = score, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)
