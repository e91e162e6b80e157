"""Point-to-point messages: ``send`` / ``recv`` and their non-blocking ``isend`` / ``irecv``.

``dst`` / ``src`` are global ranks (``group_dst`` / ``group_src``: ranks in ``group``);
``recv`` without a source takes the first message from any rank and returns its rank.

>>> import ember, ember.distributed as dist
>>> if dist.get_rank() == 0:  # doctest: +SKIP
...     dist.send(ember.ones(2), dst=1)
... else:
...     dist.recv(ember.zeros(2), src=0)
"""

from __future__ import annotations

from .._tensor import Tensor
from . import _arrays
from .collectives import _bump, _root, _tensor, _untraceable
from .group import ProcessGroup, resolve
from .work import Work


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work:
    """Start sending ``tensor`` to rank ``dst``; do not change it before ``wait()``.

    >>> import ember, ember.distributed as dist
    >>> dist.isend(ember.ones(2), dst=1).wait()  # doctest: +SKIP
    True
    """
    pg = resolve(group, "isend")
    _tensor(tensor, "isend")
    _untraceable("isend", tensor)
    return _arrays.send(pg, tensor._data, _root(pg, dst, group_dst, "dst", "isend"), tag)


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work:
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None and no
    ``group_src``); ``wait()`` writes it.

    >>> import ember, ember.distributed as dist
    >>> dist.irecv(ember.zeros(2), src=0).wait()  # doctest: +SKIP
    True
    """
    pg = resolve(group, "irecv")
    _tensor(tensor, "irecv")
    _untraceable("irecv", tensor)
    peer = None if src is None and group_src is None else _root(pg, src, group_src, "src", "irecv")
    return _arrays.recv(pg, tensor._data, peer, tag, _bump(tensor))


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has gone.

    >>> import ember, ember.distributed as dist
    >>> dist.send(ember.ones(2), dst=1)  # doctest: +SKIP
    """
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); the sender's global rank.

    >>> import ember, ember.distributed as dist
    >>> dist.recv(ember.zeros(2))  # doctest: +SKIP
    0
    """
    pg = resolve(group, "recv")
    work = irecv(tensor, src, pg, tag, group_src)
    return pg.ranks[work.result()]


__all__ = ["irecv", "isend", "recv", "send"]
