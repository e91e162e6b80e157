"""Ctrl-C during training: the first one stops after the current step (and the state is
saved), a second one stops at once; ``TrainingInterrupted`` says where it stopped."""

from __future__ import annotations

import signal
import threading

from .errors import TrainingInterrupted


class TrainerInterruption:
    """The interruption half of :class:`~ember.train.Trainer`: the SIGINT handler and the
    ``TrainingInterrupted`` error."""

    def _install_sigint(self):
        if threading.current_thread() is not threading.main_thread():
            return None
        old = signal.getsignal(signal.SIGINT)
        if old is not signal.default_int_handler:
            return None

        def handler(signum, frame):
            if self._phase == "idle" or self._interrupt_requested:
                raise KeyboardInterrupt
            self._interrupt_requested = True
            signal.signal(signal.SIGINT, old)  # a second Ctrl-C stops at once
            msg = "interrupt: stopping after this step (Ctrl-C again to stop at once)"
            if self._progress is not None:
                self._progress.write_line(msg)

        signal.signal(signal.SIGINT, handler)
        return old

    def _interrupted(self) -> TrainingInterrupted:
        epoch, step = self.epoch + 1, self.step_in_epoch
        consistent = self._phase != "step"
        if self._phase == "idle":
            epoch, step = self.epoch, 0  # between epochs: `epoch` epochs are done
        before = self.last_checkpoint
        if consistent:
            self._hooks_call_safe("on_interrupt")
        where = f"end of epoch {epoch}" if step == 0 else f"epoch {epoch}, step {step}"
        if not consistent:
            where = f"epoch {epoch}, inside step {step + 1}"
            saved = (
                f"the last good checkpoint is {before} ({self.last_checkpoint_at})"
                if before is not None
                else "no checkpoint was written"
            )
            msg = f"interrupted at {where} (not a consistent point to save); {saved}"
            ckpt = before
        elif self.last_checkpoint is not None and self.last_checkpoint_at == where:
            ckpt = self.last_checkpoint
            msg = f"interrupted at {where}: training state saved to {ckpt}"
        else:
            ckpt = None
            msg = f"interrupted at {where}: no checkpoint folder set, the state was not saved"
        if self._progress is not None:
            self._progress.newline()  # the message travels in the exception
        return TrainingInterrupted(msg, epoch=epoch, step=step, checkpoint=ckpt)

    def _hooks_call_safe(self, hook: str) -> None:
        for fn in self._hooks[hook]:
            fn(self)
