"""Fused optimizer updates: one CuPy ``ElementwiseKernel`` per parameter and step.

The NumPy overrides in ``ember.optim`` make 6-13 passes over memory (Adam: scale the moments,
add, square, sqrt, divide, ...); on a GPU each pass is a kernel launch, so a small model's step
is launch-bound. Each kernel here reads the parameter, its gradient and state once and writes
them once. The formulas are the NumPy ones term for term, in the same order (a GPU may fuse a
multiply and an add into one FMA, so results can differ in the last bit); the NumPy ``update``
in ``ember.optim`` (ember ops) stays the reference the tests compare against.

The kernels are the CUDA overrides (``ember.backend.overrides``) of ``Adam.update`` (and so
AdamW's), ``SGD.update`` and ``RMSprop.update``, registered below by the optimizers' qualified
names (the backend imports nothing from ``ember.optim``). Each declines (``NotImplemented``,
the NumPy rule runs) where ``xp`` builds no kernels, for SGD's first momentum step (which copies
the gradient into a new buffer), and unless the parameter, its gradient and its state arrays
share one dtype among float32, float64 and bfloat16 (``serves``). float16 is left to the NumPy
rule on purpose: a kernel that computes in float32 and rounds once disagrees with it beyond
rounding there, because float16's range makes the result depend on where it rounds (``g * g``
underflows to 0 for ``|g| < 2.4e-4``, ``eps = 1e-8`` is 0 in float16, and the rule then divides
by 0 as PyTorch's CPU code does); bfloat16 has float32's range, so only rounding differs.

Hyperparameters are passed as scalars of the accumulation type (float32, or float64 for float64
parameters), rounded as NumPy rounds Python floats against float32 arrays; variants that change
which arrays take part (AMSGrad, Nesterov, centered RMSprop, momentum) are separate kernels.

>>> "exp_avg" not in adam_source(amsgrad=False, decoupled=False)[2]
True
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..overrides import register
from ..scalars import power
from . import acc_dtype, cached, fused

# -- sources: (in_params, out_params, operation); "A" is the accumulation type ---------------


def adam_source(amsgrad: bool, decoupled: bool) -> tuple[str, str, str]:
    """Adam / AdamW, optionally with AMSGrad."""
    ins = "G g, A b1, A omb1, A b2, A omb2, A wd, A decay, A step_size, A bc2_sqrt, A eps"
    outs = "T p, T m, T v" + (", T vmax" if amsgrad else "")
    decay = "pp = pp * decay;" if decoupled else "if (wd != 0) gg = gg + wd * pp;"
    ams = (
        "A vm0 = (A)vmax;\n"
        "A vm = (vm0 != vm0 || vv != vv) ? vm0 + vv : (vm0 > vv ? vm0 : vv);\n"
        "vmax = (T)vm;\n"
        "vv = vm;\n"
        if amsgrad
        else ""
    )
    op = (
        "A gg = (A)g;\n"
        "A pp = (A)p;\n"
        f"{decay}\n"
        "A mm = (A)m * b1 + gg * omb1;\n"
        "A vv = (A)v * b2 + gg * gg * omb2;\n"
        "m = (T)mm;\n"
        "v = (T)vv;\n"
        f"{ams}"
        "A denom = sqrt(vv) / bc2_sqrt + eps;\n"
        "p = (T)(pp - (mm / denom) * step_size);\n"
    )
    return ins, outs, op


def sgd_source(momentum: bool, nesterov: bool) -> tuple[str, str, str]:
    """SGD, plain or with a momentum buffer (after its first step, which copies the gradient)."""
    if not momentum:
        return (
            "G g, A wd, A lr",
            "T p",
            "A gg = (A)g;\nA pp = (A)p;\nif (wd != 0) gg = gg + wd * pp;\np = (T)(pp - gg * lr);\n",
        )
    step = "A d = gg + momentum * bb;" if nesterov else "A d = bb;"
    op = (
        "A gg = (A)g;\n"
        "A pp = (A)p;\n"
        "if (wd != 0) gg = gg + wd * pp;\n"
        "A bb = (A)buf * momentum + damp * gg;\n"
        "buf = (T)bb;\n"
        f"{step}\n"
        "p = (T)(pp - d * lr);\n"
    )
    return "G g, A wd, A momentum, A damp, A lr", "T p, T buf", op


def rmsprop_source(centered: bool, momentum: bool) -> tuple[str, str, str]:
    """RMSprop, optionally centered and with momentum."""
    outs = "T p, T sq" + (", T ga" if centered else "") + (", T buf" if momentum else "")
    if centered:
        avg = "A a = (A)ga + oma * (gg - (A)ga);\nga = (T)a;\nA avg = sqrt(s - a * a);\n"
    else:
        avg = "A avg = sqrt(s);\n"
    if momentum:
        upd = "A b = (A)buf * mom + gg / avg;\nbuf = (T)b;\np = (T)(pp - lr * b);\n"
    else:
        upd = "p = (T)(pp - lr * (gg / avg));\n"
    op = (
        "A gg = (A)g;\n"
        "A pp = (A)p;\n"
        "if (wd != 0) gg = gg + wd * pp;\n"
        "A s = (A)sq * alpha + oma * gg * gg;\n"
        "sq = (T)s;\n"
        f"{avg}"
        "avg = avg + eps;\n"
        f"{upd}"
    )
    return "G g, A alpha, A oma, A wd, A eps, A lr, A mom", outs, op


def specialize(src: tuple[str, str, str], acc) -> tuple[str, str, str]:
    """Fix the accumulation type ``A``: scalar parameters get the NumPy name (float32 /
    float64), the operation a ``typedef``."""
    ins, outs, op = src
    acc = np.dtype(acc)
    ctype = "double" if acc == np.float64 else "float"
    ins = ", ".join(
        f"{acc.name} {p.split()[1]}" if p.split()[0] == "A" else p for p in ins.split(", ")
    )
    return ins, outs, f"typedef {ctype} A;\n" + op


def _kernel(xp, name: str, variant: tuple, source, dtype):
    """The kernel of ``source(*variant)`` (built on first use) for ``dtype``'s accumulation."""
    acc = acc_dtype(dtype)

    def build():
        ins, outs, op = specialize(source(*variant), acc)
        return xp.ElementwiseKernel(ins, outs, op, f"ember_{name}")

    return cached(("optim", name, variant, acc), build)


