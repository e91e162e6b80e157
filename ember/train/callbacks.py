"""Callbacks: code the training loop runs at fixed points (train, epoch and batch boundaries).

Every hook gets the ``Trainer`` first; ``epoch`` and ``step`` are 0-based (printed 1-based).
``on_batch_end`` runs after each optimizer step with ``logs = {"loss": float, "batch_size":
int}``; ``on_epoch_end`` gets the epoch's row of ``trainer.history`` as a dict. A callback with
state to keep across a resume defines ``state_dict`` / ``load_state_dict`` (plain values); it
goes into the training-state checkpoint. Callbacks run in ascending ``order`` (then in the order
given): the progress bar first, loggers next, ``ModelCheckpoint`` last so that the state it
saves includes every other callback's update for the epoch.

>>> from ember.train import Callback
>>> class CountSteps(Callback):
...     def __init__(self): self.steps = 0
...     def on_batch_end(self, trainer, step, logs): self.steps += 1
...     def state_dict(self): return {"steps": self.steps}
...     def load_state_dict(self, state): self.steps = state["steps"]
>>> CountSteps().state_dict()
{'steps': 0}
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = [
    "Callback",
    "ModelCheckpoint",
    "EarlyStopping",
    "TensorBoardLogger",
    "CSVLogger",
    "PlotCallback",
    "ProgressBar",
    "LambdaCallback",
]

HOOKS = (
    "on_train_begin",
    "on_epoch_begin",
    "on_batch_begin",
    "on_batch_end",
    "on_epoch_end",
    "on_interrupt",
    "on_train_end",
)


class Callback:
    """Base class: override the hooks you need (the others cost nothing per step).

    >>> from ember.train import Callback
    >>> Callback.order
    0
    """

    order: int = 0

    def on_train_begin(self, trainer: Trainer) -> None:
        """``fit`` starts (also when it continues a resumed run)."""

    def on_epoch_begin(self, trainer: Trainer, epoch: int) -> None:
        """An epoch starts (or a resumed one continues)."""

    def on_batch_begin(self, trainer: Trainer, step: int) -> None:
        """A batch has been loaded; its step is about to run."""

    def on_batch_end(self, trainer: Trainer, step: int, logs: dict) -> None:
        """A step finished: ``logs = {"loss": float, "batch_size": int}``."""

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        """An epoch (training and evaluation) finished; ``logs`` is its history row."""

    def on_interrupt(self, trainer: Trainer) -> None:
        """Training is being interrupted at a consistent point (a checkpoint may be written)."""

    def on_train_end(self, trainer: Trainer) -> None:
        """``fit`` ends, however it ends (finished, stopped early, interrupted, failed)."""

    def state_dict(self) -> dict:
        """State to keep in the training checkpoint (plain values)."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what ``state_dict`` returned."""


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_batch_end=lambda tr, step, logs: ...)``.

    >>> from ember.train import LambdaCallback
    >>> seen = []
    >>> cb = LambdaCallback(on_epoch_end=lambda tr, epoch, logs: seen.append(epoch))
    >>> cb.on_epoch_end(None, 0, {}); seen
    [0]
    """

    def __init__(self, order: int = 0, **hooks: Any) -> None:
        unknown = set(hooks) - set(HOOKS)
        if unknown:
            raise TypeError(f"LambdaCallback: unknown hooks {sorted(unknown)}; known: {HOOKS}")
        self.order = order
        for name, fn in hooks.items():
            setattr(self, name, fn)


def resolve_mode(monitor: str, mode: str) -> str:
    """``'max'`` for accuracies, ``'min'`` otherwise, when ``mode='auto'``."""
    if mode == "auto":
        return "max" if ("acc" in monitor or "top" in monitor) else "min"
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min', 'max' or 'auto', got {mode!r}")
    return mode


def _pick_metric(monitor: str, logs: dict, who: str, warned: list) -> str | None:
    """``monitor`` if the logs have it; else its ``train_`` twin (no evaluation loader)."""
    if monitor in logs:
        return monitor
    if monitor.startswith("test_") and "train_" + monitor[5:] in logs:
        return "train_" + monitor[5:]
    if not warned:
        warned.append(True)
        warnings.warn(
            f"{who}: metric {monitor!r} is not logged (logged: {', '.join(logs)}); ignoring it",
            stacklevel=3,
        )
    return None


class ModelCheckpoint(Callback):
    """Write the training state and the best weights into ``dirpath``.

    - ``last.safetensors``: the full training state (``Trainer.save_checkpoint``) at every epoch
      end and when training is interrupted; resume from it with ``Trainer.resume``;
    - ``best.safetensors``: the model's ``state_dict`` only, whenever ``monitor`` improves
      (``model.load_state_dict(ember.load(path))`` loads it);
    - ``config.json``: ``trainer.config`` (when not empty), written once at the start.

    ``every_n_steps=N`` also saves ``last.safetensors`` every ``N`` optimizer steps (a
    mid-epoch state: resuming from it continues at that step).

    ``monitor`` falls back to its ``train_`` twin when there is no evaluation loader.

    >>> from ember.train import ModelCheckpoint
    >>> ModelCheckpoint("runs/x").mode
    'max'
    """

    order = 90

    def __init__(
        self,
        dirpath: str | os.PathLike,
        monitor: str = "test_acc",
        mode: str = "auto",
        save_last: bool = True,
        save_best: bool = True,
        last_name: str = "last.safetensors",
        best_name: str = "best.safetensors",
        every_n_steps: int = 0,
    ) -> None:
        self.dirpath = Path(dirpath)
        self.every_n_steps = int(every_n_steps)
        self.monitor = monitor
        self.mode = resolve_mode(monitor, mode)
        self.save_last, self.save_best = save_last, save_best
        self.last_path = self.dirpath / last_name
        self.best_path = self.dirpath / best_name
        self.best: float | None = None
        self.best_epoch: int | None = None
        self._warned: list = []

    def on_train_begin(self, trainer: Trainer) -> None:
        self.dirpath.mkdir(parents=True, exist_ok=True)
        if trainer.config:
            text = json.dumps(trainer.config, indent=2, sort_keys=True, default=str)
            (self.dirpath / "config.json").write_text(text + "\n")

    def _better(self, value: float) -> bool:
        if math.isnan(value):
            return False
        if self.best is None:
            return True
        return value > self.best if self.mode == "max" else value < self.best

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        if self.save_best:
            key = _pick_metric(self.monitor, logs, "ModelCheckpoint", self._warned)
            if key is not None and self._better(float(logs[key])):
                from ..serialization import save

                self.best, self.best_epoch = float(logs[key]), epoch + 1
                save(trainer.model.state_dict(), self.best_path)
        if self.save_last:
            trainer.save_checkpoint(self.last_path)

    def on_batch_end(self, trainer: Trainer, step: int, logs: dict) -> None:
        every = self.every_n_steps
        if every and self.save_last and trainer.global_step % every == 0:
            trainer.save_checkpoint(self.last_path)

    def on_interrupt(self, trainer: Trainer) -> None:
        if self.save_last:
            trainer.save_checkpoint(self.last_path)

    def state_dict(self) -> dict:
        return {"best": self.best, "best_epoch": self.best_epoch}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.best_epoch = state.get("best"), state.get("best_epoch")


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs (sets ``trainer.stop_training`` and ``trainer.stop_reason``).

    >>> from ember.train import EarlyStopping
    >>> es = EarlyStopping("test_loss", patience=1)
    >>> class T: stop_training = False; stop_reason = None
    >>> t = T()
    >>> for loss in [1.0, 0.5, 0.6, 0.7]:
    ...     es.on_epoch_end(t, 0, {"test_loss": loss})
    >>> t.stop_training, es.best
    (True, 0.5)
    """

    order = 10

    def __init__(
        self,
        monitor: str = "test_loss",
        patience: int = 5,
        min_delta: float = 0.0,
        mode: str = "auto",
    ) -> None:
        if patience < 0:
            raise ValueError(f"EarlyStopping: patience must be >= 0, got {patience}")
        self.monitor, self.patience, self.min_delta = monitor, int(patience), abs(float(min_delta))
        self.mode = resolve_mode(monitor, mode)
        self.best: float | None = None
        self.best_epoch: int | None = None
        self.wait = 0
        self._warned: list = []

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        key = _pick_metric(self.monitor, logs, "EarlyStopping", self._warned)
        if key is None:
            return
        value = float(logs[key])
        if self.best is None:
            improved = not math.isnan(value)
        elif self.mode == "max":
            improved = value > self.best + self.min_delta
        else:
            improved = value < self.best - self.min_delta
        if improved:
            self.best, self.best_epoch, self.wait = value, epoch + 1, 0
            return
        self.wait += 1
        if self.wait > self.patience:
            trainer.stop_training = True
            trainer.stop_reason = (
                f"early stopping: {key} has not improved for {self.wait} epochs "
                f"(best {self.best:.4g} at epoch {self.best_epoch})"
            )

    def state_dict(self) -> dict:
        return {"best": self.best, "best_epoch": self.best_epoch, "wait": self.wait}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.best_epoch = state.get("best"), state.get("best_epoch")
        self.wait = int(state.get("wait", 0))


