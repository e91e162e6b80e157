"""Fused optimizer updates: Adam/AdamW and SGD steps as one numba loop over the parameter.

``optimizer.step()`` in a compiled function records one ``OptimizerUpdate`` node per parameter;
it calls the optimizer's own ``update`` on the arrays, which for Adam is ~13 NumPy passes over
memory. ``fuse_optimizer_updates`` swaps those nodes (only for ``Adam``, ``AdamW`` and ``SGD``
whose ``update`` is not overridden) for ``FusedOptimizerUpdate``: with numba installed it runs
the same arithmetic, in the same order and precision (no fast-math: results equal NumPy's), in
one loop; without numba, before the kernel is compiled, on the first step (state is created)
and for anything unusual (non-contiguous arrays, ``maximize``, other dtypes), it calls
``update`` exactly as ``OptimizerUpdate`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import _caches
from ...backend.arrays import writeable
from ...optim.adam import Adam
from ...optim.sgd import SGD
from ..ir import Graph
from ..trace import OptimizerUpdate
from . import _jit
from ._util import clone

_ADAM_BODY = """
def sig(t, g):
    a = rw(t, 2)
    return types.void(a, g(t, 2), a, a, a, *[getattr(types, t)] * 9, types.int64)


@njit([sig(t, G) for t in ("float32", "float64")], cache=True, nogil=True, error_model="numpy")
def NAME(p, g, m, v, vmax, b1, c1, b2, c2, bc2, eps, step, wd, decay, flags):
    # flags: 1 coupled weight decay, 2 decoupled weight decay, 4 amsgrad
    for i in range(p.shape[0]):
        for j in range(p.shape[1]):
            gi = g[i, j]
            pi = p[i, j]
            if flags & 2:
                pi = pi * decay
            elif flags & 1:
                gi = gi + wd * pi
            mi = m[i, j] * b1 + gi * c1
            vi = v[i, j] * b2 + (gi * gi) * c2
            m[i, j] = mi
            v[i, j] = vi
            if flags & 4:
                vm = vmax[i, j]
                if not (vm >= vi):
                    vm = vi
                vmax[i, j] = vm
                vi = vm
            d = np.sqrt(vi) / bc2 + eps
            d = mi / d
            d = d * step
            p[i, j] = pi - d
"""

_SGD_BODY = """
def sig(t, g):
    a = rw(t, 2)
    return types.void(a, g(t, 2), a, *[getattr(types, t)] * 4, types.int64)


@njit([sig(t, G) for t in ("float32", "float64")], cache=True, nogil=True, error_model="numpy")
def NAME(p, g, buf, lr, wd, momentum, damp, flags):
    # flags: 1 weight decay, 2 momentum, 4 nesterov, 8 dampening
    for i in range(p.shape[0]):
        for j in range(p.shape[1]):
            gi = g[i, j]
            pi = p[i, j]
            if flags & 1:
                gi = gi + wd * pi
            if flags & 2:
                b = buf[i, j] * momentum
                if flags & 8:
                    b = b + damp * gi
                else:
                    b = b + gi
                buf[i, j] = b
                if flags & 4:
                    gi = gi + momentum * b
                else:
                    gi = b
            p[i, j] = pi - gi * lr