# -- updates on arrays (what ember.optim's ``update`` calls on the GPU) ---------------------


def adam_scalars(group: dict, t: float, dtype) -> list:
    """Adam's scalar kernel arguments after ``g`` (``adam_source``'s order) for step ``t``, in
    the accumulation type of ``dtype``: one parameter's kernel and ``optim_many``'s take them."""
    lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    a = acc_dtype(dtype).type
    return [
        a(b1),
        a(1.0 - b1),
        a(b2),
        a(1.0 - b2),
        a(wd),
        a(1.0 - lr * wd),
        a(lr / (1.0 - power(b1, t))),
        a(math.sqrt(1.0 - power(b2, t))),
        a(eps),
    ]


def sgd_scalars(group: dict, dtype) -> list:
    """SGD's scalar kernel arguments after ``g`` (``sgd_source``'s order), plain or with
    momentum as the group says."""
    a = acc_dtype(dtype).type
    wd, momentum, lr = group["weight_decay"], group["momentum"], group["lr"]
    if not momentum:
        return [a(wd), a(lr)]
    return [a(wd), a(momentum), a(1.0 - group["dampening"]), a(lr)]


def adam(xp, p, g, state: dict, group: dict, decoupled: bool) -> None:
    """One Adam / AdamW step of ``p`` (in place), as ``ember.optim.Adam.update``."""
    t = float(state["step"]._data)  # the optimizer loop has advanced it
    amsgrad = bool(group["amsgrad"])
    k = _kernel(xp, "adam", (amsgrad, decoupled), adam_source, p.dtype)
    args = [g, *adam_scalars(group, t, p.dtype), p]
    args += [state["exp_avg"]._data, state["exp_avg_sq"]._data]
    if amsgrad:
        args.append(state["max_exp_avg_sq"]._data)
    k(*args)


