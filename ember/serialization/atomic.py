"""Atomic file writes: a temp file in the same folder, fsync, ``os.replace``, fsync the folder.

A crash (or an exception) before the rename leaves the old file untouched and removes the
temp file; readers see either the whole old file or the whole new one.

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
import stat
import tempfile
from collections.abc import Iterator
from typing import BinaryIO


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
    ``open`` would give).
    """
    path = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
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
    _fsync_dir(folder)
