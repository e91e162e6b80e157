"""Optional numba kernels (compiled graphs' fused nodes, CPU op overrides such as max-pool's):
compiled off the caller's thread, cached on disk. It sits in the backend layer, below the ops
and ``ember.static`` that both use it.

numba is not a dependency of ember (install the ``jit`` extra: ``pip install ember[jit]``).
When it can be imported, ``kernel(name, source)`` returns a handle whose ``fn`` is set once the
kernel is compiled; until then (or without numba, or with ``EMBER_JIT=0``) callers run their
NumPy path. Compiling happens on one background thread (the first kernel also imports numba,
~1 s), so a step never waits for a compile. The generated source is written to
``$EMBER_CACHE_DIR`` (default ``~/.cache/ember/jit``) and compiled with ``cache=True``, so a
later process loads the machine code from disk. A kernel whose whole module an earlier process
compiled with this numba on this kind of CPU (a ``.ready`` marker beside its source) loads in
the caller instead:
that takes milliseconds, and a run then starts on its kernels, so its results do not depend on
when a background compile ends (``ember train`` twice on a warm machine: the same weights, bit
for bit; a first run on a cold machine, whose steps start on NumPy, may differ from later ones
in the last bits).

``set_mode("sync")`` (or ``EMBER_JIT=sync``) compiles in the caller instead, ``set_mode("off")``
turns kernels off; ``wait()`` blocks until every requested kernel is ready (benchmarks). A child
forked after numba's parallel kernels ran has kernels off (GNU OpenMP does not survive fork).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import queue
import sys
import tempfile
import threading

import numpy as np

from .. import _caches

_MODES = {"auto", "sync", "off"}
_mode = os.environ.get("EMBER_JIT", "auto").lower()
if _mode in ("0", "false", "no", "none"):
    _mode = "off"
elif _mode in ("1", "true", "yes", "on"):
    _mode = "auto"
elif _mode not in _MODES:
    _mode = "auto"

_available = None
_kernels: dict = {}
_named: dict = {}  # name -> the Kernel of a fixed source (``module``): no hashing per call


def _clear() -> None:
    _kernels.clear()
    _named.clear()


_caches.register("numba kernels", _clear, _kernels.__len__)
_lock = threading.Lock()
_queue: queue.Queue = queue.Queue()
_worker = None


class Kernel:
    """A kernel being compiled: ``fn`` (None until ready: then ``kernel`` of the generated
    module; ``module`` holds any others), ``error`` (why it failed)."""

    __slots__ = ("name", "source", "fn", "module", "error", "done")

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source
        self.fn = None
        self.module = None
        self.error = None
        self.done = threading.Event()


def set_mode(mode: str) -> str:
    """``"auto"`` (background compile), ``"sync"`` (compile in the caller) or ``"off"``;
    returns the previous mode."""
    global _mode
    if mode not in _MODES:
        raise ValueError(f"jit mode must be one of {sorted(_MODES)}, not {mode!r}")
    prev, _mode = _mode, mode
    return prev


def mode() -> str:
    return _mode


def available() -> bool:
    """Whether numba can be imported (checked once, without importing it)."""
    global _available
    if _available is None:
        _available = importlib.util.find_spec("numba") is not None
    return _available


def enabled() -> bool:
    return _mode != "off" and available()


def kernel(name: str, source: str):
    """The handle of the kernel ``name`` defined by ``source`` (compiled once per source), or
    None when kernels are off."""
    if not enabled():
        return None
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    with _lock:
        k = _kernels.get(key)
        if k is not None:
            return k
        k = _kernels[key] = Kernel(f"{name}_{key}", source)
    if _mode == "sync" or _ready_on_disk(k):
        _build(k)
    else:
        _start()
        _queue.put(k)
    return k


def module(name: str, source: str):
    """The compiled module of the fixed kernel source ``source`` (its ``kernel`` and the other
    functions it defines), asked for under ``name``: None while kernels are off, while it
    compiles (in the background unless the mode is ``"sync"``) or if it failed; the caller then
    runs NumPy. After the first call a call costs a dict lookup, not hashing the source.

    >>> prev = set_mode("off")
    >>> module("twice", HEADER + "kernel = lambda x: 2 * x\\n") is None
    True
    >>> _ = set_mode(prev)
    """
    if not enabled():
        return None
    k = _named.get(name)
    if k is None:
        k = _named[name] = kernel(name, source)
    return None if k is None or k.fn is None else k.module


FLOATS = ("float32", "float64")  # the dtypes the ops' numba kernels are compiled for
FLOAT_NP_DTYPES = frozenset(np.dtype(n) for n in FLOATS)  # dtype objects: a set lookup, while
# ``dtype.name`` costs about 5 us a call (NumPy builds the name from the type each time)


def float_module(name: str, source: str, *dtypes):
    """``module(name, source)`` for kernels compiled for float32 and float64 signatures: None
    unless ``dtypes`` (NumPy dtypes) are all float32 or all float64.

    >>> import numpy as np
    >>> float_module("twice", HEADER, np.dtype(np.int64)) is None
    True
    """
    d = dtypes[0]
    if d not in FLOAT_NP_DTYPES or any(e != d for e in dtypes[1:]):
        return None
    return module(name, source)


def wait(timeout: float | None = None) -> bool:
    """Block until every requested kernel is compiled (or failed); False on timeout."""
    for k in list(_kernels.values()):
        if not k.done.wait(timeout):
            return False
    return True


def _start() -> None:
    global _worker
    with _lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="ember-jit", daemon=True)
            _worker.start()


_stopping = threading.Event()
_idle = threading.Event()
_idle.set()


def _work() -> None:
    while True:
        k = _queue.get()
        if _stopping.is_set():  # the interpreter is exiting: leave it to the NumPy path
            k.error = "not compiled: the interpreter exited first"
            k.done.set()
            continue
        _idle.clear()
        try:
            _build(k)
        finally:
            _idle.set()


def _after_fork_in_child() -> None:
    """A forked child of a process whose numba kernels ran on its OpenMP threads runs NumPy:
    GNU OpenMP's threads do not survive ``fork``, and numba ends a child that starts a parallel
    loop there ("fork() called from a process already using GNU OpenMP")."""
    global _mode
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is not None and getattr(parallel, "_is_initialized", False):
        _mode = "off"


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _finish() -> None:
    """Let a kernel being compiled finish before the interpreter tears down (compiling on a
    daemon thread during shutdown is not safe); queued ones are dropped."""
    _stopping.set()
    _idle.wait(5)


def _cache_dir() -> str:
    d = os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ember", "jit"
    )
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    d = os.path.join(tempfile.gettempdir(), "ember-jit")
    os.makedirs(d, exist_ok=True)
    return d


def _build(k: Kernel) -> None:
    try:
        try:
            k.module = _load(k)
        except Exception:  # noqa: BLE001 - a stale or broken disk cache: drop it, compile again
            import glob

            d = os.path.join(_cache_dir(), "__pycache__")
            for f in glob.glob(os.path.join(d, k.name + ".*")):
                os.remove(f)
            k.module = _load(k)
        k.fn = k.module.kernel
        _mark_ready(k)
    except Exception as e:  # noqa: BLE001 - the NumPy path stays in use
        k.error = f"{type(e).__name__}: {e}"
    finally:
        k.done.set()


def _marker(k: Kernel) -> str:
    return os.path.join(_cache_dir(), k.name + ".ready")


def _stamp() -> str:
    """What numba's cache of a module holds for: numba's version and this CPU (its name and
    features, as LLVM sees them; a cache shared by machines of two kinds misses on the other)."""
    global _stamp_text
    if _stamp_text is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            import llvmlite.binding as llvm

            features = llvm.get_host_cpu_features().flatten()
            _stamp_text = " ".join(
                (
                    version("numba"),
                    llvm.get_host_cpu_name(),
                    hashlib.sha1(features.encode()).hexdigest()[:12],
                )
            )
        except (ImportError, PackageNotFoundError):
            _stamp_text = ""
    return _stamp_text


_stamp_text: str | None = None


def _ready_on_disk(k: Kernel) -> bool:
    """Whether an earlier process on a machine like this one compiled ``k``'s whole module with
    this numba (the marker ``_build`` leaves), so that loading it from numba's cache takes
    milliseconds."""
    try:
        with open(_marker(k)) as f:
            return f.read() == _stamp()
    except OSError:
        return False


def _mark_ready(k: Kernel) -> None:
    if _ready_on_disk(k):
        return
    path = _marker(k)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "w") as f:
            f.write(_stamp())
        os.replace(tmp, path)
    except OSError:  # a read-only cache: kernels keep compiling in the background
        pass


def _load(k: Kernel):
    path = os.path.join(_cache_dir(), k.name + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(k.source)
        os.replace(tmp, path)
    modname = f"ember_jit_{k.name}"
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod  # numba's cache finds the module by name when it loads
    try:
        spec.loader.exec_module(mod)  # compiles (or loads from numba's cache): signatures given
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod


NUMBA_TYPES = {
    "float32": "float32",
    "float64": "float64",
    "bool": "boolean",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
}

HEADER = (
    "import numpy as np\n"
    "from numba import njit, types\n\n\n"
    "def ro(t, nd=1):\n"
    '    return types.Array(getattr(types, t), nd, "C", readonly=True)\n\n\n'
    "def rw(t, nd=1):\n"
    '    return types.Array(getattr(types, t), nd, "C")\n\n\n'
    "def ra(t, nd=1):\n"
    '    return types.Array(getattr(types, t), nd, "A", readonly=True)\n\n'
)
