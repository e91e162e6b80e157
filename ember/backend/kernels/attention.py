"""GPU attention through cuDNN's fused scaled dot-product attention (flash attention), driven by
the cuDNN frontend's graph API as the convolutions are (``kernels/conv.py``: handles, buffers
bound by uid, plans cached per layout, a refused plan remembered and warned about once).

- ``forward``: ``Attention``'s CUDA override, ``softmax(q k^T * scale) v`` (``graph.sdpa``
  without statistics). The output takes the query's memory order: for multi-head attention's
  heads, views of (L, N, H, D) rows, it is (L, N, H, D) rows too, so merging the heads back is
  a view, not a copy.
- ``backward``: ``AttentionGrad``'s, ``(g, out, q, k, v)`` -> [dq, dk, dv] packed flat. cuDNN's
  backward needs the softmax statistics of the forward (one float per query row), which
  ``Attention`` does not keep (one output per op), so it runs the forward again with statistics
  (``graph.sdpa(generate_stats=True)``), then ``graph.sdpa_backward``; the recomputed forward is
  about a fifth of the pair's time.

Served: float16 and bfloat16 (cuDNN has no float32 flash attention), 3-D (N, L, D) or 4-D
(B, H, L, D) operands whose last dimension is contiguous, head sizes cuDNN takes (multiples of
8; it refuses the rest when the plan is built). Everything else returns ``NotImplemented``: the
op's body (products and a softmax on CuPy) runs instead.

>>> forward(None, None, None, None, 0.125, False)
NotImplemented
"""

from __future__ import annotations

from ... import _caches
from .. import cudnn as _flags
from . import conv, fused

_graphs: dict = {}
_warned: set = set()


def _served(a) -> bool:
    return (
        a.dtype.itemsize == 2
        and a.dtype.kind in "fV"
        and a.ndim in (3, 4)
        and a.strides[-1] == a.itemsize
        and a.shape[-1] % 8 == 0
        and a.size > 0
    )


def _layout(a) -> tuple:
    """(dims, strides) in elements as cuDNN's 4-D (B, H, L, D) tensors take them."""
    strides = conv.elem_strides(a)
    if a.ndim == 4:
        return list(a.shape), strides
    return [1, *a.shape], [strides[0] * a.shape[0], *strides]


def _like(xp, a, last: int):
    """An empty array of ``a``'s shape (last dimension ``last``) in ``a``'s memory order."""
    shape = (*a.shape[:-1], last)
    order = sorted(range(a.ndim - 1), key=lambda d: -a.strides[d]) + [a.ndim - 1]
    mem = xp.empty(tuple(shape[d] for d in order), dtype=a.dtype)
    return mem.transpose([order.index(d) for d in range(a.ndim)])


def _graph(mod, xp, dev: int, io):
    f = mod.data_type.FLOAT
    return mod.pygraph(
        handle=conv.handle(mod, xp, dev),
        io_data_type=io,
        intermediate_data_type=f,
        compute_data_type=f,
    )


def _inputs(mod, g, arrays, names):
    out = []
    for a, name in zip(arrays, names):
        dims, strides = _layout(a)
        io = conv.io_type(mod, a.dtype)
        out.append(g.tensor(name=name, dim=dims, stride=strides, data_type=io))
    return out


def _build_forward(mod, xp, dev, io, q, k, v, o, stats, scale, causal):
    g = _graph(mod, xp, dev, io)
    tq, tk, tv = _inputs(mod, g, (q, k, v), ("Q", "K", "V"))
    to, ts = g.sdpa(
        name="sdpa",
        q=tq,
        k=tk,
        v=tv,
        generate_stats=stats is not None,
        attn_scale=scale,
        use_causal_mask=causal,
    )
    dims, strides = _layout(o)
    to.set_output(True).set_dim(dims).set_stride(strides).set_data_type(io)
    tensors = [tq, tk, tv, to]
    if stats is not None:
        dims, strides = _layout(stats)
        ts.set_output(True).set_dim(dims).set_stride(strides)
        ts.set_data_type(mod.data_type.FLOAT)
        tensors.append(ts)
    return conv.finish(mod, g, tensors)


def _build_backward(mod, xp, dev, io, arrays, grads, scale, causal):
    g = _graph(mod, xp, dev, io)
    tq, tk, tv, to, tdo, ts = _inputs(mod, g, arrays, ("Q", "K", "V", "O", "dO", "Stats"))
    outs = g.sdpa_backward(
        name="sdpa_backward",
        q=tq,
        k=tk,
        v=tv,
        o=to,
        dO=tdo,
        stats=ts,
        attn_scale=scale,
        use_causal_mask=causal,
    )
    for t, a in zip(outs, grads):
        dims, strides = _layout(a)
        t.set_output(True).set_dim(dims).set_stride(strides).set_data_type(io)
    return conv.finish(mod, g, [tq, tk, tv, to, tdo, ts, *outs])


def _ready(xp, *arrays):
    """The frontend module where cuDNN may serve these operands, else None."""
    if xp is None or not _flags.enabled or not fused(xp):
        return None
    mod = _flags._cudnn()
    if mod is None or len({a.dtype for a in arrays}) != 1 or not all(map(_served, arrays)):
        return None
    if len({a.ndim for a in arrays}) != 1 or len({a.shape[:-2] for a in arrays}) != 1:
        return None
    return mod


