"""``Trainer`` and ``fit``: the training loop (see the package docstring for the whole picture).

>>> import ember
>>> from ember import nn
>>> from ember.data import DataLoader, TensorDataset
>>> from ember.train import Trainer
>>> _ = ember.manual_seed(0)
>>> x = ember.randn(64, 4); y = (x[:, 0] > 0).long()
>>> loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
>>> model = nn.Linear(4, 2)
>>> trainer = Trainer(model, ember.optim.SGD(model.parameters(), lr=0.5), loader, loader,
...                   verbose=0)
>>> history = trainer.fit(epochs=5)
>>> sorted(history)[:4], len(history["train_loss"]), history["test_acc"][-1] > 0.9
(['data_wait', 'epoch_time', 'lr', 'samples_per_s'], 5, True)
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from .._config import no_grad
from .._errors import EmberError
from . import _rng
from ._resume import iterate_from
from .callbacks import (
    HOOKS,
    Callback,
    CSVLogger,
    ModelCheckpoint,
    PlotCallback,
    ProgressBar,
    TensorBoardLogger,
)
from .checkpoint import CHECKPOINT_FORMAT, TrainerCheckpoint, load_checkpoint, load_weights
from .diagnostics import TrainerDiagnostics
from .errors import TrainingInterrupted
from .interruption import TrainerInterruption
from .steps import TrainerSteps

__all__ = ["Trainer", "fit", "load_checkpoint", "load_weights", "CHECKPOINT_FORMAT"]

TIMING_KEYS = ("epoch_time", "data_wait", "samples_per_s")  # wall-clock measurements

_PER_STEP_SCHEDULERS = ("OneCycleLR", "CyclicLR")


class _Epoch:
    """Running sums of one epoch (saved in a mid-epoch checkpoint, so they are plain numbers)."""

    __slots__ = (
        "loss_sum",
        "count",
        "correct",
        "steps",
        "wait",
        "compute",
        "post_wait",
        "post_compute",
        "post_steps",
        "elapsed",
        "lr",
    )

    def __init__(self, lr: float) -> None:
        self.loss_sum, self.count, self.steps = 0.0, 0, 0
        self.correct: list[int] = []  # top-1 then each top-k, once a batch gave them
        self.wait = self.compute = self.post_wait = self.post_compute = self.elapsed = 0.0
        self.post_steps = 0
        self.lr = lr

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

    @classmethod
    def from_dict(cls, d: dict) -> _Epoch:
        e = cls.__new__(cls)
        for k in cls.__slots__:
            setattr(e, k, d[k])
        e.correct = list(e.correct)
        return e


class Trainer(TrainerSteps, TrainerDiagnostics, TrainerInterruption, TrainerCheckpoint):
    """Train ``model`` with ``optimizer`` on ``train_loader``, evaluating on ``eval_loader``.

    Arguments (all but the first three are keywords):

    - ``loss_fn``: ``loss_fn(output, target) -> scalar`` (mean over the batch); default
      ``nn.functional.cross_entropy``. Batches are ``(input, target)`` pairs (extra items ignored).
    - ``scheduler``: an ``ember.optim.lr_scheduler`` scheduler, stepped after every epoch, or
      after every optimizer step when ``scheduler_interval='step'`` (the default for
      ``OneCycleLR``); ``ReduceLROnPlateau`` is stepped per epoch with ``scheduler_monitor``
      (default ``'test_loss'``, ``'train_loss'`` without an evaluation loader).
    - ``device``: where the model is moved and each batch is sent (default: leave them be).
    - ``amp``: mixed precision (``docs/amp.md``): True runs forward and loss under
      ``ember.autocast`` in bfloat16 on the CPU, float16 with a ``GradScaler`` on cuda;
      'bfloat16' / 'float16' choose. ``scaler`` is the GradScaler (or None).
    - ``compile``: run the whole training step (forward, backward, optimizer step) and the
      evaluation forward as ``ember.compile`` graphs; a step that cannot be traced falls back to
      eager mode with a warning. With a ``DistributedDataParallel`` model the gradient
      all-reduces are ops of the compiled step.
    - ``topk``: extra top-k accuracies to log (``topk=(5,)`` adds ``train_top5``/``test_top5``).
      Accuracy is logged when targets are 1-d integer class indices and outputs are 2-d.
    - ``clip_grad_norm``: clip the gradients' total norm to this before each step.
    - ``callbacks``: ``Callback`` objects. ``out_dir`` adds the standard ones for that folder
      (unless one of the same type is given): ``ModelCheckpoint(out_dir)``,
      ``CSVLogger(out_dir/'log.csv')``, ``TensorBoardLogger(out_dir/'tensorboard')``,
      ``PlotCallback(out_dir/'curves.png')``. ``checkpoint_every=N`` makes ``ModelCheckpoint``
      also save the training state every ``N`` optimizer steps (mid-epoch).
    - ``verbose``: 1 adds a ``ProgressBar`` writing to ``stream`` (default stderr); 0 is silent.
    - ``input_bound_hint``, ``input_bound_threshold``, ``warmup_steps``: the input-bound
      diagnostic (see ``InputBoundWarning``): when, after the first ``warmup_steps`` steps of an
      epoch, waiting for data takes more than ``input_bound_threshold`` of the step time, warn
      once: ``waiting for data 62% of each step: raise num_workers (now 0)``. ``{workers}`` in
      the hint is replaced by the loader's ``num_workers`` (the CLI says ``--workers``).
    - ``config``: a JSON-able dict describing the run (model name, data, ...): saved in every
      training checkpoint, in ``config.json`` and in TensorBoard's ``hparams`` text.

    Data-parallel training: pass a ``DistributedDataParallel`` model (every rank builds its
    own Trainer; give ``out_dir`` and ``verbose`` to rank 0 only). Training steps run through
    the wrapper; ``trainer.model`` is the wrapped module, so checkpoints and ``best`` weights
    hold its keys (no ``module.`` prefix) and every rank can ``resume`` from rank 0's file. A
    sampler with ``set_epoch`` (``DistributedSampler``) gets the epoch before each epoch.
    The epoch's training loss and accuracies are summed over the ranks; evaluation runs on
    every rank's own loader (give each a disjoint share of the test set, or all the whole of
    it) with rank 0's buffers, and its sums are added up over the ranks, so every rank logs
    the same figures. ``evaluate`` is then a collective: every rank must call it.

    ``fit(epochs)`` trains until ``epochs`` epochs in all are done (a resumed trainer continues
    from where its checkpoint stopped) and returns ``history``: per-epoch lists under
    ``train_loss``, ``train_acc``, ``test_loss``, ``test_acc`` (fractions), ``lr`` (the first
    group's learning rate at the epoch's start), ``epoch_time`` (s), ``data_wait`` (the share
    of the training loop spent waiting for batches) and ``samples_per_s``.
    """

    def __init__(
        self,
        model,
        optimizer,
        train_loader: Iterable,
        eval_loader: Iterable | None = None,
        *,
        loss_fn: Callable | None = None,
        scheduler=None,
        scheduler_interval: str | None = None,
        scheduler_monitor: str = "test_loss",
        device=None,
        compile: bool = False,  # noqa: A002
        amp: bool | str = False,
        topk: Sequence[int] = (),
        clip_grad_norm: float | None = None,
        callbacks: Sequence[Callback] = (),
        out_dir: str | os.PathLike | None = None,
        checkpoint_every: int = 0,
        verbose: int = 1,
        stream: IO[str] | None = None,
        input_bound_hint: str = "raise num_workers (now {workers})",
        input_bound_threshold: float = 0.3,
        warmup_steps: int = 3,
        config: dict | None = None,
    ) -> None:
        if loss_fn is None:
            from ..nn.functional import cross_entropy as loss_fn
        if scheduler_interval is None:
            per_step = type(scheduler).__name__ in _PER_STEP_SCHEDULERS
            scheduler_interval = "step" if per_step else "epoch"
        if scheduler_interval not in ("epoch", "step"):
            raise ValueError(
                f"Trainer: scheduler_interval must be 'epoch' or 'step', got {scheduler_interval!r}"
            )
        self.topk = tuple(int(k) for k in topk if int(k) > 1)
        self.model, self.ddp = _unwrap(model)
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.eval_loader = eval_loader
        self.loss_fn = loss_fn
        self.scheduler = scheduler
        self.scheduler_interval = scheduler_interval
        self.scheduler_monitor = scheduler_monitor
        self.device = device
        self.compile = bool(compile)
        self.clip_grad_norm = clip_grad_norm
        self.verbose = int(verbose)
        self.stream = stream
        self.input_bound_hint = input_bound_hint
        self.input_bound_threshold = float(input_bound_threshold)
        self.warmup_steps = int(warmup_steps)
        self.config: dict = dict(config or {})
        self.out_dir = Path(out_dir) if out_dir is not None else None
        if device is not None:
            model.to(device)
        self._setup_amp(amp)

        cbs = list(callbacks)
        if self.out_dir is not None:
            defaults = (
                (ModelCheckpoint, lambda: ModelCheckpoint(self.out_dir)),
                (CSVLogger, lambda: CSVLogger(self.out_dir / "log.csv")),
                (TensorBoardLogger, lambda: TensorBoardLogger(self.out_dir / "tensorboard")),
                (PlotCallback, lambda: PlotCallback(self.out_dir / "curves.png")),
            )
            for cls, make in defaults:
                if not any(isinstance(c, cls) for c in cbs):
                    cbs.append(make())
        if checkpoint_every:
            for c in cbs:
                if isinstance(c, ModelCheckpoint):
                    c.every_n_steps = int(checkpoint_every)
        if self.verbose and not any(isinstance(c, ProgressBar) for c in cbs):
            cbs.append(ProgressBar(stream))
        self.callbacks: list[Callback] = sorted(cbs, key=lambda c: getattr(c, "order", 0))
        self._progress = next((c for c in self.callbacks if isinstance(c, ProgressBar)), None)

        # progress of training
        self.history: dict[str, list[float]] = {}
        self.epoch = 0  # epochs completed (= the 0-based index of the epoch in progress)
        self.step_in_epoch = 0  # optimizer steps done in the epoch in progress
        self.global_step = 0
        self.epochs_target: int | None = None
        self.stop_training = False
        self.stop_reason: str | None = None
        self.last_checkpoint: Path | None = None
        self.last_checkpoint_at: str | None = None  # "end of epoch 3" / "epoch 4, step 7"
        self.diagnostics: list[str] = []  # messages of the warnings issued
        self.input_bound_warned = False

        self._bad_state = False  # set by a non-finite loss: nothing may save this state
        self._gens = _rng.loader_generators(train_loader)
        self._phase = "idle"  # idle | step (inside a step: not consistent) | train | eval
        self._acc: _Epoch | None = None
        self._epoch_rng: dict | None = None
        self._rng_after_train: dict | None = None
        self._resume_point: tuple | None = None
        self._pending_rng: dict | None = None
        self._interrupt_requested = False
        self._epoch_start = 0.0
        self._train_step = self._eager_train
        self._eval_step = self._eager_eval
        self._compiled = None
        self._params = None

    # -- public helpers -------------------------------------------------------------------------
    @property
    def steps_per_epoch(self) -> int | None:
        """``len(train_loader)``, or ``None`` when it has no length."""
        try:
            return len(self.train_loader)  # type: ignore[arg-type]
        except TypeError:
            return None

    def hparams(self) -> dict:
        """The loop's settings as plain values (logged to TensorBoard next to ``config``)."""
        opt = self.optimizer
        group = opt.param_groups[0] if getattr(opt, "param_groups", None) else {}
        out = {
            "optimizer": type(opt).__name__,
            "lr": group.get("lr"),
            "batch_size": getattr(self.train_loader, "batch_size", None),
            "num_workers": getattr(self.train_loader, "num_workers", 0),
            "scheduler": type(self.scheduler).__name__ if self.scheduler is not None else None,
            "compile": self.compile,
            "amp": self.amp_dtype.name if self.amp_dtype is not None else None,
            "device": str(self.device) if self.device is not None else None,
        }
        return {k: v for k, v in out.items() if v is not None}

    def running_metrics(self) -> dict:
        """The epoch in progress so far: ``loss``, ``acc`` (if logged), ``samples_per_s``,
        ``data_wait`` (share of the loop's time spent waiting for data)."""
        a = self._acc
        if a is None or a.count == 0:
            return {"loss": math.nan, "samples_per_s": 0.0, "data_wait": 0.0}
        busy = a.wait + a.compute
        out = {
            "loss": a.loss_sum / a.count,
            "samples_per_s": a.count / busy if busy > 0 else 0.0,
            "data_wait": a.wait / busy if busy > 0 else 0.0,
        }
        if a.correct:
            out["acc"] = a.correct[0] / a.count
        return out

    # -- the loop --------------------------------------------------------------------------------
    def fit(self, epochs: int) -> dict[str, list[float]]:
        """Train until ``epochs`` epochs in all are done (or a callback stops training); returns
        ``history``. Ctrl-C (or ``KeyboardInterrupt`` from a callback) stops at the end of the
        current step, writes the training state through the callbacks (``ModelCheckpoint``:
        ``last.safetensors``) and raises ``TrainingInterrupted`` saying where it went. A NaN or
        infinite loss raises ``NonFiniteLossError``."""
        if epochs < 0:
            raise ValueError(f"fit: epochs must be >= 0, got {epochs}")
        self.epochs_target = int(epochs)
        self._setup_compile()
        self.stop_training, self.stop_reason = False, None
        self._interrupt_requested = False
        self._hooks = {
            name: [
                getattr(c, name)
                for c in self.callbacks
                if getattr(type(c), name, None) is not getattr(Callback, name) or name in vars(c)
            ]
            for name in HOOKS
        }
        old_handler = self._install_sigint()
        jit_mode = self._jit_sync()
        try:
            try:
                self._call("on_train_begin")
                if self._pending_rng is not None:
                    _rng.restore(self._pending_rng, self._gens)
                    self._pending_rng = None
                while self.epoch < epochs and not self.stop_training:
                    self._run_epoch(self.epoch)
                if self.stop_reason and self._progress is not None:
                    self._progress.write_line(self.stop_reason)
            except TrainingInterrupted:
                raise
            except KeyboardInterrupt:
                raise self._interrupted() from None
            finally:
                self._phase = "idle"
                self._call("on_train_end")
        finally:
            if old_handler is not None:
                signal.signal(signal.SIGINT, old_handler)
            if jit_mode is not None:
                from ..backend import jit as _jit

                _jit.set_mode(jit_mode)
        return self.history

    def _call(self, hook: str, *args) -> None:
        for fn in self._hooks[hook]:
            fn(self, *args)

    def _run_epoch(self, epoch: int) -> None:
        self._call("on_epoch_begin", epoch)
        model, loader = self.model, self.train_loader
        model.train()
        set_epoch = getattr(getattr(loader, "sampler", None), "set_epoch", None)
        if callable(set_epoch):  # DistributedSampler: this epoch's shuffle, the same on all ranks
            set_epoch(epoch)
        lr = float(self.optimizer.param_groups[0]["lr"])
        if self._resume_point is not None:
            k, epoch_rng, rng_now, partial = self._resume_point
            self._resume_point = None
            _rng.restore(epoch_rng, self._gens)
            acc = _Epoch.from_dict(partial)
            it = iterate_from(loader, k, lambda: _rng.restore(rng_now, self._gens, explicit=False))
        else:
            k = 0
            epoch_rng = _rng.capture(self._gens)
            acc = _Epoch(lr)
            it = iter(loader)
        self._epoch_rng, self._acc, self.step_in_epoch = epoch_rng, acc, k
        start = time.perf_counter()
        self._epoch_start = start - acc.elapsed
        self._train_loop(it, epoch, acc)
        del it
        self._rng_after_train = _rng.capture(self._gens)
        self._phase = "eval"
        loss_sum, count, correct = self._sum_over_ranks(acc.loss_sum, acc.count, acc.correct)
        logs = {"train_loss": loss_sum / count if count else math.nan}
        if correct and count:
            logs["train_acc"] = correct[0] / count
            for k_, c in zip(self.topk, correct[1:]):
                logs[f"train_top{k_}"] = c / count
        if self.eval_loader is not None:
            result = self._evaluate(self.eval_loader, check_interrupt=True)
            logs["test_loss"] = result["loss"]
            if "acc" in result:
                logs["test_acc"] = result["acc"]
            for k_ in self.topk:
                if f"top{k_}" in result:
                    logs[f"test_top{k_}"] = result[f"top{k_}"]
        busy = acc.wait + acc.compute
        logs["lr"] = acc.lr
        logs["epoch_time"] = time.perf_counter() - self._epoch_start
        logs["data_wait"] = acc.wait / busy if busy > 0 else 0.0
        logs["samples_per_s"] = count / busy if busy > 0 else 0.0  # all ranks' samples
        for key, value in logs.items():
            self.history.setdefault(key, []).append(float(value))
        if self.scheduler is not None and self.scheduler_interval == "epoch":
            if hasattr(self.scheduler, "num_bad_epochs"):  # ReduceLROnPlateau
                key = self.scheduler_monitor
                if key not in logs and key.startswith("test_"):
                    key = "train_" + key[5:]
                self.scheduler.step(logs[key])
            else:
                self.scheduler.step()
        self.epoch = epoch + 1
        self.step_in_epoch = 0
        self._acc = self._epoch_rng = self._rng_after_train = None
        self._phase = "idle"
        self._call("on_epoch_end", epoch, logs)
        self._check_input_bound(acc, final=True)
        if self._interrupt_requested:
            raise KeyboardInterrupt

    def _train_loop(self, it, epoch: int, acc: _Epoch) -> None:
        step_fn = self._train_step
        split = self._split
        perf = time.perf_counter
        isfinite = math.isfinite
        batch_begin, batch_end = self._hooks["on_batch_begin"], self._hooks["on_batch_end"]
        per_step_sched = self.scheduler if self.scheduler_interval == "step" else None
        warmup = self.warmup_steps
        k = self.step_in_epoch
        t_prev = perf()
        while True:
            if self._interrupt_requested:
                raise KeyboardInterrupt
            self._phase = "step"
            try:
                batch = next(it)
            except StopIteration:
                self._phase = "train"
                break
            t_data = perf()
            x, y = split(batch)
            for fn in batch_begin:
                fn(self, k)
            loss, stats = step_fn(x, y)
            if self._train_step is not step_fn:  # compile fell back to eager
                step_fn = self._train_step
            value = loss.item()
            if not isfinite(value):
                raise self._nonfinite(epoch, k, value)
            n = y.shape[0]
            acc.loss_sum += value * n
            acc.count += n
            if stats:
                if not acc.correct:
                    acc.correct = [0] * len(stats)
                for i, s in enumerate(stats):
                    acc.correct[i] += int(s)
            if per_step_sched is not None:
                per_step_sched.step()
            t_end = perf()
            wait, compute = t_data - t_prev, t_end - t_data
            acc.wait += wait
            acc.compute += compute
            acc.steps += 1
            if k >= warmup:
                acc.post_wait += wait
                acc.post_compute += compute
                acc.post_steps += 1
                if acc.post_steps % 200 == 0:
                    self._check_input_bound(acc, final=False)
            k += 1
            self.step_in_epoch = k
            self.global_step += 1
            self._phase = "train"
            if batch_end:
                logs = {"loss": value, "batch_size": n}
                for fn in batch_end:
                    fn(self, k - 1, logs)
            t_prev = perf()
        acc.elapsed = perf() - self._epoch_start

    def _sum_over_ranks(self, loss_sum: float, count: int, correct: list) -> tuple:
        """``(loss_sum, count, correct)`` added up over the data-parallel ranks (as they are
        without DDP). Every rank sends a vector of one length, even one that saw no batch."""
        if self.ddp is None or self.ddp.process_group.size() == 1:
            return loss_sum, count, correct
        import numpy as np

        from .. import distributed as dist
        from .._tensor import Tensor

        n = 1 + len(self.topk)
        counts = list(correct) + [0] * (n - len(correct))
        values = np.array([loss_sum, count, 1 if correct else 0, *counts], dtype=np.float64)
        t = Tensor._make(values)
        dist.all_reduce(t, group=self.ddp.process_group)
        v = t.numpy()
        correct = [int(round(c)) for c in v[3:]] if v[2] > 0 else []
        return float(v[0]), int(round(v[1])), correct

    def _split(self, batch):
        if isinstance(batch, (tuple, list)) and len(batch) >= 2:
            x, y = batch[0], batch[1]
        else:
            raise EmberError(
                f"Trainer: expected batches of (input, target), got a {type(batch).__name__}"
                + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
            )
        dev = self.device
        if dev is not None:
            x, y = x.to(dev), y.to(dev)
        return x, y

    # -- evaluation ------------------------------------------------------------------------------
    def evaluate(self, loader: Iterable | None = None) -> dict[str, float]:
        """Loss and accuracy of the model on ``loader`` (default: the evaluation loader), in
        eval mode and without gradients: ``{"loss", "acc", "top5"..., "samples"}``.

        >>> import ember
        >>> from ember.data import DataLoader, TensorDataset
        >>> from ember.train import Trainer
        >>> model = ember.nn.Linear(3, 2)
        >>> ds = TensorDataset(ember.zeros(4, 3), ember.zeros(4).long())
        >>> Trainer(model, None, None, verbose=0).evaluate(DataLoader(ds, batch_size=2))["samples"]
        4
        """
        loader = self.eval_loader if loader is None else loader
        if loader is None:
            raise EmberError("Trainer.evaluate: no loader given and no eval_loader set")
        return self._evaluate(loader, check_interrupt=False)

    def _evaluate(self, loader, check_interrupt: bool) -> dict:
        self._setup_compile()
        model = self.model
        was_training = getattr(model, "training", False)
        if self.ddp is not None:  # every rank evaluates rank 0's model (BatchNorm statistics)
            self.ddp._sync(list(model.buffers()))
        model.eval()
        loss_sum, count, correct = 0.0, 0, None
        try:
            with no_grad():
                for batch in loader:
                    x, y = self._split(batch)
                    loss, stats = self._eval_step(x, y)
                    n = y.shape[0]
                    loss_sum += loss.item() * n
                    count += n
                    if correct is None:
                        correct = [0] * len(stats)
                    for i, s in enumerate(stats):
                        correct[i] += int(s)
                    if check_interrupt and self._interrupt_requested:
                        raise KeyboardInterrupt
        finally:
            model.train(was_training)
        loss_sum, count, correct = self._sum_over_ranks(loss_sum, count, correct or [])
        out: dict[str, Any] = {"loss": loss_sum / count if count else math.nan, "samples": count}
        if correct and count:
            out["acc"] = correct[0] / count
            for k, c in zip(self.topk, correct[1:]):
                out[f"top{k}"] = c / count
        return out