"""


def _source(body: str) -> str:
    """Two kernels from one body: ``kernel`` for a contiguous gradient (a vectorized loop) and
    ``kernel_strided`` for any layout (the transpose of a matrix product)."""
    parts = [body.split("\n\n\n", 1)[0]]  # sig()
    rest = body.split("\n\n\n", 1)[1]
    parts += [rest.replace("G)", "ro)").replace("NAME", "kernel")]
    parts += [rest.replace("G)", "ra)").replace("NAME", "kernel_strided")]
    return _jit.HEADER + "\n\n".join(parts)


_ADAM_SRC = _source(_ADAM_BODY)
_SGD_SRC = _source(_SGD_BODY)


def _flat(a):
    """``a`` as a 2-D C-contiguous writeable view (rows, the rest), or None."""
    if type(a) is not np.ndarray or not a.flags.c_contiguous or not writeable(a):
        return None
    return a.reshape(_rows(a.shape))


def _rows(shape):
    return (shape[0], -1) if len(shape) >= 2 and shape[0] else (1, -1)


@dataclass(frozen=True, eq=False)
class FusedOptimizerUpdate(OptimizerUpdate):
    """``OptimizerUpdate`` running Adam/AdamW/SGD's update as one numba kernel when it can."""

    def forward(self, xp, p, g):
        if xp is np and p.dtype.kind == "f" and p.dtype.itemsize >= 4 and g.dtype == p.dtype:
            opt = self.optimizer
            st = opt.state.get(self.param)
            if st is not None and not self.group.get("maximize"):
                k = _kernel(type(opt))
                if k is not None and k.fn is not None:
                    fp = _flat(p)  # g may be strided (a transposed product): read as it is
                    fg = g.reshape(fp.shape) if fp is not None and g.shape == p.shape else None
                    if fg is not None:
                        run = _adam if isinstance(opt, Adam) else _sgd
                        fn = k.fn if fg.flags.c_contiguous else k.module.kernel_strided
                        if run(fn, opt, fp, fg, st, self.group):
                            return p
        return OptimizerUpdate.forward(self, xp, p, g)


def _adam(fn, opt, p, g, st, group) -> bool:
    m, v = _flat(st["exp_avg"]), _flat(st["exp_avg_sq"])
    if m is None or v is None or m.dtype != p.dtype or v.dtype != p.dtype:
        return False
    flags = 0
    vmax = v
    if group["amsgrad"]:
        vmax = _flat(st["max_exp_avg_sq"])
        if vmax is None or vmax.dtype != p.dtype:
            return False
        flags |= 4
    lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    t = st["step"] + 1
    decay = 1.0
    if wd:
        if opt.decoupled:
            flags |= 2
            decay = 1.0 - lr * wd
        else:
            flags |= 1
    st["step"] = t
    f = p.dtype.type
    fn(
        p, g, m, v, vmax,
        f(b1), f(1.0 - b1), f(b2), f(1.0 - b2), f(math.sqrt(1.0 - b2**t)), f(eps),
        f(lr / (1.0 - b1**t)), f(wd), f(decay), flags,
    )  # fmt: skip
    return True


def _sgd(fn, opt, p, g, st, group) -> bool:
    wd, momentum, lr = group["weight_decay"], group["momentum"], group["lr"]
    flags = 1 if wd else 0
    buf = p
    damp = 1.0 - group["dampening"]
    if momentum:
        b = st.get("momentum_buffer")
        if b is None:
            return False  # the first step copies the gradient: NumPy does it
        buf = _flat(b)
        if buf is None or buf.dtype != p.dtype:
            return False
        flags |= 2
        if group["nesterov"]:
            flags |= 4
        if damp != 1.0:
            flags |= 8
    f = p.dtype.type
    fn(p, g, buf, f(lr), f(wd), f(momentum), f(damp), flags)
    return True


_KERNELS: dict = {}
_caches.register("optimizer update kernels", _KERNELS.clear, _KERNELS.__len__)


def _kernel(kind):
    k = _KERNELS.get(kind, False)
    if k is False:
        src = _ADAM_SRC if issubclass(kind, Adam) else _SGD_SRC
        k = _KERNELS[kind] = _jit.kernel("adam" if issubclass(kind, Adam) else "sgd", src)
    return k


def _supported(opt) -> bool:
    t = type(opt)
    if isinstance(opt, Adam):
        return t.update is Adam.update
    if isinstance(opt, SGD):
        return t.update is SGD.update
    return False


def fuse_optimizer_updates(graph: Graph) -> Graph:
    """A copy of ``graph`` whose Adam/AdamW/SGD update nodes use the fused kernel (when numba
    is present; the same results either way)."""
    g = clone(graph)
    for n in g.nodes:
        op = n.op
        if type(op) is OptimizerUpdate and _supported(op.optimizer):
            n.op = FusedOptimizerUpdate(op.optimizer, op.param, op.group)
            if _jit.enabled():
                _kernel(type(op.optimizer))  # start compiling now
    return g


__all__ = ["FusedOptimizerUpdate", "fuse_optimizer_updates"]