def _plan(kind: str, dev: int, arrays, scale: float, causal: bool, build):
    """The built graph of ``kind`` for these operands' layouts, or None (``conv.cached_plan``)."""
    key = (kind, dev, arrays[0].dtype, tuple((a.shape, a.strides) for a in arrays), scale, causal)

    def refused():
        return f"attention {kind} plan for {tuple(a.shape for a in arrays)}"

    return conv.cached_plan(_graphs, _warned, key, build, refused, "the op's body", depth=1)


def _forward(mod, xp, q, k, v, scale: float, causal: bool, with_stats: bool):
    """(out, stats or None), or None where cuDNN has no plan."""
    dev = conv.device_id(q)
    io = conv.io_type(mod, q.dtype)
    o = _like(xp, q, v.shape[-1])
    stats = xp.empty((*q.shape[:-1], 1), dtype=xp.float32) if with_stats else None
    kind = "forward" if not with_stats else "forward+stats"
    entry = _plan(
        kind,
        dev,
        (q, k, v),
        scale,
        causal,
        lambda: _build_forward(mod, xp, dev, io, q, k, v, o, stats, scale, causal),
    )
    if entry is None:
        return None
    conv.run(mod, xp, entry, dev, (q, k, v, o) if stats is None else (q, k, v, o, stats))
    return o, stats


def forward(xp, q, k, v, scale: float, causal: bool):
    """``Attention``'s output by cuDNN, or NotImplemented (module docstring)."""
    mod = _ready(xp, q, k, v) if q is not None else None
    if mod is None:
        return NotImplemented
    done = _forward(mod, xp, q, k, v, scale, causal, False)
    return NotImplemented if done is None else done[0]


def backward(xp, g, out, q, k, v, scale: float, causal: bool):
    """``AttentionGrad``'s packed [dq, dk, dv] by cuDNN, or NotImplemented."""
    mod = _ready(xp, q, k, v) if q is not None else None
    if mod is None or g.dtype != q.dtype:
        return NotImplemented
    if not _served(g):
        g = xp.ascontiguousarray(g)
    done = _forward(mod, xp, q, k, v, scale, causal, True)
    if done is None:
        return NotImplemented
    o, stats = done
    if q.shape == k.shape == v.shape:  # AttentionGrad stacks them: (3, *q.shape)
        packed = _stacked_like(xp, q, k, v)
        grads = [packed[0], packed[1], packed[2]]
    else:
        packed = xp.empty((q.size + k.size + v.size,), dtype=q.dtype)
        grads, at = [], 0
        for a in (q, k, v):
            grads.append(packed[at : at + a.size].reshape(a.shape))
            at += a.size
    arrays = (q, k, v, o, g, stats)
    dev = conv.device_id(q)
    io = conv.io_type(mod, q.dtype)
    entry = _plan(
        "backward",
        dev,
        (*arrays, *grads),  # the gradients' layouts too: they follow q, k and v's memory
        scale,
        causal,
        lambda: _build_backward(mod, xp, dev, io, arrays, grads, scale, causal),
    )
    if entry is None:
        return NotImplemented
    conv.run(mod, xp, entry, dev, (*arrays, *grads))
    return packed


def _stacked_like(xp, q, k, v):
    """An empty (3, *q.shape) array for [dq, dk, dv] laid out as q, k and v lie in memory.

    Where they are views of one C-contiguous array, equally spaced, the stack is a view of an
    array of that array's shape, each gradient at its input's place (a multi-head attention's
    heads of one (L, N, 3E) projection: their gradients then form the projection's, and the
    autograd engine takes it without a copy). Else the stack is in C order.
    """
    b = q.base
    one = b is not None and k.base is b and v.base is b and b.dtype == q.dtype
    if one and b.flags.c_contiguous:
        at = [conv.ptr(a) - conv.ptr(b) for a in (q, k, v)]
        step = at[1] - at[0]
        if q.strides == k.strides == v.strides and step > 0 and at[2] - at[1] == step:
            stacked = _permuted(xp.empty(b.shape, b.dtype), (3, *q.shape), (step, *q.strides))
            if stacked is not None and conv.ptr(stacked) - conv.ptr(stacked.base) == at[0]:
                return stacked
    return xp.empty((3, *q.shape), q.dtype)


def _permuted(buf, shape: tuple, strides: tuple):
    """The view of C-contiguous ``buf`` with ``shape`` and byte ``strides``, when those are a
    C-order layout of the whole of ``buf`` with the dimensions permuted; else None."""
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    expect = buf.itemsize
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expect:
            return None
        expect *= shape[d]
    if expect != buf.nbytes:
        return None
    inverse = [order.index(d) for d in range(len(shape))]
    return buf.reshape([shape[d] for d in order]).transpose(inverse)


def clear() -> None:
    """Forget built attention graphs (after switching GPUs or frontends in tests).

    >>> clear()
    """
    _graphs.clear()
    _warned.clear()


_caches.register("cuDNN attention plans", clear, lambda: len(_graphs))

__all__ = ["forward", "backward", "clear"]
