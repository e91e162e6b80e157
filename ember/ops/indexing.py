"""Indexing primitives: basic slicing (a view), advanced (integer-array) indexing, index_put,
gather / scatter, the write-through-a-view node ``CopySlices``, and the index checks made when
an op runs (``IndexInRange``, ``MaskedPositions``).

Index specs are hashable so ops stay hashable: a *basic* key is a tuple whose items are an int
(already in range and non-negative), ``None`` (a new dimension) or a slice written as the tuple
``("s", start, stop, step)``; an *advanced* key has one item per leading dimension of the array
it indexes: ``":"`` (the whole dimension) or the position of an index tensor among the op's
extra inputs. Index tensors are inputs, never fields.

Each indexing op and its gradient are a pair of ember ops, each the other's vjp, so gradients
of any order work: ``BasicIndex`` / ``BasicIndexGrad`` (assign into zeros) and ``AdvIndex`` /
``AdvIndexGrad`` (accumulate into zeros, so repeated indices add up).

>>> import ember
>>> from ember.ops.base import apply
>>> apply(BasicIndex((1, ("s", None, None, 2))), ember.arange(6).reshape(2, 3))
tensor([3, 5])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import _caches
from .. import dtypes as _dt
from .._config import state
from .._errors import EmberIndexError, ShapeError
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..backend import CPU, checks, full, to_device
from ..backend.arrays import scatter_add
from ..backend.kernels import address
from .base import Op, Spec, apply
from .broadcast import sum_to
from .elementwise import ZerosLike

FULL = ("s", None, None, None)


def _np_key(key: tuple) -> tuple:
    return tuple(slice(k[1], k[2], k[3]) if type(k) is tuple else k for k in key)


def _adv_key(key: tuple, idx) -> tuple:
    return tuple(_ALL if k == ":" else idx[k] for k in key)


_ALL = slice(None)


def basic_shape(shape: tuple, key: tuple, op: str = "index") -> tuple:
    """The shape ``key`` (a basic key) selects from ``shape``, checking integer indices."""
    out, d = [], 0
    for k in key:
        if k is None:
            out.append(1)
            continue
        if d >= len(shape):
            raise EmberIndexError(f"{op}: too many indices for tensor of dimension {len(shape)}")
        n = shape[d]
        if type(k) is tuple:
            out.append(len(range(*slice(k[1], k[2], k[3]).indices(n))))
        elif not -n <= k < n:
            raise EmberIndexError(
                f"{op}: index {k} is out of bounds for dimension {d} with size {n}"
            )
        d += 1
    return tuple(out) + tuple(shape[d:])


def adv_shape(shape: tuple, key: tuple, index_shapes, op: str = "index") -> tuple:
    """The shape of advanced indexing (NumPy's rule: adjacent index tensors keep their place,
    separated ones move to the front)."""
    if len(key) > len(shape):
        raise EmberIndexError(f"{op}: too many indices for tensor of dimension {len(shape)}")
    pos = [i for i, k in enumerate(key) if k != ":"]
    b = broadcast_shapes(op, *index_shapes) if index_shapes else ()
    rest = list(shape)
    if pos == list(range(pos[0], pos[-1] + 1)):
        return tuple(rest[: pos[0]]) + b + tuple(rest[pos[-1] + 1 :])
    return b + tuple(s for i, s in enumerate(rest) if i not in pos)


def _zeros(like: Tensor, shape: tuple) -> Tensor:
    return Tensor._make(full(shape, 0, like._data.dtype, like.device))


# -- basic indexing: ints, slices, None -----------------------------------------------------


@dataclass(frozen=True)
class BasicIndex(Op):
    """``x[key]`` for a basic key: always a view (0-d results too)."""

    key: tuple
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "_np", _np_key(self.key) + (Ellipsis,))

    @property
    def node_name(self) -> str:  # PyTorch's name for the last indexing step
        last = self.key[-1] if self.key else ...
        kind = {int: "Select", tuple: "Slice", type(None): "Unsqueeze"}.get(type(last), "Alias")
        return f"{kind}Backward0"

    def forward(self, xp, x):
        return x[self._np]

    def infer(self, x):
        return Spec(basic_shape(tuple(x.shape), self.key), x.dtype)

    def vjp(self, g, out, x):
        # the engine sums the pieces of one input's gradient into one op (``gradient``)
        return (GradPieces(tuple(x.shape), ((self.key, g),)),)


class GradPieces:
    """The gradient of a tensor indexed by basic keys, not yet written into zeros: ``(key,
    gradient)`` pairs of one ``shape``. The autograd engine merges the pieces a tensor's uses
    send (the parts of a ``split`` or ``chunk``: attention's q, k, v; an LSTM's gates) and
    writes them all with one op (``gradient``) where they were zeros and a sum each.

    >>> import ember
    >>> p = GradPieces((3,), (((("s", 0, 1, None),), ember.ones(1)),))
    >>> p.merged(GradPieces((3,), (((("s", 1, 3, None),), ember.full((2,), 2.0)),))).gradient()
    tensor([1., 2., 2.])
    """

    __slots__ = ("shape", "pieces")

    def __init__(self, shape: tuple, pieces: tuple) -> None:
        self.shape = shape
        self.pieces = pieces

    def merged(self, other: GradPieces) -> GradPieces:
        return GradPieces(self.shape, self.pieces + other.pieces)

    def gradient(self) -> Tensor:
        """The pieces summed into one tensor of ``shape``."""
        if len(self.pieces) == 1:
            ((key, g),) = self.pieces
            return apply(BasicIndexGrad(key, self.shape), g)
        keys = tuple(k for k, _ in self.pieces)
        whole = _one_array(keys, self.shape, [g for _, g in self.pieces])
        if whole is not None:
            return whole
        return apply(BasicIndexGrads(keys, self.shape), *(g for _, g in self.pieces))


def _one_array(keys: tuple, shape: tuple, grads: list) -> Tensor | None:
    """Eagerly, where the pieces are already one array: each ``grads[i]`` is exactly the view
    ``keys[i]`` of a C-contiguous array of ``shape`` (attention's stacked gradients of one
    projection's q, k and v, ``ops.attention``), and they tile it, that array as a Tensor
    (no copy); else None. Not while tracing (a graph's buffers must not alias), nor for
    gradients that are differentiated again."""
    if state.tracer is not None or not _tiles(keys, shape):
        return None
    first = grads[0]._data
    base = getattr(first, "base", None)
    if base is None or base.size != math.prod(shape) or base.dtype != first.dtype:
        return None
    if not base.flags.c_contiguous or any(g._requires_grad for g in grads):
        return None
    whole = base.reshape(shape)
    for key, g in zip(keys, grads):
        a, view = g._data, whole[_np_key(key)]
        if a.base is not base or a.strides != view.strides or address(a) != address(view):
            return None
    return Tensor._make(whole)


@dataclass(frozen=True)
class BasicIndexGrads(Op):
    """Zeros of ``shape`` with each input added at its key of ``keys``: the gradient of a
    tensor indexed several times (``BasicIndex``), in one op. Pieces that tile the tensor along
    one dimension (a ``split``'s) are written without the zeros."""

    keys: tuple
    shape: tuple

    def forward(self, xp, *gs):
        dtype = gs[0].dtype
        if _tiles(self.keys, self.shape):
            out = xp.empty(self.shape, dtype=dtype)
            for key, g in zip(self.keys, gs):
                out[_np_key(key)] = g
            return out
        out = xp.zeros(self.shape, dtype=dtype)
        for key, g in zip(self.keys, gs):
            out[_np_key(key)] += g
        return out

    def infer(self, *gs):
        return Spec(self.shape, gs[0].dtype)

    def vjp(self, h, out, *gs):
        return tuple(apply(basic_index(key), h) for key in self.keys)


def _tiles(keys: tuple, shape: tuple) -> bool:
    """Whether ``keys`` are unit-step slices or single indices of one dimension (whole before
    it) that cover it exactly once (a ``split``'s or an ``unbind``'s): each element written by
    one piece."""
    dim = len(keys[0]) - 1
    spans = []
    for key in keys:
        if len(key) != dim + 1 or dim >= len(shape) or any(k != FULL for k in key[:dim]):
            return False
        k = key[dim]
        if type(k) is int:
            spans.append(range(k, k + 1))
        elif type(k) is tuple and k[3] in (None, 1):
            spans.append(range(shape[dim])[slice(k[1], k[2])])
        else:
            return False
    spans.sort(key=lambda r: r.start)
    at = 0
    for r in spans:
        if r.step != 1 or r.start != at:
            return False
        at = r.stop
    return at == shape[dim]


@dataclass(frozen=True)
class BasicIndexGrad(Op):
    """Zeros of ``shape`` with ``g`` written at ``key``: the gradient of ``BasicIndex``."""

    key: tuple
    shape: tuple

    def __post_init__(self):
        object.__setattr__(self, "_np", _np_key(self.key) + (Ellipsis,))

    def forward(self, xp, g):
        z = xp.zeros(self.shape, dtype=g.dtype)
        z[self._np] = g
        return z

    def infer(self, g):
        return Spec(self.shape, g.dtype)

    def vjp(self, g, out, x):
        return (apply(BasicIndex(self.key), g),)


_BASIC_OPS: dict = {}
_caches.register("indexing ops", _BASIC_OPS.clear, _BASIC_OPS.__len__)


def _plain(key) -> bool:
    for k in key:
        if type(k) is tuple:
            if not _plain(k):
                return False
        elif k is not None and type(k) not in (int, str, bool):
            return False
    return True


def basic_index(key: tuple) -> BasicIndex:
    """The (cached) ``BasicIndex`` op for ``key``: building one costs more than indexing."""
    if not _plain(key):  # holds unknown sizes of a graph: never shared between graphs
        return BasicIndex(key)
    op = _BASIC_OPS.get(key)
    if op is None:
        if len(_BASIC_OPS) > 4096:
            _BASIC_OPS.clear()
        op = _BASIC_OPS[key] = BasicIndex(key)
    return op


def slice_dim(x: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """``x`` narrowed to ``start:stop`` along ``dim`` (a view)."""
    return apply(basic_index((FULL,) * dim + (("s", start, stop, None),)), x)


def cut(packed: Tensor, shapes) -> tuple:
    """Views of a flat ``packed`` tensor: consecutive pieces of ``shapes`` (the gradients a
    fused gradient op packs into one array).

    >>> import ember
    >>> [t.shape for t in cut(ember.arange(7.0), [(2, 2), (3,)])]
    [ember.Size([2, 2]), ember.Size([3])]
    """
    from .movement import reshape

    out, at = [], 0
    for shape in shapes:
        size = 1
        for s in shape:
            size *= s
        out.append(reshape(slice_dim(packed, 0, at, at + size), tuple(shape)))
        at += size
    return tuple(out)


# -- advanced indexing: integer index tensors ----------------------------------------------


def _index_error(op: str, x, e: Exception) -> EmberIndexError:
    msg = str(e).replace("axis", "dimension")
    return EmberIndexError(f"{op}: {msg} (indexed tensor of shape {list(x.shape)})")


@dataclass(frozen=True)
class AdvIndex(Op):
    """``x[key]`` where ``key`` holds index tensors (the op's other inputs): a copy."""

    key: tuple
    node_name = "IndexBackward0"

    def forward(self, xp, x, *idx):
        try:
            return x[_adv_key(self.key, idx)]
        except IndexError as e:
            raise _index_error("index", x, e) from None

    def infer(self, x, *idx):
        for i in idx:
            if i.dtype.category != _dt.INT:
                raise EmberIndexError(
                    f"index: tensors used as indices must be long or int tensors, got {i.dtype}"
                )
        return Spec(adv_shape(tuple(x.shape), self.key, [tuple(i.shape) for i in idx]), x.dtype)

    def vjp(self, g, out, x, *idx):
        if not x._requires_grad:
            return (None,) * (1 + len(idx))
        return (apply(AdvIndexGrad(self.key, tuple(x.shape)), g, *idx),) + (None,) * len(idx)


@dataclass(frozen=True)
class AdvIndexGrad(Op):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""

    key: tuple
    shape: tuple

    def forward(self, xp, g, *idx):
        z = xp.zeros(self.shape, dtype=g.dtype)
        scatter_add(z, _adv_key(self.key, idx), g)
        return z

    def infer(self, g, *idx):
        return Spec(self.shape, g.dtype)

    def vjp(self, gg, out, g, *idx):
        return (apply(AdvIndex(self.key), gg, *idx),) + (None,) * len(idx)


def select(x: Tensor, basic: tuple, adv: tuple | None, idx) -> Tensor:
    """The two-stage index PyTorch does: the basic key first (a view), then index tensors."""
    if basic:
        x = apply(basic_index(basic), x)
    if adv is not None:
        x = apply(AdvIndex(adv), x, *idx)
    return x


@dataclass(frozen=True)
class IndexPut(Op):
    """A copy of ``x`` with ``x[basic][adv] = value`` (value broadcast; the out-of-place
    ``__setitem__``). Inputs: ``x, value, *index_tensors``."""

    basic: tuple
    adv: tuple | None

    def __post_init__(self):
        object.__setattr__(self, "_np", _np_key(self.basic) + (Ellipsis,))

    def forward(self, xp, x, v, *idx):
        out = x.copy()
        target = out[self._np]
        key = Ellipsis if self.adv is None else _adv_key(self.adv, idx)
        try:
            target[key] = v
        except IndexError as e:
            raise _index_error("setitem", x, e) from None
        except ValueError:
            raise ShapeError(
                f"setitem: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to indexing result of shape {list(target[key].shape)}"
            ) from None
        return out

    def infer(self, x, v, *idx):
        shape = basic_shape(tuple(x.shape), self.basic, "setitem")
        if self.adv is not None:
            shape = adv_shape(shape, self.adv, [tuple(i.shape) for i in idx], "setitem")
        try:
            ok = broadcast_shapes("setitem", tuple(v.shape), shape) == shape
        except ShapeError:
            ok = False
        if not ok:
            raise ShapeError(
                f"setitem: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to indexing result of shape {list(shape)}"
            )
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x, v, *idx):
        gx = gv = None
        if x._requires_grad:
            gx = apply(self, g, _zeros(g, ()), *idx)
        if v._requires_grad:
            gv = sum_to(select(g, self.basic, self.adv, idx), tuple(v.shape))
        return (gx, gv) + (None,) * len(idx)


# -- index checks made when the op runs ----------------------------------------------------------


@dataclass(frozen=True)
class IndexInRange(Op):
    """``index`` (int64 or int32) as int64 positions in ``[0, size)``, negative ones counted
    from the end, refusing any outside ``[-size, size)``: the bounds check of ``take`` (``dim``
    None: positions in the flattened input of ``size`` elements) and of index_add / index_copy /
    index_fill (along ``dim``). The check is made when the op runs, as PyTorch's device-side
    assert, so an index computed inside a compiled function is checked too; on a GPU it is
    decided at the next read from the device (``ember.backend.checks``: no wait in the step)."""

    caller: str  # the public function, for the message
    size: int
    dim: int | None = None
    negative: bool = True  # False: refuse negative indices (index_add, index_copy: PyTorch's)
    differentiable = False

    def forward(self, xp, index):
        if index.size:
            low = -self.size if self.negative else 0
            bad = xp.asarray(((index >= self.size) | (index < low)).any())
            checks.defer(bad, lambda: self._error(index))
        return index.astype(xp.int64) % max(self.size, 1)

    def _error(self, index) -> EmberIndexError:
        host = to_device(index, CPU)
        low = -self.size if self.negative else 0
        bad = int(host[(host >= self.size) | (host < low)].ravel()[0])
        if self.dim is None:
            return EmberIndexError(
                f"{self.caller}: index {bad} is out of range for a tensor of {self.size} elements"
            )
        allowed = f"[{low}, {self.size})"
        return EmberIndexError(
            f"{self.caller}: index {bad} is out of range for dimension {self.dim} of size "
            f"{self.size} (expected indices in {allowed})"
        )

    def infer(self, index):
        return Spec(tuple(index.shape), _dt.int64)


@dataclass(frozen=True)
class MaskedPositions(Op):
    """For each element of ``mask`` (bool), flattened, how many True elements come before it:
    the position in the flattened source that ``masked_scatter`` reads there (0 where the mask
    is False). Refuses, when it runs (on a GPU: at the next read from the device), a mask with
    more True elements than the source, of shape ``source_shape``, holds (so a compiled
    masked_scatter checks too)."""

    source_shape: tuple
    differentiable = False

    def forward(self, xp, mask):
        counts = xp.cumsum(mask.reshape(-1), dtype=xp.int64)
        available = math.prod(self.source_shape)
        if counts.size:
            checks.defer(xp.asarray(counts[-1] > available), lambda: self._error(counts))
        # within the source even where a deferred check (a GPU) will report too many
        return xp.clip(counts - 1, 0, max(available - 1, 0))

    def _error(self, counts) -> ShapeError:
        needed = int(to_device(counts[-1:], CPU)[0])
        return ShapeError(
            f"masked_scatter: mask has {needed} True elements but source has only "
            f"{math.prod(self.source_shape)} (shape {self.source_shape})"
        )

    def infer(self, mask):
        return Spec((math.prod(mask.shape),), _dt.int64)


# -- gather / scatter along a dim --------------------------------------------------------------


def _along(xp, index, dim: int) -> tuple:
    """The NumPy key that picks ``x[..., index[i, j, k], ...]`` at each position of ``index``."""
    n = index.ndim
    key = []
    for d, s in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            shape = [1] * n
            shape[d] = s
            key.append(xp.arange(s).reshape(shape))
    return tuple(key)


def _check_along(op: str, dim: int, x, index, src=None) -> None:
    if index.dtype is not _dt.int64:
        raise EmberIndexError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if index.ndim != x.ndim:
        raise ShapeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index shape {list(index.shape)}, input shape {list(x.shape)})"
        )
    for d in range(index.ndim):
        if d != dim and index.shape[d] > x.shape[d]:
            raise ShapeError(
                f"{op}(): Size does not match at dimension {d} expected index "
                f"{list(index.shape)} to be smaller than self {list(x.shape)} apart from "
                f"dimension {dim}"
            )
        if src is not None and index.shape[d] > src.shape[d]:
            raise ShapeError(
                f"{op}(): Expected index {list(index.shape)} to be smaller than src "
                f"{list(src.shape)} in every dimension"
            )


def _crop(xp, src, index):
    if src.shape == index.shape:
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _pad_to(g: Tensor, shape: tuple) -> Tensor:
    if tuple(g.shape) == shape:
        return g
    key = tuple(("s", 0, s, None) for s in g.shape)
    return apply(BasicIndexGrad(key, shape), g)


@dataclass(frozen=True)
class Gather(Op):
    """``out[i][j][k] = x[index[i][j][k]][j][k]`` (for ``dim == 0``). Inputs: ``x, index``."""

    dim: int

    def forward(self, xp, x, index):
        try:
            return x[_along(xp, index, self.dim)]
        except IndexError as e:
            raise _index_error("gather", x, e) from None

    def infer(self, x, index):
        _check_along("gather", self.dim, x, index)
        return Spec(tuple(index.shape), x.dtype)

    def vjp(self, g, out, x, index):
        if not x._requires_grad:
            return None, None
        zeros = apply(ZerosLike(), x) if x.dtype is g.dtype else _zeros(g, tuple(x.shape))
        return apply(ScatterAdd(self.dim), zeros, index, g), None


@dataclass(frozen=True)
class ScatterAdd(Op):
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim``. Inputs: ``x, index, src``."""

    dim: int

    def forward(self, xp, x, index, src):
        out = x.copy()
        try:
            scatter_add(out, _along(xp, index, self.dim), _crop(xp, src, index))
        except IndexError as e:
            raise _index_error("scatter_add", x, e) from None
        return out

    def infer(self, x, index, src):
        _check_along("scatter_add", self.dim, x, index, src)
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x, index, src):
        gs = None
        if src._requires_grad:
            gs = _pad_to(apply(Gather(self.dim), g, index), tuple(src.shape))
        return (g if x._requires_grad else None), None, gs


@dataclass(frozen=True)
class Scatter(Op):
    """A copy of ``x`` with ``src`` written at ``index`` along ``dim``. Inputs: ``x, index,
    src``."""

    dim: int

    def forward(self, xp, x, index, src):
        out = x.copy()
        try:
            out[_along(xp, index, self.dim)] = _crop(xp, src, index)
        except IndexError as e:
            raise _index_error("scatter", x, e) from None
        return out

    def infer(self, x, index, src):
        _check_along("scatter", self.dim, x, index, src)
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x, index, src):
        gx = gs = None
        if x._requires_grad:
            gx = apply(self, g, index, apply(ZerosLike(), apply(Gather(self.dim), g, index)))
        if src._requires_grad:
            gs = _pad_to(apply(Gather(self.dim), g, index), tuple(src.shape))
        return gx, None, gs


# -- writes through views ------------------------------------------------------------------


def replay(ops: tuple, x: Tensor) -> Tensor:
    """Apply a chain of single-input view ops (a view's ``_view_ops``) to ``x``."""
    for op in ops:
        x = apply(op, x)
    return x


@dataclass(frozen=True)
class CopySlices(Op):
    """A copy of ``base`` with ``src`` written into the view that ``ops`` make of it.

    The history an in-place write through a view gives the view's base (PyTorch's CopySlices):
    the gradient goes to ``src`` through the same view ops, and to the old base everywhere
    except where the view was overwritten. Inputs: ``base, src``.
    """

    ops: tuple
    node_name = "CopySlices"

    def forward(self, xp, base, src):
        out = xp.empty_like(base)
        out[...] = base
        view = out
        for op in self.ops:
            view = op.forward(xp, view)
        if view.size and not xp.may_share_memory(view, out):
            # the chain copied on this layout (a reshape): write through flat positions instead
            pos = xp.arange(out.size).reshape(out.shape)
            for op in self.ops:
                pos = op.forward(xp, pos)
            out.reshape(-1)[pos.reshape(-1)] = xp.broadcast_to(src, pos.shape).reshape(-1)
            return out
        view[...] = src
        return out

    def infer(self, base, src):
        return Spec(tuple(base.shape), base.dtype)

    def vjp(self, g, out, base, src):
        gb = gs = None
        if base._requires_grad:
            gb = apply(self, g, _zeros(g, ()))
        if src._requires_grad:
            gs = sum_to(replay(self.ops, g), tuple(src.shape))
        return gb, gs
