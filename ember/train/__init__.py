"""``ember.train``: the training loop behind ``ember train``, usable from Python.

>>> import ember
>>> from ember.data import DataLoader, TensorDataset
>>> from ember.train import fit
>>> _ = ember.manual_seed(0)
>>> x = ember.randn(64, 2); y = (x[:, 0] > x[:, 1]).long()
>>> loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
>>> history = fit(ember.nn.Linear(2, 2), loader, loader, epochs=4, lr=0.1, verbose=0)
>>> history["test_acc"][-1] > 0.9
True

Pieces:

- ``Trainer(model, optimizer, train_loader, eval_loader, ...)``: ``fit(epochs)`` returns the
  history (per-epoch lists: ``train_loss``, ``train_acc``, ``test_loss``, ``test_acc``, ``lr``,
  ``epoch_time``, ``data_wait``, ``samples_per_s``); ``evaluate(loader)``;
  ``save_checkpoint(path)`` / ``resume(path)``. ``fit(model, loader, ...)`` does it in one call.
- Callbacks (``ember.train.callbacks``): ``Callback``, ``ModelCheckpoint``, ``EarlyStopping``,
  ``TensorBoardLogger``, ``CSVLogger``, ``PlotCallback``, ``ProgressBar``, ``LambdaCallback``.
  Learning-rate schedulers are stepped by the trainer itself (``scheduler=``).
- ``NonFiniteLossError``, ``InputBoundWarning``, ``TrainingInterrupted``; ``one_line_warnings``
  (a context manager printing warnings as ``warning: ...`` lines, for command-line tools).

Output folder (``Trainer(..., out_dir=...)``)::

    out_dir/
      last.safetensors   full training state, every epoch end and on interrupt (resume from it)
      best.safetensors   model weights only, best epoch by test accuracy:
                         model.load_state_dict(ember.load(path))
      config.json        Trainer(config=...) when given (e.g. the CLI's arguments)
      log.csv            one row per epoch: epoch and every history key
      tensorboard/       event files: loss per step, metrics per epoch, weight histograms, hparams
      curves.png         loss and accuracy curves: redrawn at an epoch end when 10 s have
                         passed since the last drawing, and always when training ends

The training-state checkpoint holds no pickle: it is an ``ember.save`` file (safetensors
tensors plus a JSON skeleton) with ``format='ember.train'``, ``version``, ``model``,
``optimizer``, ``scheduler``, ``scaler`` (state dicts; ``scaler`` is the ``GradScaler``'s, or
None without float16 ``amp``), ``epoch`` (epochs completed), ``step`` (batches done
in the next epoch; 0 at an epoch end), ``global_step``, ``history``, ``rng`` (ember's default
generator, Python's ``random``, NumPy's legacy global state, and any explicit ``ember.Generator``
of the training loader or its sampler), ``epoch_rng`` (the same at the start of the part-done
epoch), ``partial`` (that epoch's running sums), ``callbacks`` (their ``state_dict``s, e.g. the
best metric), ``input_bound_warned`` and ``config``.

Reproducibility. Stopping is deferred to a step boundary: the first Ctrl-C lets the current step
finish, then the state is saved (a second Ctrl-C stops at once, without saving);
``KeyboardInterrupt`` raised by a callback's ``on_batch_end`` or ``on_epoch_end`` is a boundary
too. With ``num_workers=0``, a run interrupted anywhere and resumed with ``Trainer.resume`` ends
with bitwise the same weights and the same history (the timing keys ``epoch_time``,
``data_wait`` and ``samples_per_s`` are measurements, so they differ) as a run never
interrupted: the interrupted epoch's order is redrawn from the generator states saved at its
start and the batches already done are skipped without being loaded; then the generator states of
the interrupted step are put back, so random transforms and dropout draw the same numbers.
With ``num_workers > 0`` the batch order, dropout and everything in the main process still
resume exactly, and so does a resume from an epoch end (workers are seeded per epoch from the
loader's generator); but random transforms running *inside* workers draw from per-worker
generators whose position is not saved, so after a mid-epoch resume the rest of that epoch gets
different augmentations (``persistent_workers=True`` loses it across epoch ends too). A loader
that is not an ember ``DataLoader`` over a map-style dataset is resumed by loading and dropping
the batches already done. ``compile=True`` keeps all of this: dropout in a compiled step draws
from ember's generator at run time, and during ``fit`` numba kernels are built before a graph
first runs (``EMBER_JIT=sync`` unless ``EMBER_JIT`` says otherwise) rather than swapped in
mid-run when a background compile ends, which would change the rounding from that step on; the
first run of a new model therefore waits for its kernels once (they are cached on disk). On a
GPU, random tensors (dropout) come from CuPy's cuRAND generators, whose state cannot be read
back: there, a resumed run matches an uninterrupted one only without dropout.

Diagnostics. The loop times how long it is blocked in ``next(loader_iter)`` against the rest of
each step; ``history['data_wait']`` is the epoch's share, the progress bar shows it, and when
waiting exceeds 30% of the step time over an epoch (leaving out its first three steps, and
judged only over at least ten steps and when the mean wait is at least 0.5 ms) it warns once
(``InputBoundWarning``): ``waiting for data 62% of each step: raise num_workers (now 0)``. A NaN
or infinite loss raises ``NonFiniteLossError`` naming the epoch, the step and the last good
checkpoint, which is left as it was.

Per step the loop reads the loss (and the correct count, when accuracy is logged) back as
Python numbers and does nothing else that waits on the device; weight histograms are per epoch.
"""

from .callbacks import (
    Callback,
    CSVLogger,
    EarlyStopping,
    LambdaCallback,
    ModelCheckpoint,
    PlotCallback,
    ProgressBar,
    TensorBoardLogger,
)
from .errors import (
    InputBoundWarning,
    NonFiniteLossError,
    TrainingInterrupted,
    one_line_warnings,
)
from .trainer import TIMING_KEYS, Trainer, fit, load_checkpoint, load_weights

__all__ = [
    "Trainer",
    "fit",
    "load_checkpoint",
    "load_weights",
    "TIMING_KEYS",
    "Callback",
    "LambdaCallback",
    "ModelCheckpoint",
    "EarlyStopping",
    "TensorBoardLogger",
    "CSVLogger",
    "PlotCallback",
    "ProgressBar",
    "NonFiniteLossError",
    "InputBoundWarning",
    "TrainingInterrupted",
    "one_line_warnings",
]
