"""Tensor collectives with PyTorch's signatures: ``all_reduce``, ``broadcast``, ``all_gather``,
``reduce_scatter``, ``reduce``, ``gather``, ``scatter``, ``barrier``.

Results are written into the tensors given, as in PyTorch. ``async_op=True`` returns a
``Work``; the outputs hold the result after ``work.wait()``. Eager calls write the arrays
directly (and bump the tensors' version counters); inside ``ember.compile`` or a static graph,
``all_reduce``, ``broadcast``, ``all_gather_into_tensor`` and ``reduce_scatter_tensor``
become graph ops (``ember.distributed.ops``) and the others raise.

``src`` / ``dst`` are global ranks (``group_src`` / ``group_dst``: ranks in ``group``).

>>> import ember, ember.distributed as dist
>>> dist.init_process_group("mpi")  # doctest: +SKIP
>>> x = ember.ones(3) * (dist.get_rank() + 1)  # doctest: +SKIP
>>> dist.all_reduce(x); x  # doctest: +SKIP
tensor([3., 3., 3.])
"""

from __future__ import annotations

from .._config import graph_tracer
from .._errors import DTypeError, ShapeError
from .._tensor import Tensor
from ..backend import xp_of
from ..ops.base import apply
from . import _arrays
from . import ops as _ops
from ._mpi import DistributedError
from .group import ProcessGroup, resolve
from .reduce_op import ReduceOp
from .work import Work


