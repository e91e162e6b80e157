"""Moving and casting a Module: ``to``, ``cuda``, ``float``..., and ``apply`` over submodules.

Parameters (and their gradients) keep their identity when moved or cast: their data is
swapped, so optimizers that hold them stay valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import dtypes as _dt
from ..._config import no_grad
from ..._tensor import Tensor

if TYPE_CHECKING:
    from .registration import Module


class ModuleConversion:
    """The conversion half of :class:`Module`: ``_apply`` a function to every tensor."""

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Apply ``fn`` to every parameter, gradient and buffer.

        Parameters (and their gradients) keep their identity: their data is swapped for the
        result's, so optimizers that hold them stay valid. Buffers are replaced.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if applied is not param:
                param._data = applied._data
            grad = param._grad
            if grad is not None:
                with no_grad():
                    applied = fn(grad)
                if applied is not grad:
                    grad._data = applied._data
        for key, buf in list(self._buffers.items()):
            if buf is not None:
                with no_grad():
                    self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module.

        >>> import ember
        >>> m = ember.nn.Module(); m.a = ember.nn.Module()
        >>> _ = m.apply(lambda mod: print(type(mod).__name__))
        Module
        Module
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers in place: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Only floating-point tensors change dtype.

        >>> import ember
        >>> m = ember.nn.Module(); m.w = ember.nn.Parameter(ember.ones(1))
        >>> m.register_buffer("n", ember.tensor(3))
        >>> w = m.w; _ = m.to(ember.float64)
        >>> m.w is w, m.w.dtype, m.n.dtype
        (True, ember.float64, ember.int64)
        """
        from ...functions.conversion import _parse_to

        dtype, device, _ = _parse_to(args, dict(kwargs))
        if dtype is not None:
            dtype = _dt.to_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(
                    "nn.Module.to only accepts floating point dtypes, but got desired "
                    f"dtype={dtype}"
                )

        def convert(t: Tensor) -> Tensor:
            out = t
            if device is not None:
                out = out.to(device)
            if dtype is not None and t.is_floating_point():
                out = out.to(dtype)
            return out

        return self._apply(convert)

    def cuda(self, device=None) -> Module:
        """Move all parameters and buffers to a GPU (``cuda:0`` unless given)."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        """Move all parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers (integer ones too) to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floats(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floats(_dt.float32)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._cast_floats(_dt.float64)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_floats(_dt.float16)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._cast_floats(_dt.bfloat16)

    def to_empty(self, *, device=None, recurse: bool = True) -> Module:
        """Give parameters and buffers new, uninitialized storage on ``device``."""
        from ...functions.creation import empty

        def fresh(t: Tensor) -> Tensor:
            return empty(tuple(t.shape), dtype=t.dtype, device=device or t.device)

        return self._apply(fresh, recurse=recurse)

    def share_memory(self) -> Module:
        """A no-op kept for PyTorch compatibility (ember tensors are process-local)."""
        return self
