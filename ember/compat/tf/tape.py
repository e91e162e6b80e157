"""``tf.GradientTape`` over ember's autograd.

ember records history on every op whose input requires grad, so a tape needs little of its
own: while a tape records, trainable Variables require grad (they are "watched
automatically") and so do the tensors given to ``watch``; when the last recording tape's block
ends they stop requiring grad, so code outside tapes records nothing, as in TensorFlow.
Which tapes record is each thread's own (a thread-local stack, like ember's modes): a
Variable requires grad for the threads whose tapes record, not for the others, and a tape's
``gradient`` nests only over the tapes of its own thread.
``gradient(target, sources)`` calls ``ember.autograd.grad``; with a non-persistent tape it then
detaches the target, so ``loss.numpy()`` works afterwards. A tape computes one set of
gradients unless ``persistent=True``; ``gradient`` called while another tape (or this
persistent one) is recording builds a differentiable result, so gradients of gradients work
with nested tapes. Inside ``tf.function`` the same code traces into the graph.

>>> import ember.compat.tf as tf
>>> x = tf.constant(3.0)
>>> with tf.GradientTape() as t2:
...     t2.watch(x)
...     with tf.GradientTape() as t1:
...         t1.watch(x)
...         y = x * x * x
...     dy = t1.gradient(y, x)
>>> float(dy), t2.gradient(dy, x)
(27.0, tensor(18.))
"""

from __future__ import annotations

import contextlib
import threading

import ember
from ember._config import set_grad_enabled
from ember._errors import EmberError
from ember._tensor import Tensor


class _TapeState(threading.local):
    def __init__(self) -> None:
        self.recording: list = []  # this thread's tapes with an open block, innermost last


_state = _TapeState()

# The tapes with an open block, every thread's. ``watch`` switches a tensor's own requires_grad
# flag, which all threads share, so a tape that ends leaves it on while another open tape, of
# any thread, watches the same tensor.
_open: dict = {}  # id(tape) -> tape
_open_lock = threading.Lock()


def _watched_elsewhere(t, tape) -> bool:
    """Whether an open tape other than ``tape`` (of any thread) watches ``t``."""
    with _open_lock:
        others = [o for o in _open.values() if o is not tape]
    return any(t is w for o in others for w in o._watched)


