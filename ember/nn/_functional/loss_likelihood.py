"""Likelihood losses with PyTorch's formulas: Poisson and Gaussian negative log likelihood, and CTC
(connectionist temporal classification).
"""

from __future__ import annotations

import math

from ..._config import no_grad
from ..._errors import EmberIndexError, ShapeError
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from .loss_margin import _where
from .loss_reduction import _reduce, _reduction

_NEG = -1e30  # "log 0" kept finite, so unreachable CTC states give zero (not NaN) gradients


@_autocast_rule("poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of ``target`` under Poisson(rate): ``exp(input) - target*input``
    for log rates (``log_input``), else ``input - target*log(input + eps)``; ``full`` adds
    Stirling's term.

    >>> import ember
    >>> ember.nn.functional.poisson_nll_loss(ember.zeros(2), ember.ones(2))
    tensor(1.)
    """
    reduction = _reduction(size_average, reduce, reduction, "poisson_nll_loss")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = _where(big, target, target * 0 + 1)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + _where(big, stirling, stirling * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """``0.5 * (log(var) + (input - target)**2 / var)`` (+ ``0.5 log(2 pi)`` with ``full``);
    ``var`` is clamped to ``eps`` without blocking its gradient, as in PyTorch.

    >>> import ember
    >>> ember.nn.functional.gaussian_nll_loss(ember.zeros(2), ember.zeros(2), ember.ones(2))
    tensor(0.)
    """
    reduction = _reduction(None, None, reduction, "gaussian_nll_loss")
    if not isinstance(var, Tensor):
        var = input * 0 + float(var)
    if tuple(var.shape) != tuple(input.shape):
        last_is_one = var.ndim and tuple(input.shape[:-1]) == tuple(var.shape[:-1])
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (last_is_one and var.shape[-1] == 1):
            raise ShapeError(
                f"gaussian_nll_loss: var of shape {tuple(var.shape)} does not match input "
                f"{tuple(input.shape)} (same shape, one fewer dim, or a last dim of 1)"
            )
    with no_grad():
        if bool((var < 0).any().item()):
            raise ShapeError("gaussian_nll_loss: var has negative entry/entries")
    clamped = var + (var.clamp(min=eps) - var).detach()  # clamp forward, identity backward
    loss = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    m = a.maximum(b).maximum(c).detach()
    return m + ((a - m).exp() + (b - m).exp() + (c - m).exp()).log()


@_autocast_rule("ctc_loss")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss: minus the log of the summed probability of
    every alignment of each target to its input (the forward algorithm in log space, batched).

    ``log_probs`` (T, N, C) or (T, C) holds log-softmax outputs; ``targets`` are padded (N, S)
    or concatenated 1-D; ``reduction='mean'`` divides each loss by its target length first.

    >>> import ember
    >>> lp = ember.zeros(3, 1, 2).log_softmax(2)
    >>> round(ember.nn.functional.ctc_loss(lp, ember.tensor([[1]]), [3], [1]).item(), 4)
    0.2877
    """
    import numpy as np

    from ... import backend as _backend
    from ...functions import creation as C
    from ...functions.shape import cat

    reduction = _reduction(None, None, reduction, "ctc_loss")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise ShapeError(
            f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {tuple(log_probs.shape)}"
        )
    t_max, n, classes = lp.shape

    def host_ints(v):
        if isinstance(v, Tensor):
            v = _backend.to_device(v.detach()._data, _backend.CPU)
        return np.asarray(v, dtype=np.int64).reshape(-1)

    in_lens, tg_lens = host_ints(input_lengths), host_ints(target_lengths)
    if unbatched:
        tg = host_ints(targets).reshape(1, -1)
    elif targets.ndim == 1:
        flat = host_ints(targets)
        tg = np.zeros((n, max(int(tg_lens.max(initial=0)), 1)), np.int64)
        ends = np.cumsum(tg_lens)
        for i in range(n):
            tg[i, : tg_lens[i]] = flat[ends[i] - tg_lens[i] : ends[i]]
    else:
        tg = host_ints(targets).reshape(n, -1)
    if in_lens.size != n or tg_lens.size != n:
        raise ShapeError(
            f"ctc_loss: expected {n} input_lengths and target_lengths, got {in_lens.size} and "
            f"{tg_lens.size}"
        )
    if (in_lens > t_max).any() or (in_lens < 0).any():
        raise ShapeError(f"ctc_loss: input_lengths must be in [0, {t_max}], got {in_lens.tolist()}")
    if (tg_lens > tg.shape[1]).any():
        raise ShapeError(
            f"ctc_loss: target_lengths {tg_lens.tolist()} exceed the targets' length {tg.shape[1]}"
        )
    if not 0 <= blank < classes:  # (PyTorch's "blank must be in label range")
        raise EmberIndexError(
            f"ctc_loss: blank must be in label range [0, {classes}) of the {classes} classes "
            f"of log_probs {tuple(log_probs.shape)}, got blank={blank}"
        )
    used = np.arange(tg.shape[1]) < tg_lens[:, None]  # padding past a target's length: unread
    bad = used & ((tg < 0) | (tg >= classes))
    if bad.any():
        raise EmberIndexError(
            f"ctc_loss: targets must be class indices in [0, {classes}), got "
            f"{int(tg[bad][0])} (in target {int(np.nonzero(bad)[0][0])})"
        )
    tg = np.where(used, tg, blank)
    s_ext = 2 * tg.shape[1] + 1
    ext = np.full((n, s_ext), blank, np.int64)
    ext[:, 1::2] = tg
    skip = np.zeros((n, s_ext), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    device = lp.device
    ext_t = C.tensor(ext, device=device)
    skip_t = C.tensor(skip, device=device)
    x = lp.to(lp.dtype)
    emit = x.gather(2, ext_t.unsqueeze(0).expand(t_max, n, s_ext))  # (T, N, S')
    start = np.full((n, s_ext), False)
    start[:, 0] = True
    start[:, 1] = tg_lens > 0
    neg = C.full((n, s_ext), _NEG, dtype=x.dtype, device=device)
    alpha = _where(C.tensor(start, device=device), emit[0], neg)
    pad1 = C.full((n, 1), _NEG, dtype=x.dtype, device=device)
    pad2 = C.full((n, 2), _NEG, dtype=x.dtype, device=device)
    lengths = C.tensor(in_lens, device=device).reshape(n, 1)
    for t in range(1, t_max):
        prev1 = cat([pad1, alpha[:, :-1]], 1)
        prev2 = _where(skip_t, cat([pad2, alpha[:, :-2]], 1), neg)
        new = _logsumexp3(alpha, prev1, prev2) + emit[t]
        alpha = _where(lengths > t, new, alpha)
    last = C.tensor(2 * tg_lens, device=device).reshape(n, 1)
    end_blank = alpha.gather(1, last).squeeze(1)
    end_label = alpha.gather(1, (last - 1).clamp(min=0)).squeeze(1)
    end_label = _where(C.tensor(tg_lens > 0, device=device), end_label, end_label * 0 + _NEG)
    both = end_blank.maximum(end_label).detach()
    loss = -(both + ((end_blank - both).exp() + (end_label - both).exp()).log())
    impossible = (loss > -_NEG / 2) | (
        C.tensor(in_lens == 0, device=device) & C.tensor(tg_lens > 0, device=device)
    )
    loss = _where(impossible, loss * 0 + (0.0 if zero_infinity else float("inf")), loss)
    if zero_infinity:
        loss = _where(impossible, loss.detach() * 0, loss)
    if reduction == "mean":
        denom = C.tensor(np.maximum(tg_lens, 1), dtype=loss.dtype, device=device)
        return (loss / denom).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


__all__ = ["poisson_nll_loss", "gaussian_nll_loss", "ctc_loss"]