def _tensor(t, name: str, what: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise DistributedError(f"{name}: {what} must be an ember Tensor, got {type(t).__name__}")
    return t


def _reduce_op(op, name: str) -> ReduceOp:
    try:
        return ReduceOp(op)
    except ValueError:
        raise DistributedError(f"{name}: op must be a ReduceOp, got {op!r}") from None


def _root(pg: ProcessGroup, rank, group_rank, role: str, name: str) -> int:
    if group_rank is not None:
        if rank is not None:
            raise DistributedError(f"{name}: give {role} or group_{role}, not both")
        if not 0 <= group_rank < pg.size():
            raise DistributedError(
                f"{name}: group_{role}={group_rank} is outside the group of {pg.size()}"
            )
        return int(group_rank)
    return pg.group_rank(0 if rank is None else int(rank), role, name)


def _bump(*tensors):
    def after():
        for t in tensors:
            t._version[0] += 1

    return after


def _done(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _traced(name: str, async_op: bool, *tensors) -> bool:
    """Whether the call must become a graph op (``ember.compile`` / a static graph)."""
    if graph_tracer(*tensors) is None:
        return False
    if async_op:
        raise DistributedError(f"{name}: async_op=True is not supported inside ember.compile")
    return True


def _rooted(name: str, tensor, group, rank, group_rank, role: str):
    """``(process group, root rank)`` of an eager-only rooted collective, its tensor checked."""
    pg = resolve(group, name)
    root = _root(pg, rank, group_rank, role, name)
    _tensor(tensor, name)
    _untraceable(name, tensor)
    return pg, root


def _untraceable(name: str, *tensors) -> None:
    if graph_tracer(*tensors) is not None:
        raise DistributedError(
            f"{name} is eager only; inside ember.compile use all_reduce, broadcast, "
            "all_gather_into_tensor or reduce_scatter_tensor"
        )


def _write(out: Tensor, fn, name: str) -> None:
    """``out = fn()`` in place while tracing (the tracer records the write-back)."""
    from ..functions.inplace import apply_inplace

    apply_inplace(out, lambda _old: fn(), name=name)


def _same(ts, like: Tensor, name: str, what: str) -> None:
    for i, t in enumerate(ts):
        _tensor(t, name, f"{what}[{i}]")
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ShapeError(
                f"{name}: {what}[{i}] is {tuple(t.shape)} {t.dtype}, but the tensor is "
                f"{tuple(like.shape)} {like.dtype}: every entry must match it"
            )


def _count(ts, pg: ProcessGroup, name: str, what: str) -> list:
    ts = list(ts)
    if len(ts) != pg.size():
        raise DistributedError(
            f"{name}: {what} has {len(ts)} tensors; the group has {pg.size()} ranks"
        )
    return ts


def _sizes_fit(out: Tensor, inp: Tensor, n: int, name: str, out_is_big: bool) -> None:
    if out.dtype != inp.dtype:
        raise DTypeError(f"{name}: output is {out.dtype} but input is {inp.dtype}; they must match")
    big, small = (out, inp) if out_is_big else (inp, out)
    if big.numel() != n * small.numel():
        raise ShapeError(
            f"{name}: output {tuple(out.shape)} and input {tuple(inp.shape)}: the "
            f"{'output' if out_is_big else 'input'} must hold {n} (the group's size) times "
            f"the {'input' if out_is_big else 'output'}'s {small.numel()} elements"
        )


# -- the collectives ---------------------------------------------------------------------------


def all_reduce(
    tensor: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``tensor`` over the group, in place on every rank.

    >>> import ember, ember.distributed as dist
    >>> t = ember.ones(2)
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)  # doctest: +SKIP
    """
    name = "all_reduce"
    pg, op = resolve(group, name), _reduce_op(op, name)
    _tensor(tensor, name)
    if _traced(name, async_op, tensor):
        _write(tensor, lambda: apply(_ops.AllReduce(pg, int(op)), tensor), name)
        return None
    work = _arrays.all_reduce(pg, tensor._data, op, _bump(tensor), wait=not async_op)
    return _done(work, async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank of the group.

    >>> import ember, ember.distributed as dist
    >>> dist.broadcast(ember.zeros(2), src=0)  # doctest: +SKIP
    """
    name = "broadcast"
    pg = resolve(group, name)
    root = _root(pg, src, group_src, "src", name)
    _tensor(tensor, name)
    if _traced(name, async_op, tensor):
        _write(tensor, lambda: apply(_ops.Broadcast(pg, root), tensor), name)
        return None
    return _done(_arrays.broadcast(pg, tensor._data, root, _bump(tensor)), async_op)


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list[rank]`` on every rank.

    >>> import ember, ember.distributed as dist
    >>> out = [ember.zeros(2) for _ in range(dist.get_world_size())]  # doctest: +SKIP
    >>> dist.all_gather(out, ember.ones(2))  # doctest: +SKIP
    """
    name = "all_gather"
    pg = resolve(group, name)
    _tensor(tensor, name)
    outs = _count(tensor_list, pg, name, "tensor_list")
    _same(outs, tensor, name, "tensor_list")
    _untraceable(name, tensor, *outs)
    x = tensor._data
    buf = xp_of(x).empty((pg.size(), *x.shape), x.dtype)

    def after():
        for i, t in enumerate(outs):
            t._data[...] = buf[i]
            t._version[0] += 1

    return _done(_arrays.all_gather(pg, buf, x, after), async_op)


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's ``input_tensor`` concatenated in rank order into ``output_tensor``
    (shaped ``(size * n, ...)`` or ``(size, n, ...)``).

    >>> import ember, ember.distributed as dist
    >>> out = ember.zeros(2 * dist.get_world_size())  # doctest: +SKIP
    >>> dist.all_gather_into_tensor(out, ember.ones(2))  # doctest: +SKIP
    """
    name = "all_gather_into_tensor"
    pg = resolve(group, name)
    _tensor(output_tensor, name, "output_tensor")
    _tensor(input_tensor, name, "input_tensor")
    _sizes_fit(output_tensor, input_tensor, pg.size(), name, out_is_big=True)
    if _traced(name, async_op, output_tensor, input_tensor):
        shape = tuple(output_tensor.shape)
        op = _ops.AllGather(pg)
        _write(output_tensor, lambda: apply(op, input_tensor).reshape(shape), name)
        return None
    work = _arrays.all_gather(pg, output_tensor._data, input_tensor._data, _bump(output_tensor))
    return _done(work, async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``input_list`` reduced over the group; rank i receives entry i's reduction in
    ``output``.

    >>> import ember, ember.distributed as dist
    >>> ins = [ember.ones(2) for _ in range(dist.get_world_size())]  # doctest: +SKIP
    >>> dist.reduce_scatter(ember.zeros(2), ins)  # doctest: +SKIP
    """
    name = "reduce_scatter"
    pg, op = resolve(group, name), _reduce_op(op, name)
    _tensor(output, name, "output")
    ins = _count(input_list, pg, name, "input_list")
    _same(ins, output, name, "input_list")
    _untraceable(name, output, *ins)
    x = output._data
    flat = xp_of(x).concatenate([t._data.reshape(-1) for t in ins])
    return _done(_arrays.reduce_scatter(pg, x, flat, op, _bump(output)), async_op)


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``input`` (``size`` equal blocks along its first axis, or ``size * output.numel()``
    elements) reduced over the group; rank i receives block i in ``output``.

    >>> import ember, ember.distributed as dist
    >>> out = ember.zeros(2)
    >>> dist.reduce_scatter_tensor(out, ember.ones(2 * dist.get_world_size()))  # doctest: +SKIP
    """
    name = "reduce_scatter_tensor"
    pg, op = resolve(group, name), _reduce_op(op, name)
    _tensor(output, name, "output")
    _tensor(input, name, "input")
    _sizes_fit(output, input, pg.size(), name, out_is_big=False)
    if _traced(name, async_op, output, input):
        n, shape = pg.size(), tuple(output.shape)
        rs = _ops.ReduceScatter(pg, int(op))
        _write(output, lambda: apply(rs, input.reshape(n, -1)).reshape(shape), name)
        return None
    work = _arrays.reduce_scatter(pg, output._data, input._data, op, _bump(output))
    return _done(work, async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """``tensor`` reduced over the group into rank ``dst``'s ``tensor`` (others unchanged).

    >>> import ember, ember.distributed as dist
    >>> dist.reduce(ember.ones(2), dst=0)  # doctest: +SKIP
    """
    name = "reduce"
    op = _reduce_op(op, name)
    pg, root = _rooted(name, tensor, group, dst, group_dst, "dst")
    return _done(_arrays.reduce(pg, tensor._data, root, op, _bump(tensor)), async_op)


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere).

    >>> import ember, ember.distributed as dist
    >>> dist.gather(ember.ones(2), None, dst=1)  # doctest: +SKIP
    """
    name = "gather"
    pg, root = _rooted(name, tensor, group, dst, group_dst, "dst")
    x = tensor._data
    if pg.rank() != root:
        if gather_list:
            raise DistributedError(f"{name}: gather_list must be None on ranks other than dst")
        return _done(_arrays.gather(pg, x, None, root), async_op)
    outs = _count(gather_list or (), pg, name, "gather_list")
    _same(outs, tensor, name, "gather_list")
    buf = xp_of(x).empty((pg.size(), *x.shape), x.dtype)

    def after():
        for i, t in enumerate(outs):
            t._data[...] = buf[i]
            t._version[0] += 1

    return _done(_arrays.gather(pg, x, buf, root, after), async_op)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Entry i of ``scatter_list`` (given on rank ``src``) into rank i's ``tensor``.

    >>> import ember, ember.distributed as dist
    >>> dist.scatter(ember.zeros(2), None, src=0)  # doctest: +SKIP
    """
    name = "scatter"
    pg, root = _rooted(name, tensor, group, src, group_src, "src")
    flat = None
    if pg.rank() == root:
        ins = _count(scatter_list or (), pg, name, "scatter_list")
        _same(ins, tensor, name, "scatter_list")
        flat = xp_of(tensor._data).stack([t._data for t in ins])
    elif scatter_list:
        raise DistributedError(f"{name}: scatter_list must be None on ranks other than src")
    return _done(_arrays.scatter(pg, tensor._data, flat, root, _bump(tensor)), async_op)


def barrier(
    group: ProcessGroup | None = None, async_op: bool = False, device_ids=None
) -> Work | None:
    """Wait until every rank of the group reaches it.

    >>> import ember.distributed as dist
    >>> dist.barrier()  # doctest: +SKIP
    """
    return _done(_arrays.barrier(resolve(group, "barrier")), async_op)


__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "gather",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
]
