"""Thread-local modes (grad recording, anomaly detection, graph tracing) as context managers.

Every mode lives here and nowhere else; other modules read ``state`` directly on hot paths.

>>> import ember
>>> x = ember.ones(2, requires_grad=True)
>>> with ember.no_grad():
...     (x * 2).requires_grad
False
"""

from __future__ import annotations

import functools
import inspect
import os
import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled = True
        self.anomaly = False
        self.anomaly_check_nan = True  # what anomaly mode checks for NaN/Inf (when it is on)
        self.tracer = None  # set by ember.static while a graph is being built
        self.autocast = None  # ember.amp.autocast_mode.Policy inside an autocast region
        self.inference = False  # inside inference_mode (which also turns grad recording off)

    @property
    def grad_and_inference(self) -> tuple:
        """``(grad_enabled, inference)``: the pair ``inference_mode`` sets and restores."""
        return self.grad_enabled, self.inference

    @grad_and_inference.setter
    def grad_and_inference(self, value: tuple) -> None:
        self.grad_enabled, self.inference = value

    @property
    def anomaly_and_check_nan(self) -> tuple:
        """``(anomaly, anomaly_check_nan)``: the pair ``detect_anomaly`` sets and restores."""
        return self.anomaly, self.anomaly_check_nan

    @anomaly_and_check_nan.setter
    def anomaly_and_check_nan(self, value: tuple) -> None:
        self.anomaly, self.anomaly_check_nan = value


state = _State()


class _Mode:
    """A context manager that is also a decorator, restoring the previous value on exit."""

    _attr = ""

    def __init__(self, value) -> None:
        self._value = value
        self._saved: list = []

    def __enter__(self):
        self._saved.append(getattr(state, self._attr))
        setattr(state, self._attr, self._value)
        return self

    def __exit__(self, *exc) -> bool:
        setattr(state, self._attr, self._saved.pop())
        return False

    def __call__(self, fn):
        attr, value = self._attr, self._value
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(fn, attr, value)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            previous = getattr(state, attr)
            setattr(state, attr, value)
            try:
                return fn(*args, **kwargs)
            finally:
                setattr(state, attr, previous)

        return wrapper


