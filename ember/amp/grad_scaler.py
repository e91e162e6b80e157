"""``ember.amp.GradScaler``: loss scaling for float16 training, as ``torch.amp.GradScaler``.

``scale(loss)`` multiplies by the scale; ``step(optimizer)`` unscales the gradients (unless
``unscale_`` did), and skips the step when one is inf or NaN; ``update()`` halves the scale after
a skipped step and doubles it after ``growth_interval`` clean ones. The scale, the growth tracker
and the inf flags are 0-d tensors on the gradients' device, and ``update`` is ember ops with no
host read. In eager mode ``step`` reads the flag once, as PyTorch does; inside ``ember.compile``
it doesn't: the optimizer's update is always traced and then undone where the flag is set (the
parameters and the optimizer's state tensors are restored with ``where``), so a compiled step
has no host round trip. ``last_step_skipped`` says whether the latest ``step`` was skipped (so a
training loop can keep an LR scheduler in step). Compile the whole step, ``update()`` included.

>>> import ember
>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([w], lr=0.1)
>>> scaler = ember.amp.GradScaler("cpu", init_scale=4.0)
>>> scaler.scale((w * w).sum()).backward()
>>> w.grad                      # scaled
tensor([8., 8.])
>>> scaler.step(opt); scaler.update()
>>> w.detach(), scaler.get_scale(), scaler.last_step_skipped
(tensor([0.8000, 0.8000]), 4.0, False)
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum

from .. import dtypes as _dt
from .._config import no_grad, state, tracing
from .._tensor import Tensor


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _full(value, dtype, device) -> Tensor:
    from ..functions.creation.filled import full

    with tracing(None):  # concrete state even when first made inside ember.compile
        return full((), value, dtype=dtype, device=device)


def _compiling() -> bool:
    tracer = state.tracer
    return tracer is not None and not getattr(tracer, "define", False)


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip steps that overflowed.

    >>> import ember
    >>> ember.amp.GradScaler("cpu", enabled=False).scale(ember.tensor(3.0))
    tensor(3.)
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = str(device).split(":")[0]
        self._enabled = bool(enabled)
        if self._device == "cuda" and self._enabled:
            from ..backend import cuda

            if not cuda.is_available():
                warnings.warn(
                    "ember.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Tensor | None = None
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: dict = defaultdict(_fresh)
        self._last_found_inf: Tensor | bool = False

    # -- scaling ----------------------------------------------------------------------------
    def _lazy_init(self, device) -> None:
        self._scale = _full(self._init_scale, _dt.float32, device)
        self._growth_tracker = _full(self._init_growth_tracker, _dt.int32, device)
        self._skipped = _full(0.0, _dt.float32, device)  # the latest compiled step's flag

    def _check(self, funcname: str) -> tuple:
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None or self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them) times the scale.

        >>> import ember
        >>> ember.amp.GradScaler("cpu", init_scale=8.0).scale(ember.tensor(0.5))
        tensor(4.)
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    # -- unscaling --------------------------------------------------------------------------
    def _unscale_grads_(self, optimizer, inv_scale: Tensor, allow_fp16: bool) -> dict:
        from ..functions.compare import isfinite
        from ..functions.elementwise import maximum

        found: dict = {}
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = g.device
                    bad = (~isfinite(g).all()).float()
                    found[dev] = bad if dev not in found else maximum(found[dev], bad)
                    g.mul_(inv_scale.to(dev))
        if not found and self._scale is not None:
            found[self._scale.device] = _full(0.0, _dt.float32, self._scale.device)
        return found

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place), once per ``update``.

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(1)); opt = ember.optim.SGD([w], lr=1.0)
        >>> s = ember.amp.GradScaler("cpu", init_scale=4.0)
        >>> s.scale(w.sum()).backward(); s.unscale_(opt); w.grad
        tensor([1.])
        """
        if not self._enabled:
            return
        self._check("unscale_")
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        with no_grad():
            inv_scale = self._scale.double().reciprocal().float()
        st["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        st["stage"] = OptState.UNSCALED

    # -- stepping ---------------------------------------------------------------------------
    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient is inf or NaN; returns its result (None when
        skipped).

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(1)); opt = ember.optim.SGD([w], lr=1.0)
        >>> s = ember.amp.GradScaler("cpu")
        >>> s.scale(w.sum() * float("inf")).backward(); s.step(opt); s.update()
        >>> w.detach(), s.last_step_skipped, s.get_scale()
        (tensor([1.]), True, 32768.0)
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not st["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        flags = list(st["found_inf_per_device"].values())
        found = flags[0]
        for f in flags[1:]:
            found = found + f.to(found.device)
        if _compiling():
            retval = _masked_step(optimizer, found, args, kwargs)
            with no_grad():
                _write(self._skipped, (found > 0).float())
            self._last_found_inf = self._skipped
        else:
            skipped = bool(found.sum().item())
            retval = None if skipped else optimizer.step(*args, **kwargs)
            self._last_found_inf = skipped
        st["stage"] = OptState.STEPPED
        return retval

    @property
    def last_step_skipped(self) -> bool:
        """Whether the latest ``step`` skipped the optimizer (inf or NaN gradients). After a
        compiled step this reads the device flag (one host read, when asked)."""
        f = self._last_found_inf
        return bool(f.item()) if isinstance(f, Tensor) else bool(f)

    def update(self, new_scale=None) -> None:
        """Back off after a skipped step, grow after ``growth_interval`` clean ones (on the
        device, no host read); or set the scale to ``new_scale``.

        >>> import ember
        >>> s = ember.amp.GradScaler("cpu", init_scale=2.0)
        >>> _ = s.scale(ember.ones(1)); s.update(5.0); s.get_scale()
        5.0
        """
        if not self._enabled:
            return
        scale, tracker = self._check("update")
        with no_grad():
            if new_scale is not None:
                if isinstance(new_scale, float):
                    scale.fill_(new_scale)
                else:
                    reason = (
                        "new_scale should be a float or a 1-element ember Tensor with "
                        "requires_grad=False."
                    )
                    if not isinstance(new_scale, Tensor):
                        raise TypeError(reason)
                    if (
                        new_scale.device.type != self._device
                        or new_scale.numel() != 1
                        or new_scale.requires_grad
                    ):
                        raise ValueError(reason)
                    scale.copy_(new_scale.reshape(()))
            else:
                flags = [
                    f.to(scale.device)
                    for s in self._per_optimizer_states.values()
                    for f in s["found_inf_per_device"].values()
                ]
                if not flags:
                    raise AssertionError("No inf checks were recorded prior to update.")
                found = flags[0]
                for f in flags[1:]:
                    found = found + f
                _update_scale_(
                    scale,
                    tracker,
                    found,
                    self._growth_factor,
                    self._backoff_factor,
                    self._growth_interval,
                )
        self._per_optimizer_states = defaultdict(_fresh)

    # -- settings and state -----------------------------------------------------------------
    def get_scale(self) -> float:
        """The scale as a Python float (a host read; 1.0 when disabled).

        >>> import ember
        >>> ember.amp.GradScaler("cpu").get_scale()
        65536.0
        """
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor the scale grows by.

        >>> import ember
        >>> ember.amp.GradScaler("cpu").get_growth_factor()
        2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor.

        >>> import ember
        >>> s = ember.amp.GradScaler("cpu"); s.set_growth_factor(3.0)
        """
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale backs off by.

        >>> import ember
        >>> ember.amp.GradScaler("cpu").get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor.

        >>> import ember
        >>> s = ember.amp.GradScaler("cpu"); s.set_backoff_factor(0.25)
        """
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """Clean steps between growths.

        >>> import ember
        >>> ember.amp.GradScaler("cpu").get_growth_interval()
        2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval.

        >>> import ember
        >>> s = ember.amp.GradScaler("cpu"); s.set_growth_interval(10)
        """
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        """Whether scaling is on.

        >>> import ember
        >>> ember.amp.GradScaler("cpu", enabled=False).is_enabled()
        False
        """
        return self._enabled

    def state_dict(self) -> dict:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker (empty when disabled).

        >>> import ember
        >>> sorted(ember.amp.GradScaler("cpu").state_dict())
        ['_growth_tracker', 'backoff_factor', 'growth_factor', 'growth_interval', 'scale']
        """
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Load what ``state_dict`` gave.

        >>> import ember
        >>> s = ember.amp.GradScaler("cpu"); s.load_state_dict({**s.state_dict(), "scale": 8.0})
        >>> s.get_scale()
        8.0
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        with no_grad():
            if self._scale is not None:
                self._scale.fill_(self._init_scale)
            if self._growth_tracker is not None:
                self._growth_tracker.fill_(self._init_growth_tracker)

    # -- ember.compile's protocol: the scale and tracker are graph state --------------------
    def _compile_tensors(self) -> list:
        if self._scale is None:
            return []
        return [
            ("_scale", self._scale),
            ("_growth_tracker", self._growth_tracker),
            ("_skipped", self._skipped),
        ]

    def _compile_signature(self) -> tuple:
        return (self._enabled, self._scale is None, self._growth_interval)

    def _compile_describe(self, old: tuple, new: tuple) -> str:
        return "GradScaler's settings or state changed"


def _update_scale_(scale, tracker, found, growth, backoff, interval) -> None:
    """PyTorch's ``_amp_update_scale_`` in ember ops (products in float64, rounded to float32)."""
    from ..functions.compare import isfinite
    from ..functions.creation.filled import zeros_like
    from ..functions.elementwise import where

    inf = found > 0
    succ = tracker + 1
    grow = succ == interval
    grown = (scale.double() * growth).float()
    grown = where(isfinite(grown), grown, scale)
    backed = (scale.double() * backoff).float()
    _write(scale, where(inf, backed, where(grow, grown, scale)))
    _write(tracker, where(inf | grow, zeros_like(succ), succ))


def _write(t: Tensor, value: Tensor) -> None:
    """``t[...] = value`` (a plain write when traced: ``copy_`` would read ``t``'s old value,
    which may be inf after an overflowed step)."""
    from ..functions.inplace import apply_inplace

    apply_inplace(t, lambda _old: value, name="GradScaler")


def _masked_step(optimizer, found: Tensor, args, kwargs):
    """The optimizer's step traced unconditionally, then undone where ``found`` is set: the
    parameters and their state tensors go back to their values before the step."""
    from ..functions.elementwise import where

    saved = []
    with no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if optimizer.state.get(p) is None:
                    with tracing(None):
                        optimizer.state[p] = optimizer.init_state(p, group)
                entries = optimizer.state[p]
                optimizer.state_to_device(p, entries)  # where the traced step keeps them
                saved.append((p, p.clone()))
                for v in entries.values():
                    if isinstance(v, Tensor):
                        saved.append((v, v.clone()))
    retval = optimizer.step(*args, **kwargs)
    with no_grad():
        skip = found > 0
        for t, old in saved:
            _write(t, where(skip, old, t))
    return retval


__all__ = ["GradScaler", "OptState"]
