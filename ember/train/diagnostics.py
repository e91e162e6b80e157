"""The Trainer's diagnostics: the input-bound warning (waiting for data too long a share of each
step) and the error for a non-finite loss."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

from .errors import InputBoundWarning, NonFiniteLossError

if TYPE_CHECKING:
    from .trainer import _Epoch

# Below this mean wait per step (s), more workers would not help: handing batches over costs
# about as much. Keeps tiny in-memory datasets from being called input-bound.
_MIN_WAIT_PER_STEP = 5e-4
# Steps (after the warm-up ones) an epoch needs before its data-wait share is judged: fewer
# steps let one hiccup (a page fault, the garbage collector) decide.
_MIN_STEPS_TO_JUDGE = 10


class TrainerDiagnostics:
    """The diagnostics half of :class:`~ember.train.Trainer`: warnings it records in
    ``diagnostics`` and the ``NonFiniteLossError`` it raises."""

    def _warn(self, message: str, category=InputBoundWarning) -> None:
        self.diagnostics.append(message)
        if self._progress is not None:
            self._progress.newline()
        warnings.warn(message, category, stacklevel=4)

    def _check_input_bound(self, acc: _Epoch, final: bool) -> None:
        if self.input_bound_warned or acc.post_steps < _MIN_STEPS_TO_JUDGE:
            return
        busy = acc.post_wait + acc.post_compute
        if busy <= 0:
            return
        share = acc.post_wait / busy
        if (
            share <= self.input_bound_threshold
            or acc.post_wait < _MIN_WAIT_PER_STEP * acc.post_steps
        ):
            return
        self.input_bound_warned = True
        workers = getattr(self.train_loader, "num_workers", 0)
        cpus = os.cpu_count() or 1
        if workers >= cpus:
            hint = (
                f"data loading is the bottleneck even with {workers} workers on {cpus} cores: "
                "make each sample cheaper to load (decode once, lighter transforms)"
            )
        else:
            hint = self.input_bound_hint.format(workers=workers)
        self._warn(f"waiting for data {share:.0%} of each step: {hint}")

    def _nonfinite(self, epoch: int, k: int, value: float) -> NonFiniteLossError:
        self._phase = "idle"  # nothing may save this state
        where = f"epoch {epoch + 1}, step {k + 1} (global step {self.global_step + 1})"
        if self.last_checkpoint is not None:
            good = f"the last good checkpoint is {self.last_checkpoint} ({self.last_checkpoint_at})"
        else:
            good = "no checkpoint was written yet"
        lr = self.optimizer.param_groups[0].get("lr") if self.optimizer is not None else None
        hint = f"; try a lower learning rate (lr={lr:g})" if isinstance(lr, (int, float)) else ""
        msg = f"loss is {value} at {where}: training stopped; {good}{hint}"
        self._bad_state = True
        return NonFiniteLossError(
            msg,
            epoch=epoch + 1,
            step=k + 1,
            global_step=self.global_step + 1,
            loss=value,
            checkpoint=self.last_checkpoint,
        )
