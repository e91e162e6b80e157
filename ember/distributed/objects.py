"""Collectives of picklable Python objects: ``all_gather_object``, ``broadcast_object_list``,
``gather_object``, ``scatter_object_list``, ``send_object_list``, ``recv_object_list``.

Objects travel as pickles (as in PyTorch): unpickling runs code the sender chose, so use them
only between the ranks of one job. Each is two byte collectives: the sizes, then the bytes
(padded to the largest), with the same timeouts and debug checks as tensor collectives.

>>> import ember.distributed as dist
>>> out = [None] * dist.get_world_size()  # doctest: +SKIP
>>> dist.all_gather_object(out, {"rank": dist.get_rank()})  # doctest: +SKIP
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from . import _arrays
from ._mpi import DistributedError
from .collectives import _root
from .group import ProcessGroup, resolve


def _dump(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _load(buf: np.ndarray, size: int):
    return pickle.loads(buf[:size].tobytes())


def _padded(data: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, np.uint8)
    out[: data.size] = data
    return out


def _gather_bytes(pg: ProcessGroup, data: np.ndarray, root: int | None) -> list | None:
    """Every rank's bytes on every rank (``root`` None) or on ``root``: a list of arrays."""
    n = pg.size()
    sizes = np.empty(n, np.int64)
    _arrays.all_gather(pg, sizes, np.array([data.size], np.int64)).wait()
    width = int(sizes.max())
    buf = np.empty((n, width), np.uint8)
    if root is None:
        _arrays.all_gather(pg, buf, _padded(data, width)).wait()
    else:
        _arrays.gather(pg, _padded(data, width), buf, root).wait()
        if pg.rank() != root:
            return None
    return [buf[i, : sizes[i]] for i in range(n)]


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` = rank i's ``obj``, on every rank.

    >>> import ember.distributed as dist
    >>> out = [None] * dist.get_world_size()  # doctest: +SKIP
    >>> dist.all_gather_object(out, dist.get_rank())  # doctest: +SKIP
    """
    pg = resolve(group, "all_gather_object")
    _check_len(object_list, pg, "all_gather_object", "object_list")
    for i, data in enumerate(_gather_bytes(pg, _dump(obj), None)):
        object_list[i] = _load(data, data.size)


def gather_object(
    obj: Any,
    object_gather_list: list[Any] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    group_dst: int | None = None,
) -> None:
    """``object_gather_list[i]`` = rank i's ``obj``, on rank ``dst``.

    >>> import ember.distributed as dist
    >>> dist.gather_object("hi", None, dst=1)  # doctest: +SKIP
    """
    pg = resolve(group, "gather_object")
    root = _root(pg, dst, group_dst, "dst", "gather_object")
    if pg.rank() == root:
        _check_len(object_gather_list, pg, "gather_object", "object_gather_list")
    got = _gather_bytes(pg, _dump(obj), root)
    if got is not None:
        for i, data in enumerate(got):
            object_gather_list[i] = _load(data, data.size)


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: ProcessGroup | None = None,
    device=None,
    group_src: int | None = None,
) -> None:
    """Rank ``src``'s ``object_list`` entries copied into ``object_list`` on every rank.

    >>> import ember.distributed as dist
    >>> objs = [{"lr": 0.1}] if dist.get_rank() == 0 else [None]  # doctest: +SKIP
    >>> dist.broadcast_object_list(objs, src=0)  # doctest: +SKIP
    """
    pg = resolve(group, "broadcast_object_list")
    root = _root(pg, src, group_src, "src", "broadcast_object_list")
    data = _dump(list(object_list)) if pg.rank() == root else np.empty(0, np.uint8)
    size = np.array([data.size], np.int64)
    _arrays.broadcast(pg, size, root).wait()
    buf = data if pg.rank() == root else np.empty(int(size[0]), np.uint8)
    _arrays.broadcast(pg, buf, root).wait()
    got = _load(buf, buf.size)
    if len(got) != len(object_list):
        raise DistributedError(
            f"broadcast_object_list: rank {root} sent {len(got)} objects but this rank's "
            f"object_list has {len(object_list)} entries"
        )
    object_list[:] = got


def scatter_object_list(
    scatter_object_output_list: list[Any],
    scatter_object_input_list: list[Any] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    group_src: int | None = None,
) -> None:
    """``scatter_object_output_list[0]`` = entry i of rank ``src``'s input list, on rank i.

    >>> import ember.distributed as dist
    >>> out = [None]  # doctest: +SKIP
    >>> dist.scatter_object_list(out, ["a", "b"], src=0)  # doctest: +SKIP
    """
    name = "scatter_object_list"
    pg = resolve(group, name)
    root = _root(pg, src, group_src, "src", name)
    if not scatter_object_output_list:
        raise DistributedError(f"{name}: scatter_object_output_list needs at least one entry")
    n = pg.size()
    if pg.rank() == root:
        _check_len(scatter_object_input_list, pg, name, "scatter_object_input_list")
        pieces = [_dump(o) for o in scatter_object_input_list]
        sizes = np.array([p.size for p in pieces], np.int64)
        width = np.array([sizes.max()], np.int64)
    else:
        sizes, width = np.empty(n, np.int64), np.empty(1, np.int64)
    _arrays.broadcast(pg, width, root).wait()
    mine = np.empty(1, np.int64)
    _arrays.scatter(pg, mine, sizes, root).wait()
    flat = np.stack([_padded(p, int(width[0])) for p in pieces]) if pg.rank() == root else None
    buf = np.empty(int(width[0]), np.uint8)
    _arrays.scatter(pg, buf, flat, root).wait()
    scatter_object_output_list[0] = _load(buf, int(mine[0]))


def send_object_list(
    object_list: list[Any],
    dst: int | None = None,
    group: ProcessGroup | None = None,
    device=None,
    group_dst: int | None = None,
    use_batch: bool = False,
) -> None:
    """Send ``object_list``'s entries to rank ``dst`` (which calls ``recv_object_list``).

    >>> import ember.distributed as dist
    >>> dist.send_object_list([1, "two"], dst=1)  # doctest: +SKIP
    """
    pg = resolve(group, "send_object_list")
    peer = _root(pg, dst, group_dst, "dst", "send_object_list")
    data = _dump(list(object_list))
    _arrays.send(pg, np.array([data.size], np.int64), peer, 0).wait()
    _arrays.send(pg, data, peer, 0).wait()


def recv_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: ProcessGroup | None = None,
    device=None,
    group_src: int | None = None,
    use_batch: bool = False,
) -> int:
    """Fill ``object_list`` with what rank ``src`` (any rank when None) sent; its rank.

    >>> import ember.distributed as dist
    >>> objs = [None, None]  # doctest: +SKIP
    >>> dist.recv_object_list(objs, src=0)  # doctest: +SKIP
    0
    """
    pg = resolve(group, "recv_object_list")
    peer = None
    if src is not None or group_src is not None:
        peer = _root(pg, src, group_src, "src", "recv_object_list")
    size = np.empty(1, np.int64)
    sender = _arrays.recv(pg, size, peer, 0).result()
    buf = np.empty(int(size[0]), np.uint8)
    _arrays.recv(pg, buf, sender, 0).wait()
    got = _load(buf, buf.size)
    object_list[: len(got)] = got
    return pg.ranks[sender]


def _check_len(lst, pg: ProcessGroup, name: str, what: str) -> None:
    if lst is None or len(lst) != pg.size():
        n = "None" if lst is None else f"{len(lst)} entries"
        raise DistributedError(
            f"{name}: {what} must have {pg.size()} entries (one per rank), got {n}"
        )


__all__ = [
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "recv_object_list",
    "scatter_object_list",
    "send_object_list",
]
