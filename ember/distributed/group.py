"""Process groups: ``init_process_group``, ``new_group``, ranks and sizes.

A ``ProcessGroup`` wraps an MPI communicator (its own duplicate, so ember's traffic never
meets the user's own mpi4py calls) with the group's timeout and a sequence number that every
collective increments, so a timeout or a mismatch names "all_reduce #12".

``EMBER_DISTRIBUTED_DEBUG=1`` (read once, at ``init_process_group``) makes every collective
first exchange its name, shapes, dtypes, op and root with the other ranks and raise, naming
both sides, when they differ, instead of returning garbage or hanging.

>>> import ember.distributed as dist
>>> dist.is_initialized()
False
"""

from __future__ import annotations

import datetime
import os
import sys

from . import _mpi
from ._mpi import DistributedError

DEFAULT_TIMEOUT_S = 1800.0  # PyTorch's default for gloo / MPI: 30 minutes


class ProcessGroup:
    """A set of ranks that run collectives together (PyTorch's ``ProcessGroup``).

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size;
    ``ranks`` lists the members' global ranks.
    """

    def __init__(self, comm, ranks, timeout: float, name: str, debug: bool) -> None:
        self.comm = comm
        self.ranks = tuple(ranks)
        self.timeout = timeout
        self.name = name
        self.debug = debug
        self._seq = 0
        # the communication thread's own communicator (made here, where every rank is: a
        # Dup at the thread's first use would wait without a timeout for a late rank)
        self.async_comm = comm.Dup() if comm.size > 1 else None
        self._comm_thread = None  # _thread.CommThread: async all-reduces (started on first use)

    def free(self) -> None:
        """Release the communicators (the communication thread ends after its queued jobs)."""
        ended = self._comm_thread is None or self._comm_thread.close(min(self.timeout, 10.0))
        self._comm_thread = None
        if self.async_comm is not None and ended:
            self.async_comm.Free()
        self.comm.Free()

    def rank(self) -> int:
        return self.comm.rank

    def size(self) -> int:
        return self.comm.size

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.name} ranks={list(self.ranks)}>"

    def group_rank(self, global_rank: int, role: str, collective: str) -> int:
        """The rank in this group of the process with ``global_rank`` (``src=`` / ``dst=``)."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise DistributedError(
                f"{collective}: {role}={global_rank} is not a member of {self.name} (global "
                f"ranks {list(self.ranks)})"
            ) from None

    def begin(self, collective: str, signature: tuple, detail: str) -> str:
        """Count one collective and return its description (for errors); in debug mode, check
        that every rank calls the same collective with matching ``signature``."""
        self._seq += 1
        what = f"{collective} #{self._seq} on {self.name} (rank {self.rank()} of {self.size()}"
        what += f"; {detail})" if detail else ")"
        if self.debug:
            self._check(collective, signature, what)
        return what

    def _check(self, collective: str, signature: tuple, what: str) -> None:
        mine = f"{collective} #{self._seq} with {', '.join(map(str, signature))}"
        theirs = _mpi.allgather_text(self.comm, mine, what, self.timeout)
        for r, other in enumerate(theirs):
            if other != mine:
                raise DistributedError(
                    f"{what}: ranks disagree: rank {self.rank()} calls {mine}, rank {r} calls "
                    f"{other} (EMBER_DISTRIBUTED_DEBUG)"
                )


class _NonMember:
    """What ``new_group`` returns on ranks outside the group (PyTorch's NON_GROUP_MEMBER)."""

    name = "a group this rank is not in"

    def __repr__(self) -> str:
        return "<ProcessGroup: not a member>"


NON_GROUP_MEMBER = _NonMember()


class group:  # noqa: N801  (PyTorch spells it dist.group.WORLD)
    """``dist.group.WORLD``: the default group (None before ``init_process_group``)."""

    WORLD: ProcessGroup | None = None


GroupMember = group


def _seconds(timeout) -> float:
    return DEFAULT_TIMEOUT_S if timeout is None else _mpi.seconds(timeout)


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | float | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the job's default process group (the processes ``ember run -n N`` or any MPI
    launcher started).

    ``backend`` is ``"mpi"`` (also the default) or ``"gloo"``, which means MPI here; ``"nccl"``
    is not built yet: CuPy tensors work on ``"mpi"``, staged through the host. Ranks come from
    MPI; ``RANK`` / ``WORLD_SIZE`` (``env://``) and ``rank=`` / ``world_size=``, when given,
    must agree with it. ``timeout`` (a timedelta or seconds, default 30 minutes) bounds every
    collective: a peer that does not join in time is an error naming the collective.

    >>> import ember.distributed as dist
    >>> dist.init_process_group("gloo")  # doctest: +SKIP
    >>> dist.get_rank(), dist.get_world_size()  # doctest: +SKIP
    (0, 1)
    """
    if group.WORLD is not None:
        raise DistributedError("init_process_group: the default process group is already set up")
    name = (backend or "mpi").lower()
    if name == "nccl":
        raise DistributedError(
            "init_process_group: the 'nccl' backend is not built yet; use 'mpi' (or 'gloo'), "
            "which also takes CuPy (cuda) tensors, staged through the host"
        )
    if name not in ("mpi", "gloo"):
        raise DistributedError(
            f"init_process_group: unknown backend {backend!r}; ember has 'mpi' ('gloo' means mpi)"
        )
    if init_method not in (None, "env://") or store is not None:
        raise DistributedError(
            f"init_process_group: init_method={init_method!r}: ember's ranks find each other "
            "through MPI; start them with 'ember run -n N script.py' (or any mpiexec) and leave "
            "init_method unset or 'env://'"
        )
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    _agree("RANK", world.rank, rank, os.environ.get("RANK"))
    _agree("WORLD_SIZE", world.size, world_size, os.environ.get("WORLD_SIZE"))
    debug = os.environ.get("EMBER_DISTRIBUTED_DEBUG", "0") not in ("", "0")
    group.WORLD = ProcessGroup(world.Dup(), range(world.size), _seconds(timeout), "WORLD", debug)
    if world.size > 1:
        _abort_on_uncaught_exception()


def _agree(what: str, actual: int, arg: int, env: str | None) -> None:
    for source, value in (("argument", arg), ("environment variable", env)):
        if value is None or int(value) == -1:
            continue
        if int(value) != actual:
            raise DistributedError(
                f"init_process_group: {what}={value} ({source}) but MPI started this process "
                f"as {what.lower()} {actual}; launch with 'ember run -n N' (or mpiexec) and let "
                "MPI decide"
            )


def _abort_on_uncaught_exception() -> None:
    """An uncaught exception prints its traceback, then ends every rank (MPI_Abort): left to
    itself, the failing rank would wait in MPI_Finalize and the others in their collective."""
    previous = sys.excepthook
    if getattr(previous, "_ember_abort", False):
        return

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        sys.stderr.flush()
        if group.WORLD is not None:
            _mpi.mpi().COMM_WORLD.Abort(1)

    hook._ember_abort = True
    sys.excepthook = hook


def destroy_process_group(group_: ProcessGroup | None = None) -> None:
    """Leave ``group_`` (default: every group; ``init_process_group`` may then run again).

    >>> import ember.distributed as dist
    >>> dist.destroy_process_group()  # doctest: +SKIP
    """
    if group_ is None:
        pg = group.WORLD
        group.WORLD = None
        if pg is not None:
            pg.free()
        return
    if isinstance(group_, ProcessGroup) and group_ is not group.WORLD:
        group_.free()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not).

    >>> import ember.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return group.WORLD is not None


def is_available() -> bool:
    """Whether ember.distributed can run here (mpi4py and an MPI library are installed)."""
    return _mpi.available()


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    """'gloo' means MPI in ember."""
    return _mpi.available()


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def resolve(group_: ProcessGroup | None, collective: str) -> ProcessGroup:
    """The group a collective runs on: ``group_`` or the default one, with clear errors."""
    if group_ is None:
        group_ = group.WORLD
        if group_ is None:
            raise DistributedError(
                f"{collective}: the default process group has not been initialized; call "
                "ember.distributed.init_process_group() first"
            )
        return group_
    if group_ is NON_GROUP_MEMBER:
        raise DistributedError(f"{collective}: this rank is not a member of the group")
    if not isinstance(group_, ProcessGroup):
        raise DistributedError(
            f"{collective}: group= takes a ProcessGroup from new_group(), not "
            f"{type(group_).__name__}"
        )
    return group_


def new_group(
    ranks: list[int] | None = None,
    timeout: datetime.timedelta | float | None = None,
    backend: str | None = None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id=None,
):
    """A new group of the given global ``ranks`` (default: all). Every rank of the default
    group must call it, members or not; non-members get ``GroupMember.NON_GROUP_MEMBER``.

    >>> import ember.distributed as dist
    >>> evens = dist.new_group([0, 2])  # doctest: +SKIP
    """
    world = resolve(None, "new_group")
    members = sorted(set(range(world.size()) if ranks is None else (int(r) for r in ranks)))
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad:
        raise DistributedError(
            f"new_group: ranks {bad} are outside the world of {world.size()} processes"
        )
    MPI = _mpi.mpi()
    mine = world.rank() in members
    comm = world.comm.Split(0 if mine else MPI.UNDEFINED, world.rank())
    if not mine:
        return NON_GROUP_MEMBER
    limit = world.timeout if timeout is None else _seconds(timeout)
    return ProcessGroup(comm, members, limit, group_desc or f"group{members}", world.debug)


def get_rank(group: ProcessGroup | None = None) -> int:  # noqa: F811
    """This process's rank in ``group`` (default: the world); -1 outside the group.

    >>> import ember.distributed as dist
    >>> dist.get_rank()  # doctest: +SKIP
    0
    """
    if group is NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_rank").rank()


def get_world_size(group: ProcessGroup | None = None) -> int:  # noqa: F811
    """The number of processes in ``group`` (default: the world); -1 outside the group.

    >>> import ember.distributed as dist
    >>> dist.get_world_size()  # doctest: +SKIP
    2
    """
    if group is NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_world_size").size()


def get_backend(group: ProcessGroup | None = None) -> str:  # noqa: F811
    """The group's backend: always ``"mpi"``."""
    resolve(group, "get_backend")
    return "mpi"


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:  # noqa: F811
    """The global rank of ``group``'s member ``group_rank``."""
    return resolve(group, "get_global_rank").ranks[group_rank]


def get_process_group_ranks(group: ProcessGroup) -> list[int]:  # noqa: F811
    """The global ranks of ``group``'s members."""
    return list(resolve(group, "get_process_group_ranks").ranks)