def _flatten(x, out: list):
    if isinstance(x, Tensor):
        out.append(x)
        return ("t",)
    if isinstance(x, dict):
        return ("d", type(x), [(k, _flatten(v, out)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return ("s", type(x), [_flatten(v, out) for v in x])
    if x is None:
        return ("n",)
    raise EmberError(
        f"GradientTape: expected tensors or Variables (or lists/dicts of them), got "
        f"{type(x).__name__}"
    )


def _unflatten(s, it):
    if s[0] == "t":
        return next(it)
    if s[0] == "n":
        return None
    if s[0] == "d":
        return s[1]((k, _unflatten(v, it)) for k, v in s[2])
    items = [_unflatten(v, it) for v in s[2]]
    return s[1](items) if s[1] in (list, tuple) else s[1](*items)


def _is_trainable_variable(t) -> bool:
    from .variables import _is_trainable

    return _is_trainable(t)


class GradientTape:
    """Records operations for automatic differentiation (``with tf.GradientTape() as tape:``).

    >>> import ember.compat.tf as tf
    >>> w = tf.Variable([[1.0], [2.0]])
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum(tf.matmul(tf.ones((3, 2)), w) ** 2)
    >>> tape.gradient(loss, [w])
    [tensor([[18.],
            [18.]])]
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = bool(persistent)
        self._watched: list = []  # tensors watch() switched requires_grad on for
        self._used = False
        self._grad_mode = None

    def __enter__(self) -> GradientTape:
        self._grad_mode = set_grad_enabled(True)
        self._grad_mode.__enter__()
        _state.recording.append(self)
        with _open_lock:
            _open[id(self)] = self
        for t in self._watched:
            t._requires_grad = True
        return self

    def __exit__(self, *exc) -> bool:
        recording = _state.recording
        if self in recording:
            recording.remove(self)
        if self not in recording:
            with _open_lock:
                _open.pop(id(self), None)
        for t in self._watched:
            if not _watched_elsewhere(t, None):
                t._requires_grad = False
        if self._grad_mode is not None:
            self._grad_mode.__exit__(*exc)
            self._grad_mode = None
        return False

    def watch(self, tensor) -> None:
        """Record operations on ``tensor`` (a tensor, or a list/dict of them) from now on.
        Integer tensors are ignored, as their gradient is None."""
        leaves: list = []
        _flatten(tensor, leaves)
        for t in leaves:
            if not t.dtype.is_floating_point or t._node is not None:
                continue  # integers have no gradient; results of recorded ops are watched
            if any(t is w for w in self._watched) or _is_trainable_variable(t):
                continue
            t.requires_grad_(True)
            self._watched.append(t)

    def watched_variables(self) -> tuple:
        """The tensors ``watch`` was called on (trainable Variables are always watched)."""
        return tuple(self._watched)

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops in this block are not recorded (``ember.no_grad()``)."""
        with ember.no_grad():
            yield

    def reset(self) -> None:
        """Forget what was watched (ops already recorded stay in their tensors' history)."""
        self._release()
        self._used = False

    def _release(self) -> None:
        for t in self._watched:
            if not _watched_elsewhere(t, self):
                t._requires_grad = False
        self._watched.clear()

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Gradients of ``target`` (summed if it is a list or not a scalar) with respect to each
        of ``sources`` (a tensor or a list/dict of them), in the same structure. A source the
        target does not depend on, or that is not floating, gives None
        (``unconnected_gradients="zero"``: zeros).

        >>> import ember.compat.tf as tf
        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape(persistent=True) as tape:
        ...     tape.watch(x)
        ...     y = tf.reduce_sum(x * x)
        >>> tape.gradient(y, {"x": x}), tape.gradient(y, [x, tf.constant(1.0)])
        ({'x': tensor([2., 4.])}, [tensor([2., 4.]), None])
        """
        if self._used and not self.persistent:
            raise EmberError(
                "GradientTape.gradient can only be called once on a non-persistent tape; use "
                "tf.GradientTape(persistent=True) to compute several sets of gradients"
            )
        if unconnected_gradients not in ("none", "zero") and str(unconnected_gradients) not in (
            "UnconnectedGradients.NONE",
            "UnconnectedGradients.ZERO",
        ):
            raise EmberError(
                f"GradientTape.gradient: unconnected_gradients must be 'none' or 'zero', got "
                f"{unconnected_gradients!r}"
            )
        zero = "zero" in str(unconnected_gradients).lower()
        self._used = True
        targets: list = []
        _flatten(target, targets)
        srcs: list = []
        structure = _flatten(sources, srcs)
        gouts = None
        if output_gradients is not None:
            gouts = []
            _flatten(output_gradients, gouts)
        outs, grads_out = [], []
        for i, t in enumerate(targets):
            if t._requires_grad:
                outs.append(t)
                grads_out.append(gouts[i] if gouts is not None else ember.ones_like(t))
        # Sources that were watched (or are trainable Variables) require grad again for the
        # call: the tape's block may have ended. Trainable Variables do while this thread
        # records, so the call records with this tape on this thread's stack.
        recording = _state.recording
        wanted, switched = [], []
        for s in srcs:
            if s._requires_grad:
                wanted.append(s)
            elif s._node is None and _is_trainable_variable(s):
                wanted.append(s)
            elif s._node is None and any(s is w for w in self._watched):
                s._requires_grad = True
                switched.append(s)
                wanted.append(s)
        found: dict = {}
        create = bool(self.persistent and self in recording) or any(
            tape is not self for tape in recording
        )
        recording.append(self)
        try:
            if outs and wanted:
                res = ember.autograd.grad(
                    outs,
                    wanted,
                    grads_out,
                    retain_graph=self.persistent or create,
                    create_graph=create,
                    allow_unused=True,
                )
                found = {id(s): g for s, g in zip(wanted, res)}
        finally:
            recording.pop()
            for s in switched:
                s._requires_grad = False
        if not self.persistent and not create:
            for t in outs:
                try:
                    t.detach_()
                except Exception:  # noqa: BLE001  (a view: leave it as it is)
                    pass
        result = []
        for s in srcs:
            g = found.get(id(s))
            if g is None and zero:
                g = ember.zeros_like(s.detach())
            result.append(g)
        if not self.persistent:
            self._release()
        return _unflatten(structure, iter(result))

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


__all__ = ["GradientTape"]
