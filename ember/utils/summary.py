"""``ember.summary``: a model's layers, their output shapes and parameter counts, as a table.

The model runs once on a zero input of the given shape (batch dimension included, like
torchinfo's ``input_size``), in eval mode and without gradients, so BatchNorm statistics and
dropout masks are left untouched; each module's forward output is recorded by a hook.

>>> import ember
>>> from ember import nn
>>> model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(64, 10))
>>> s = ember.summary(model, (1, 1, 4, 4), print_fn=None)
>>> s.total_params, s.output_shape
(690, (1, 10))
>>> print(s)
Layer (type)   Output shape   Param #
=====================================
0 (Conv2d)     (1, 4, 4, 4)        40
1 (ReLU)       (1, 4, 4, 4)         0
2 (Flatten)    (1, 64)              0
3 (Linear)     (1, 10)            650
=====================================
Total params: 690
Trainable params: 690
Non-trainable params: 0
Input (1, 1, 4, 4) -> output (1, 10); parameters 2.7 KiB
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .._config import no_grad
from .._errors import ShapeError
from .._tensor import Tensor

__all__ = ["ModelSummary", "summary"]


@dataclass
class SummaryRow:
    """One module call: its dotted path, type, output shape and directly owned parameters."""

    name: str
    kind: str
    depth: int
    output_shape: object
    params: int | None  # None: a container that owns no parameters itself


@dataclass
class ModelSummary:
    """What ``summary`` found; ``str()`` gives the table."""

    rows: list[SummaryRow] = field(default_factory=list)
    input_shape: tuple = ()
    output_shape: object = None
    total_params: int = 0
    trainable_params: int = 0
    param_bytes: int = 0

    def __str__(self) -> str:
        names = [("  " * r.depth) + f"{r.name} ({r.kind})" for r in self.rows]
        shapes = [_shape_text(r.output_shape) for r in self.rows]
        counts = ["--" if r.params is None else f"{r.params:,}" for r in self.rows]
        wn = max([len("Layer (type)"), *map(len, names)])
        ws = max([len("Output shape"), *map(len, shapes)])
        wc = max([len("Param #"), *map(len, counts)])
        rule = "=" * (wn + ws + wc + 6)
        lines = [f"{'Layer (type)':<{wn}}   {'Output shape':<{ws}}   {'Param #':>{wc}}", rule]
        lines += [f"{n:<{wn}}   {s:<{ws}}   {c:>{wc}}" for n, s, c in zip(names, shapes, counts)]
        frozen = self.total_params - self.trainable_params
        lines += [
            rule,
            f"Total params: {self.total_params:,}",
            f"Trainable params: {self.trainable_params:,}",
            f"Non-trainable params: {frozen:,}",
            f"Input {_shape_text(self.input_shape)} -> output {_shape_text(self.output_shape)}; "
            f"parameters {_size_text(self.param_bytes)}",
        ]
        return "\n".join(lines)


def summary(
    model,
    input_shape: Sequence[int],
    *,
    dtype=None,
    device=None,
    print_fn: Callable[[str], object] | None = print,
) -> ModelSummary:
    """Print (through ``print_fn``; ``None`` prints nothing) and return ``model``'s summary.

    ``input_shape`` includes the batch dimension. Modules are listed in the order they ran,
    indented by depth; a module called twice appears twice.

    >>> import ember
    >>> s = ember.summary(ember.nn.Linear(3, 2), (5, 3), print_fn=None)
    >>> s.total_params, s.rows[0].output_shape
    (8, (5, 2))
    """
    from ..nn.module import Module

    if not isinstance(model, Module):
        raise TypeError(f"summary: expected an ember.nn.Module, got {type(model).__name__}")
    shape = tuple(int(d) for d in input_shape)
    if any(d < 0 for d in shape):
        raise ShapeError(f"summary: input_shape must be non-negative sizes, got {shape}")
    first = next(iter(model.parameters()), None)
    if dtype is None:
        dtype = first.dtype if first is not None and first.is_floating_point() else None
    if device is None and first is not None:
        device = first.device

    from ..functions.creation import zeros

    names = {id(m): n for n, m in model.named_modules()}
    result = ModelSummary(input_shape=shape)
    handles = []

    open_rows: list[SummaryRow] = []

    def start(module, args):  # pre-hooks fire in call order: a container before its children
        name = names.get(id(module), "?") or type(module).__name__
        depth = 0 if module is model else name.count(".")
        own = sum(p.numel() for p in module.parameters(recurse=False))
        params = None if module._modules and own == 0 else own
        row = SummaryRow(name, type(module).__name__, depth, None, params)
        result.rows.append(row)
        open_rows.append(row)

    def end(module, args, output):
        open_rows.pop().output_shape = _shapes(output)

    for module in model.modules():
        if module is not model or not model._modules:
            handles.append(module.register_forward_pre_hook(start))
            handles.append(module.register_forward_hook(end))
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with no_grad():
            output = model(zeros(shape, dtype=dtype, device=device))
    finally:
        for handle in handles:
            handle.remove()
        for m, training in modes:
            m.training = training
    result.output_shape = _shapes(output)
    params = list(model.parameters())
    result.total_params = sum(p.numel() for p in params)
    result.trainable_params = sum(p.numel() for p in params if p.requires_grad)
    result.param_bytes = sum(p.numel() * p.element_size() for p in params)
    if print_fn is not None:
        print_fn(str(result))
    return result


def _shapes(value):
    if isinstance(value, Tensor):
        return tuple(value.shape)
    if isinstance(value, (tuple, list)):
        return type(value)(_shapes(v) for v in value)
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return type(value).__name__


def _shape_text(shape) -> str:
    if isinstance(shape, tuple) and all(isinstance(d, int) for d in shape):
        return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return str(shape)


def _size_text(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