def _wrap_generator(fn, attr: str, value):
    """A generator function whose body runs in the mode each time it resumes (not in between)."""

    def step(send, *args):
        previous = getattr(state, attr)
        setattr(state, attr, value)
        try:
            return send(*args)
        finally:
            setattr(state, attr, previous)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            response = step(gen.send, None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    gen.close()
                    raise
                except BaseException as e:
                    response = step(gen.throw, e)
                else:
                    response = step(gen.send, request)
        except StopIteration as stop:
            return stop.value

    return wrapper


class tracing(_Mode):
    """Send every op to ``tracer.record`` instead of running it (``ember.static`` uses this).

    >>> from ember._config import state, tracing
    >>> with tracing(None):
    ...     state.tracer is None
    True
    """

    _attr = "tracer"


class _BareDecorator:
    """Lets a mode taking no arguments decorate without parentheses: ``@ember.no_grad``."""

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if fn is None:
            return self
        self.__init__()
        return self(fn)  # not an instance: Python skips __init__


class _GradMode(_Mode):
    _attr = "grad_enabled"


class no_grad(_BareDecorator, _GradMode):
    """Run without recording autograd history (context manager or decorator, with or without
    parentheses). Thread-local, like every mode here.

    >>> import ember
    >>> @ember.no_grad()
    ... def f(x): return x * 2
    >>> f(ember.ones(1, requires_grad=True)).requires_grad
    False
    """

    def __init__(self, fn=None) -> None:
        super().__init__(False)


class enable_grad(_BareDecorator, _GradMode):
    """Record autograd history even inside ``no_grad`` (context manager or decorator).

    >>> import ember
    >>> with ember.no_grad():
    ...     with ember.enable_grad():
    ...         (ember.ones(1, requires_grad=True) * 2).requires_grad
    True
    """

    def __init__(self, fn=None) -> None:
        super().__init__(True)


class inference_mode(_Mode):
    """Like ``no_grad``, and ``is_inference_mode_enabled()`` says so; ``mode=False`` turns grad
    recording on, as PyTorch's does (ember has no separate inference tensors).

    >>> import ember
    >>> with ember.inference_mode():
    ...     (ember.ones(1, requires_grad=True) * 2).requires_grad, ember.is_inference_mode_enabled()
    (False, True)
    """

    _attr = "grad_and_inference"

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # @ember.inference_mode without parentheses
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        super().__init__((False, True) if mode else (True, False))


class set_grad_enabled(_GradMode):
    """Turn grad recording on or off: takes effect at once, and undoes itself as a context manager.

    >>> import ember
    >>> with ember.set_grad_enabled(False):
    ...     ember.is_grad_enabled()
    False
    >>> ember.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
        self._saved.append(state.grad_enabled)
        state.grad_enabled = bool(mode)

    def __enter__(self):
        return self  # the switch already happened in __init__; __exit__ restores

    def __call__(self, fn):
        state.grad_enabled = self._saved.pop()  # used as a decorator: undo the eager switch
        return super().__call__(fn)


def is_inference_mode_enabled() -> bool:
    """Whether code runs inside ``inference_mode``.

    >>> import ember
    >>> ember.is_inference_mode_enabled()
    False
    """
    return state.inference


def is_grad_enabled() -> bool:
    """Whether ops record autograd history now.

    >>> import ember
    >>> ember.is_grad_enabled()
    True
    """
    return state.grad_enabled


class detect_anomaly(_Mode):
    """Stop at the first op whose forward or backward makes NaN or Inf, naming the op and the line.

    >>> import ember
    >>> with ember.autograd.detect_anomaly():
    ...     y = ember.tensor([1.0, 2.0], requires_grad=True) * 2
    """

    _attr = "anomaly_and_check_nan"

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__((True, bool(check_nan)))


class set_detect_anomaly(detect_anomaly):
    """Turn anomaly detection on or off: at once, and undone on exit as a context manager.

    >>> import ember
    >>> with ember.autograd.set_detect_anomaly(True):
    ...     ember.autograd.is_anomaly_enabled()
    True
    >>> ember.autograd.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        _Mode.__init__(self, (bool(mode), bool(check_nan)))
        self._saved.append(state.anomaly_and_check_nan)
        state.anomaly_and_check_nan = self._value

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.anomaly_and_check_nan = self._saved.pop()
        return super().__call__(fn)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    >>> import ember
    >>> ember.autograd.is_anomaly_enabled()
    False
    """
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode stops at NaN/Inf (``check_nan``); it records where each op was
    called either way.

    >>> import ember
    >>> with ember.autograd.detect_anomaly(check_nan=False):
    ...     ember.is_anomaly_enabled(), ember.is_anomaly_check_nan_enabled()
    (True, False)
    """
    return state.anomaly_check_nan


def graph_tracer(*tensors):
    """The tracer an in-place write must go through, or None to write eagerly.

    ``ember.compile``'s tracer sees every write; a define-and-run graph (placeholders at top
    level leave one active) only writes that involve one of its symbolic values, so ordinary
    tensors keep working eagerly beside it.
    """
    tr = state.tracer
    if tr is None or not getattr(tr, "define", False):
        return tr
    for t in tensors:
        if getattr(getattr(t, "_data", None), "is_symbol", False):
            return tr
    return None


# ---- process-wide settings (PyTorch keeps these global, not per thread) -----------------


class _Settings:
    deterministic = False
    deterministic_warn_only = False
    num_threads: int | None = None  # None: as OpenBLAS starts (its env variables, else cores)


settings = _Settings()


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms, as ``torch.use_deterministic_algorithms``.

    ember's CPU kernels (NumPy) already give the same bits run after run, so this records
    the choice for ``are_deterministic_algorithms_enabled``.

    >>> import ember
    >>> ember.use_deterministic_algorithms(True); ember.are_deterministic_algorithms_enabled()
    True
    >>> ember.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
            f"{type(mode).__name__}"
        )
    settings.deterministic = mode
    settings.deterministic_warn_only = bool(warn_only)  # kept even with mode off, as torch


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    >>> import ember
    >>> ember.are_deterministic_algorithms_enabled()
    False
    """
    return settings.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was asked for with ``warn_only=True``.

    >>> import ember
    >>> ember.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return settings.deterministic_warn_only


def set_num_threads(n: int) -> None:
    """The threads ember's CPU work uses, as ``torch.set_num_threads``: numba's threads, over
    which ember splits its kernels and large matrix products, each product's part on one
    OpenBLAS thread (``ember.backend.blas``); with 1, or without numba, OpenBLAS gets ``n``.
    ``get_num_threads`` reports it.

    >>> import ember
    >>> ember.set_num_threads(1); ember.get_num_threads()
    1
    """
    if int(n) < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    settings.num_threads = int(n)


def get_num_threads() -> int:
    """The threads for parallel CPU work: ``set_num_threads``'s value, else as OpenBLAS
    starts (``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS``, else one per core).

    >>> import ember
    >>> ember.get_num_threads() >= 1
    True
    """
    if settings.num_threads is not None:
        return settings.num_threads
    return blas_threads()


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def blas_threads(cores: int | None = None) -> int:
    """The threads OpenBLAS starts with: its environment variables as it reads them when it
    loads, else one per core (``cores``, default ``CORES``).

    >>> blas_threads(cores=4) >= 1
    True
    """
    global _blas_start
    if cores is not None:
        return _blas_env(cores)
    if _blas_start is None:  # read once: OpenBLAS reads its environment when it loads
        _blas_start = _blas_env(CORES)
    return _blas_start


_blas_start: int | None = None


def _blas_env(cores: int) -> int:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.split(",")[0].strip().isdigit():
            return max(1, int(value.split(",")[0]))
    return cores
