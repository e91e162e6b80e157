"""Keras optimizers: ``SGD``, ``Adam``, ``RMSprop``, with Keras' update rules and defaults.

``apply_gradients(zip(grads, variables))`` updates the Variables in place (without recording
gradients), so it works the same eagerly and inside ``tf.function``; the step count
(``iterations``), the learning rate and the per-variable slots are ember tensors, so a compiled
step reads and writes them on every run. Adam is Keras' (``epsilon`` 1e-7, added to
``sqrt(v)`` with the bias corrections folded into the step size), which differs slightly from
``ember.optim.Adam``.

>>> import ember.compat.tf as tf
>>> w = tf.Variable([1.0, 2.0])
>>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
>>> with tf.GradientTape() as tape:
...     loss = tf.reduce_sum(w * w)
>>> _ = opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
>>> w.numpy(), int(opt.iterations)
(array([0.8, 1.6], dtype=float32), 1)
"""

from __future__ import annotations

import ember
from ember._errors import EmberError
from ember._tensor import Tensor

from .. import ops as _ops


class Optimizer:
    """Base class: subclasses define ``_update(variable, gradient, slots)`` and ``_slots``."""

    _slot_names: tuple = ()

    def __init__(self, learning_rate=0.001, name: str | None = None, **kwargs) -> None:
        for key in kwargs:
            if key in ("clipnorm", "clipvalue", "global_clipnorm") and kwargs[key] is None:
                continue
            raise EmberError(f"{type(self).__name__}: unsupported argument {key!r}")
        self.name = name or type(self).__name__
        self._lr = ember.tensor(float(learning_rate), dtype=ember.float32)
        self.iterations = ember.zeros((), dtype=ember.int64)
        self._state: dict = {}  # id(variable) -> (variable, {slot: tensor})

    @property
    def learning_rate(self) -> float:
        return float(self._lr.item())

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._lr.fill_(float(value))

    lr = learning_rate

    def build(self, var_list) -> None:
        """Make the slots (momentum, moments) of ``var_list`` now rather than on first use."""
        for v in var_list:
            self._slots_of(v)

    def _slots_of(self, v) -> dict:
        entry = self._state.get(id(v))
        if entry is None or entry[0] is not v:
            shape = tuple(v.shape)
            with _ops.init_scope():  # slots are made eagerly, even in tf.function
                slots = {k: ember.zeros(shape, dtype=v.dtype) for k in self._slot_names}
            entry = self._state[id(v)] = (v, slots)
        return entry[1]

    @property
    def variables(self) -> list:
        """The optimizer's own state: the step count and every slot."""
        out = [self.iterations]
        for _, slots in self._state.values():
            out += list(slots.values())
        return out

    def apply_gradients(self, grads_and_vars, name: str | None = None):
        """Update each Variable with its gradient (pairs with a None gradient are skipped);
        returns ``iterations``."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise EmberError(
                f"{self.name}.apply_gradients: no gradients given for any variable (all None); "
                "check that the loss depends on the variables and was computed under the tape"
            )
        with ember.no_grad():
            self._prepare()
            for g, v in pairs:
                if not isinstance(v, Tensor):
                    raise EmberError(f"{self.name}.apply_gradients: {v!r} is not a Variable")
                if g.dtype != v.dtype:
                    g = g.to(v.dtype)
                self._update(v, g.detach(), self._slots_of(v))
            self.iterations.add_(1)
        return self.iterations

    def minimize(self, loss, var_list, tape=None):
        """``loss`` a callable (or a tensor with its ``tape``): one step on ``var_list``."""
        from ..tape import GradientTape

        var_list = list(var_list() if callable(var_list) else var_list)
        if callable(loss):
            with GradientTape() as tape:
                value = loss()
            grads = tape.gradient(value, var_list)
        elif tape is not None:
            grads = tape.gradient(loss, var_list)
        else:
            raise EmberError(
                f"{self.name}.minimize: give a callable loss, or the loss and its tape"
            )
        return self.apply_gradients(zip(grads, var_list))

    def _prepare(self) -> None:
        pass

    def _update(self, v, g, slots) -> None:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "learning_rate": self.learning_rate}


class SGD(Optimizer):
    """``v -= lr * g``; with ``momentum``: ``m = momentum * m - lr * g; v += m`` (Nesterov:
    ``v += momentum * m - lr * g``). Default learning rate 0.01."""

    def __init__(
        self,
        learning_rate=0.01,
        momentum: float = 0.0,
        nesterov: bool = False,
        name: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        if momentum < 0:
            raise EmberError(f"SGD: momentum must be >= 0, got {momentum}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        self._slot_names = ("momentum",) if self.momentum else ()

    def _update(self, v, g, slots) -> None:
        step = g * self._lr
        if not self.momentum:
            v.sub_(step)
            return
        m = slots["momentum"]
        m.mul_(self.momentum).sub_(step)
        if self.nesterov:
            v.add_(m * self.momentum - step)
        else:
            v.add_(m)


class Adam(Optimizer):
    """Keras' Adam: ``m += (g - m) * (1 - beta_1)``, ``u += (g^2 - u) * (1 - beta_2)``,
    ``v -= lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(u) + epsilon)``;
    ``epsilon`` 1e-7; ``amsgrad`` keeps the running maximum of ``u``."""

    def __init__(
        self,
        learning_rate=0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        amsgrad: bool = False,
        name: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)
        self._slot_names = ("m", "v", "vhat") if amsgrad else ("m", "v")

    def _prepare(self) -> None:
        t = (self.iterations + 1).to(ember.float32)
        b1_power = ember.pow(ember.tensor(self.beta_1), t)
        b2_power = ember.pow(ember.tensor(self.beta_2), t)
        self._alpha = self._lr * (1 - b2_power).sqrt() / (1 - b1_power)

    def _update(self, v, g, slots) -> None:
        m, u = slots["m"], slots["v"]
        m.add_((g - m) * (1 - self.beta_1))
        u.add_((g * g - u) * (1 - self.beta_2))
        if self.amsgrad:
            vhat = slots["vhat"]
            vhat.copy_(ember.maximum(vhat, u))
            u = vhat
        v.sub_(m * self._alpha / (u.sqrt() + self.epsilon))


class RMSprop(Optimizer):
    """Keras' RMSprop: ``u = rho * u + (1 - rho) * g^2``, ``v -= lr * g / sqrt(u + epsilon)``
    (``centered`` subtracts the squared mean gradient; ``momentum`` accumulates the steps)."""

    def __init__(
        self,
        learning_rate=0.001,
        rho: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-7,
        centered: bool = False,
        name: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)
        names = ["velocity"]
        if self.momentum:
            names.append("momentum")
        if self.centered:
            names.append("average_gradient")
        self._slot_names = tuple(names)

    def _update(self, v, g, slots) -> None:
        u = slots["velocity"]
        u.mul_(self.rho).add_(g * g * (1 - self.rho))
        denom = u
        if self.centered:
            avg = slots["average_gradient"]
            avg.mul_(self.rho).add_(g * (1 - self.rho))
            denom = u - avg * avg
        step = g * self._lr / (denom + self.epsilon).sqrt()
        if self.momentum:
            m = slots["momentum"]
            m.mul_(self.momentum).add_(step)
            v.sub_(m)
        else:
            v.sub_(step)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop}


def get(identifier) -> Optimizer:
    """An optimizer for a name (``"sgd"``, ``"adam"``, ``"rmsprop"``, default settings) or an
    instance.

    >>> import ember.compat.tf as tf
    >>> type(tf.keras.optimizers.get("adam")).__name__
    'Adam'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise EmberError(
        f"unknown optimizer {identifier!r}; give 'sgd', 'adam', 'rmsprop' or an optimizer"
    )
