"""``repr`` of a sparse tensor, laid out as PyTorch's ``torch/_tensor_str.py`` does, with the
indices and values printed by ember's dense printing (``ember/_repr.py``).

>>> import ember
>>> ember.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3), dtype=ember.float64)
tensor(indices=tensor([[0, 1],
                       [2, 0]]),
       values=tensor([3., 4.]),
       size=(2, 3), nnz=2, dtype=ember.float64, layout=ember.sparse_coo)
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._repr import _add_suffixes, tensor_str


def _part(prefix: str, t, indent: int) -> str:
    body = tensor_str(t, indent + len(prefix))
    if t.numel() == 0:
        body += f", size={tuple(t.shape)}"
    return prefix + body + ")"


def sparse_repr(s) -> str:
    """PyTorch's text for a sparse COO tensor, ``torch`` spelled ``ember``."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if s.device.type != "cpu":
        suffixes.append(f"device='{s.device}'")
    suffixes += [f"size={tuple(s.shape)}", f"nnz={s._nnz()}"]
    dt = s.dtype
    if dt not in (_dt.get_default_dtype(), _dt.int64, _dt.bool_):
        suffixes.append(f"dtype={dt!r}")
    suffixes.append(f"layout={s.layout!r}")
    if s.grad_fn is not None:
        suffixes.append(f"grad_fn=<{s.grad_fn.name()}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    body = (
        _part("indices=tensor(", s._indices().detach(), indent)
        + ",\n"
        + " " * indent
        + _part("values=tensor(", s._values().detach(), indent)
    )
    first = ",\n" + " " * indent + suffixes[0]  # PyTorch starts a sparse tensor's on a new line
    return _add_suffixes(prefix + body + first, suffixes[1:], indent)


__all__ = ["sparse_repr"]