def _tb_tag(key: str) -> str:
    for prefix in ("train_", "test_"):
        if key.startswith(prefix):
            return f"{key[len(prefix) :]}/{prefix[:-1]}"
    return {"epoch_time": "time/epoch_s", "data_wait": "time/data_wait_share"}.get(key, key)


class TensorBoardLogger(Callback):
    """TensorBoard event files in ``log_dir``: the training loss every ``every_n_steps`` steps
    (``loss/train_step``, by global step), every epoch metric (``loss/train``, ``acc/test``,
    ``lr``, ``time/epoch_s``..., by epoch number), a histogram of every parameter per epoch
    (``weights/<name>``) and ``trainer.config`` as a text table (``hparams``) at the start.

    >>> from ember.train import TensorBoardLogger
    >>> TensorBoardLogger("runs/x/tensorboard").every_n_steps
    1
    """

    order = 50

    def __init__(
        self, log_dir: str | os.PathLike, every_n_steps: int = 1, histograms: bool = True
    ) -> None:
        self.log_dir = Path(log_dir)
        self.every_n_steps = max(1, int(every_n_steps))
        self.histograms = histograms
        self.writer = None

    def on_train_begin(self, trainer: Trainer) -> None:
        try:
            from ..utils.tensorboard import SummaryWriter
        except ImportError as e:
            warnings.warn(f"TensorBoardLogger: no TensorBoard log ({e})", stacklevel=3)
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if trainer.global_step > 0:  # resumed: drop events a previous run wrote past this point
            try:
                self.writer = SummaryWriter(str(self.log_dir), purge_step=trainer.global_step)
            except TypeError:
                self.writer = SummaryWriter(str(self.log_dir))
        else:
            self.writer = SummaryWriter(str(self.log_dir))
        rows = {**trainer.config, **trainer.hparams()}
        if rows:
            table = "| name | value |\n|---|---|\n" + "\n".join(
                f"| {k} | {v} |" for k, v in rows.items()
            )
            self.writer.add_text("hparams", table, trainer.global_step)

    def on_batch_end(self, trainer: Trainer, step: int, logs: dict) -> None:
        if trainer.global_step % self.every_n_steps == 0 and self.writer is not None:
            self.writer.add_scalar("loss/train_step", logs["loss"], trainer.global_step)

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        w = self.writer
        if w is None:
            return
        for key, value in logs.items():
            w.add_scalar(_tb_tag(key), value, epoch + 1)
        if self.histograms:
            for name, p in trainer.model.named_parameters():
                w.add_histogram(f"weights/{name}", p.detach().cpu().numpy(), epoch + 1)
        w.flush()

    def on_train_end(self, trainer: Trainer) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class CSVLogger(Callback):
    """One CSV row per epoch (``epoch`` then every history key) in ``path``.

    The file is rewritten from ``trainer.history`` when training starts (so a resumed run's file
    holds exactly the epochs of its history), then a row is appended (and flushed) per epoch.

    >>> import os, tempfile
    >>> from ember.train import CSVLogger
    >>> class T: history = {"train_loss": [0.5, 0.25]}
    >>> log = CSVLogger(os.path.join(tempfile.mkdtemp(), "log.csv"))
    >>> log.on_train_begin(T())
    >>> print(open(log.path).read().strip())
    epoch,train_loss
    1,0.5
    2,0.25
    """

    order = 50

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._keys: list | None = None

    def _write_all(self, history: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._keys = list(history) if history else None
        with open(self.path, "w", newline="") as f:
            if self._keys:
                w = csv.writer(f)
                w.writerow(["epoch", *self._keys])
                n = min(len(v) for v in history.values())
                for i in range(n):
                    w.writerow([i + 1, *(_fmt(history[k][i]) for k in self._keys)])

    def on_train_begin(self, trainer: Trainer) -> None:
        self._write_all(trainer.history)

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        if self._keys != list(logs):  # first epoch, or the metrics changed: rewrite
            self._write_all(trainer.history)
            return
        with open(self.path, "a", newline="") as f:
            csv.writer(f).writerow([epoch + 1, *(_fmt(logs[k]) for k in self._keys)])


def _fmt(v) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


class PlotCallback(Callback):
    """Draw the loss and accuracy curves (``ember.utils.plot.plot_history``) into ``path`` (PNG).

    The plot is redrawn at an epoch end when at least ``min_interval`` seconds have passed since
    the last drawing (drawing takes a good fraction of a second, too much for every epoch of a
    fast run), and always when training ends, however it ends (so an interrupted run leaves its
    plot too). ``min_interval=0`` redraws at every epoch end.

    >>> from ember.train import PlotCallback
    >>> PlotCallback("runs/x/curves.png").path.name
    'curves.png'
    """

    order = 50

    def __init__(self, path: str | os.PathLike, min_interval: float = 10.0) -> None:
        self.path = Path(path)
        self.min_interval = float(min_interval)
        self._disabled = False
        self._last = 0.0
        self._drawn_epochs = -1

    def on_train_begin(self, trainer: Trainer) -> None:
        self._last = time.monotonic()
        self._drawn_epochs = -1

    def _draw(self, trainer: Trainer) -> None:
        epochs = len(trainer.history.get("train_loss", ()))
        if self._disabled or epochs == 0 or epochs == self._drawn_epochs:
            return
        try:
            from ..utils.plot import plot_history
        except ImportError as e:
            self._disabled = True
            warnings.warn(f"PlotCallback: no plot ({e})", stacklevel=3)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        plot_history(trainer.history, self.path)
        self._drawn_epochs = epochs
        self._last = time.monotonic()

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        if time.monotonic() - self._last >= self.min_interval:
            self._draw(trainer)

    def on_train_end(self, trainer: Trainer) -> None:
        self._draw(trainer)


class ProgressBar(Callback):
    """Progress per epoch on ``stream`` (default: ``sys.stderr``).

    On a terminal, one line rewritten in place (``\\r``, at most ten times a second) shows the
    epoch, a bar, batches done, running loss and accuracy, samples/s and the share of time spent
    waiting for data; each epoch then ends with a summary line adding the test metrics. Not on a
    terminal (a log file, a pipe), only the summary lines are written.

    >>> import io
    >>> from ember.train import ProgressBar
    >>> ProgressBar(io.StringIO()).tty
    False
    """

    order = -10

    def __init__(self, stream: IO[str] | None = None, tty: bool | None = None, width: int = 20):
        self.stream = stream
        if tty is None:
            isatty = getattr(self._out, "isatty", None)
            try:
                tty = bool(isatty()) if isatty else False
            except (ValueError, OSError):
                tty = False
        self.tty = tty
        self.width = width
        self._open_line = False
        self._last = 0.0

    @property
    def _out(self) -> IO[str]:
        return self.stream if self.stream is not None else sys.stderr

    def newline(self) -> None:
        """End a partly written bar so other output starts on a fresh line."""
        if self._open_line:
            self._out.write("\n")
            self._out.flush()
            self._open_line = False

    def write_line(self, text: str) -> None:
        """Write a full line (after ending any bar on screen)."""
        self.newline()
        self._out.write(text + "\n")
        self._out.flush()

    def on_epoch_begin(self, trainer: Trainer, epoch: int) -> None:
        self._last = 0.0

    def on_batch_end(self, trainer: Trainer, step: int, logs: dict) -> None:
        if not self.tty:
            return
        now = time.perf_counter()
        total = trainer.steps_per_epoch
        if now - self._last < 0.1 and step + 1 != total:
            return
        self._last = now
        run = trainer.running_metrics()
        done = trainer.step_in_epoch
        if total:
            filled = min(self.width, int(self.width * done / total))
            bar = "[" + "=" * filled + " " * (self.width - filled) + f"] {done}/{total}"
        else:
            bar = f"{done}"
        parts = [_epoch_label(trainer, trainer.epoch), bar, f"loss {run['loss']:.4f}"]
        if "acc" in run:
            parts.append(f"acc {run['acc']:.2%}")
        parts.append(f"{run['samples_per_s']:.0f} samples/s")
        parts.append(f"data {run['data_wait']:.0%}")
        self._out.write("\r" + "  ".join(parts) + "\x1b[K")
        self._out.flush()
        self._open_line = True

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict) -> None:
        text = format_epoch_line(trainer, epoch, logs)
        if self.tty and self._open_line:
            self._out.write("\r" + text + "\x1b[K\n")
            self._out.flush()
            self._open_line = False
        else:
            self.write_line(text)

    def on_train_end(self, trainer: Trainer) -> None:
        self.newline()