def sgd(xp, p, g, state: dict, group: dict) -> bool:
    """One SGD step of ``p`` in place; False (nothing done) for the first momentum step, which
    the NumPy code takes (it copies the gradient into a new buffer)."""
    momentum = bool(group["momentum"])
    bufs = []
    if momentum:
        buf = state["momentum_buffer"]
        if buf is None:
            return False
        bufs.append(buf._data)
    k = _kernel(xp, "sgd", (momentum, momentum and bool(group["nesterov"])), sgd_source, p.dtype)
    k(g, *sgd_scalars(group, p.dtype), p, *bufs)
    return True


def rmsprop(xp, p, g, state: dict, group: dict) -> None:
    """One RMSprop step of ``p`` (in place), as ``ember.optim.RMSprop.update``."""
    alpha = group["alpha"]
    centered, momentum = bool(group["centered"]), group["momentum"] > 0
    k = _kernel(xp, "rmsprop", (centered, momentum), rmsprop_source, p.dtype)
    a = acc_dtype(p.dtype).type
    args = [
        g,
        a(alpha),
        a(1.0 - alpha),
        a(group["weight_decay"]),
        a(group["eps"]),
        a(group["lr"]),
        a(group["momentum"]),
        p,
        state["square_avg"]._data,
    ]
    if centered:
        args.append(state["grad_avg"]._data)
    if momentum:
        args.append(state["momentum_buffer"]._data)
    k(*args)


# -- the overrides: ``fn(opt, xp, p, g, state, group)``, NotImplemented to decline ----------


_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", ml_dtypes.bfloat16))


def serves(p, g, state: dict) -> bool:
    """Whether the kernels take this update: ``p``, ``g`` and the state tensors shaped like
    ``p`` in one dtype among float32, float64 and bfloat16 (see the module docstring for
    float16; the step count is a scalar of its own type).

    >>> import ember
    >>> x = np.zeros(2, np.float32)
    >>> t = ember.from_numpy(x)
    >>> serves(x, x, {"exp_avg": t}), serves(x, x.astype(np.float16), {})
    (True, False)
    """
    dt = p.dtype
    if dt not in _DTYPES or g.dtype != dt:
        return False
    return all(v.dtype.np == dt for v in state.values() if v is not None and v.shape == p.shape)


def _serves(xp, p, g, state) -> bool:
    return fused(xp) and serves(p, g, state)


@register("ember.optim.adam.Adam", "cuda")
def adam_update(opt, xp, p, g, state: dict, group: dict):
    """``Adam.update`` (and AdamW's) in one kernel."""
    if not _serves(xp, p, g, state):
        return NotImplemented
    adam(xp, p, g, state, group, group["decoupled_weight_decay"])
    return None


@register("ember.optim.sgd.SGD", "cuda")
def sgd_update(opt, xp, p, g, state: dict, group: dict):
    """``SGD.update`` in one kernel (not its first momentum step)."""
    if not _serves(xp, p, g, state) or not sgd(xp, p, g, state, group):
        return NotImplemented
    return None


from . import optim_many  # noqa: E402  (it reads the sources above)

adam_update.many = optim_many.adam_many  # Optimizer.step: many parameters a launch
sgd_update.many = optim_many.sgd_many


@register("ember.optim.rmsprop.RMSprop", "cuda")
def rmsprop_update(opt, xp, p, g, state: dict, group: dict):
    """``RMSprop.update`` in one kernel."""
    if not _serves(xp, p, g, state):
        return NotImplemented
    rmsprop(xp, p, g, state, group)
    return None


__all__ = [
    "adam",
    "sgd",
    "rmsprop",
    "adam_update",
    "sgd_update",
    "rmsprop_update",
    "serves",
    "adam_source",
    "sgd_source",
    "rmsprop_source",
    "specialize",
]