def _unwrap(model) -> tuple:
    """``(module, wrapper)`` for a DistributedDataParallel model, else ``(model, None)``
    (without importing ember.distributed, and so mpi4py, for a plain model)."""
    parallel = sys.modules.get("ember.nn.parallel.distributed")
    if parallel is not None and isinstance(model, parallel.DistributedDataParallel):
        return model.module, model
    return model, None


def fit(
    model,
    train_loader: Iterable,
    eval_loader: Iterable | None = None,
    *,
    epochs: int = 1,
    optimizer=None,
    lr: float = 1e-3,
    resume: str | os.PathLike | None = None,
    **trainer_kwargs: Any,
) -> dict[str, list[float]]:
    """Train ``model`` and return its history: ``Trainer(...).fit(epochs)`` in one call.

    ``optimizer`` defaults to ``Adam(model.parameters(), lr=lr)``; ``resume`` continues from a
    ``last.safetensors``; other keywords go to ``Trainer``.

    >>> import ember
    >>> from ember.data import DataLoader, TensorDataset
    >>> from ember.train import fit
    >>> _ = ember.manual_seed(0)
    >>> x = ember.randn(32, 3); y = (x.sum(1) > 0).long()
    >>> h = fit(ember.nn.Linear(3, 2), DataLoader(TensorDataset(x, y), batch_size=8),
    ...         epochs=2, lr=0.1, verbose=0)
    >>> len(h["train_loss"]), "test_loss" in h
    (2, False)
    """
    if optimizer is None:
        from ..optim import Adam

        optimizer = Adam(model.parameters(), lr=lr)
    trainer = Trainer(model, optimizer, train_loader, eval_loader, **trainer_kwargs)
    if resume is not None:
        trainer.resume(resume)
    return trainer.fit(epochs)