def _epoch_label(trainer: Trainer, epoch: int) -> str:
    total = trainer.epochs_target
    width = len(str(total)) if total else 1
    return f"epoch {epoch + 1:>{width}}/{total}" if total else f"epoch {epoch + 1}"


def format_epoch_line(trainer: Trainer, epoch: int, logs: dict) -> str:
    """The summary line of an epoch, e.g.
    ``epoch 3/10  loss 0.3121  acc 91.02%  test loss 0.2011  acc 95.56%  5210 samples/s  data 2%
    0.3s``."""
    parts = [_epoch_label(trainer, epoch)]
    for side, label in (("train", "loss"), ("test", "test loss")):
        if f"{side}_loss" in logs:
            parts.append(f"{label} {logs[f'{side}_loss']:.4f}")
        if f"{side}_acc" in logs:
            parts.append(f"acc {logs[f'{side}_acc']:.2%}")
        for k in trainer.topk:
            if f"{side}_top{k}" in logs:
                parts.append(f"top{k} {logs[f'{side}_top{k}']:.2%}")
    if "samples_per_s" in logs:
        parts.append(f"{logs['samples_per_s']:.0f} samples/s")
    if "data_wait" in logs:
        parts.append(f"data {logs['data_wait']:.0%}")
    if "epoch_time" in logs:
        parts.append(f"{logs['epoch_time']:.1f}s")
    return "  ".join(parts)
