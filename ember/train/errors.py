"""What the training loop raises and warns.

>>> from ember.train import NonFiniteLossError, InputBoundWarning
>>> issubclass(NonFiniteLossError, RuntimeError), issubclass(InputBoundWarning, UserWarning)
(True, True)
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from typing import IO

from .._errors import EmberError

__all__ = ["NonFiniteLossError", "InputBoundWarning", "TrainingInterrupted", "one_line_warnings"]


class NonFiniteLossError(EmberError):
    """The loss became NaN or infinite; training stopped.

    ``epoch`` (1-based), ``step`` (1-based, within the epoch), ``global_step``, ``loss`` and
    ``checkpoint`` (the last good checkpoint's path, or ``None``) say where and what.
    """

    def __init__(
        self, message: str, *, epoch: int, step: int, global_step: int, loss: float, checkpoint
    ) -> None:
        super().__init__(message)
        self.epoch, self.step, self.global_step = epoch, step, global_step
        self.loss, self.checkpoint = loss, checkpoint


class InputBoundWarning(UserWarning):
    """The training loop spends much of each step waiting for the next batch."""


class TrainingInterrupted(KeyboardInterrupt):
    """Training was interrupted (Ctrl-C, or ``KeyboardInterrupt`` from a callback).

    ``checkpoint`` is where the training state went (``None`` when nothing could be written),
    ``epoch`` (1-based) and ``step`` (batches done in that epoch) where it stopped. It is a
    ``KeyboardInterrupt``, so code that already catches that keeps working.
    """

    def __init__(self, message: str, *, epoch: int, step: int, checkpoint) -> None:
        super().__init__(message)
        self.epoch, self.step, self.checkpoint = epoch, step, checkpoint


@contextlib.contextmanager
def one_line_warnings(stream: IO[str] | None = None, prefix: str = "warning: ") -> Iterator[None]:
    """Show every warning raised inside the block as one plain line on ``stream`` (default
    stderr), without the file and source line Python adds: what a command-line tool prints.

    >>> import io, warnings
    >>> from ember.train import InputBoundWarning, one_line_warnings
    >>> out = io.StringIO()
    >>> with one_line_warnings(out):
    ...     warnings.warn("waiting for data 62% of each step: raise --workers (now 0)",
    ...                   InputBoundWarning)
    >>> out.getvalue()
    'warning: waiting for data 62% of each step: raise --workers (now 0)\\n'
    """

    def show(message, category, filename, lineno, file=None, line=None):
        out = stream if stream is not None else sys.stderr
        out.write(f"{prefix}{message}\n")
        out.flush()

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield
