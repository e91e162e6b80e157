"""Atomic file writes: a temp file in the same folder, fsync, ``os.replace``, fsync the folder.

A crash (or an exception) before the rename leaves the old file untouched and removes the
temp file; readers see either the whole old file or the whole new one.

A killed process can't remove its temp file, so each write first removes the stale temps of
its own target. Temps are named ``.{name}.{host}-{pid}.{random}.tmp`` (``host``: 8 hex digits
of a hash of the host name) and their writer holds an ``flock`` on them until the rename. A
temp is stale when no process holds its lock and either its writer (same host) is gone or it
is over a minute old; without ``flock`` (Windows, some network file systems) the rule is the
writer gone or a day old, and Windows refuses to delete a file that is still open anyway.
Temps of older ember versions (``.{name}.{random}.tmp``) go when a day old.

>>> import os, tempfile
>>> from ember.serialization.atomic import atomic_write
>>> path = os.path.join(tempfile.mkdtemp(), "f.bin")
>>> with atomic_write(path) as f:
...     _ = f.write(b"hello")
>>> open(path, "rb").read()
b'hello'
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import tempfile
import time
import zlib
from collections.abc import Iterator
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

GRACE_S = 60.0  # an unlocked temp of a writer we can't see is stale after this long
UNLOCKED_MAX_AGE_S = 24 * 3600.0  # without locks, or an older ember's temp
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"


def _temp_pattern(base: str) -> re.Pattern:
    """Temp names of ``base``: group 1 the host hash, 2 the pid (None for older embers)."""
    return re.compile(rf"\.{re.escape(base)}\.(?:([0-9a-f]{{8}})-([0-9]+)\.)?[a-z0-9_]{{8}}\.tmp")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # exists (another user's), or can't tell
        return True
    return True


def _lock(fd: int, blocking: bool) -> bool | None:
    """Take an exclusive flock: True if taken, False if another holds it, None if unsupported."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def remove_stale_temps(path) -> list[str]:
    """Remove the temp files that killed writers to ``path`` left behind; return their paths.

    Only names of ``atomic_write``'s temps for this very target are considered, and a temp a
    live writer holds is never touched (see the module docstring for the rule).

    >>> import os, tempfile
    >>> from ember.serialization.atomic import remove_stale_temps
    >>> folder = tempfile.mkdtemp()
    >>> stale = os.path.join(folder, ".ckpt.00000000-999999999.abcd_123.tmp")
    >>> open(stale, "wb").close()
    >>> os.utime(stale, (0, 0))  # unlocked and old: its writer died long ago
    >>> [os.path.basename(p) for p in remove_stale_temps(os.path.join(folder, "ckpt"))]
    ['.ckpt.00000000-999999999.abcd_123.tmp']
    """
    path = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(path)
    pattern = _temp_pattern(base)
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    now = time.time()
    for name in names:
        m = pattern.fullmatch(name)
        if m is None:
            continue
        tmp = os.path.join(folder, name)
        try:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (
                hasattr(os, "geteuid") and st.st_uid != os.geteuid()
            ):
                continue
            age = now - st.st_mtime
            host, pid = m.group(1), m.group(2)
            if pid is None:  # an older ember's temp: no owner to ask
                stale = age > UNLOCKED_MAX_AGE_S
            else:
                gone = host == _HOST and not _pid_alive(int(pid))
                locked = _lock(fd, blocking=False)
                if locked is False:
                    continue  # a live writer
                stale = gone or age > (GRACE_S if locked else UNLOCKED_MAX_AGE_S)
            if stale:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                    removed.append(tmp)
        finally:
            os.close(fd)
    return removed


def _umask() -> int:
    try:  # Linux: no need to change the process umask (not thread-safe) to read it
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(folder: str) -> None:
    """Make the rename durable; folders cannot be opened for this on Windows."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path) -> Iterator[BinaryIO]:
    """Yield a binary file that replaces ``path`` only once the block finishes without error.

    A symlink at ``path`` is written through (its target is replaced, the link is kept), and the
    new file keeps the old one's permissions (a new file gets ``0o666`` less the umask, as
    ``open`` would give). Stale temps that killed writes to ``path`` left are removed first
    (``remove_stale_temps``).

    >>> import os, tempfile
    >>> from ember.serialization.atomic import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "f.txt")
    >>> with atomic_write(path) as f:
    ...     _ = f.write(b"new")
    >>> open(path, "rb").read()
    b'new'
    """
    path = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.{_HOST}-{os.getpid()}.", suffix=".tmp", dir=folder)
    # the lock says "a live writer" to remove_stale_temps; held on its own descriptor until the
    # rename (the file's is closed before it)
    lock_fd = os.dup(fd)
    _lock(lock_fd, blocking=True)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        os.close(lock_fd)
    _fsync_dir(folder)
