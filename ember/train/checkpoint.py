"""Training-state checkpoints: the Trainer's ``state_dict`` / ``load_state_dict``,
``save_checkpoint`` / ``resume``, and reading checkpoint files (``load_checkpoint``,
``load_weights``). The file format is described in the package docstring."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import EmberError
from . import _rng

if TYPE_CHECKING:
    from .trainer import Trainer

CHECKPOINT_FORMAT = "ember.train"
CHECKPOINT_VERSION = 1


class TrainerCheckpoint:
    """The checkpoint half of :class:`~ember.train.Trainer`: its full state as plain values and
    tensors, written and read back so that a resumed run continues exactly."""

    def state_dict(self) -> dict:
        """The full training state as plain values and tensors (what ``save_checkpoint``
        writes): model, optimizer, scheduler, RNG states, epoch / step / data position, running
        sums of a part-done epoch, history, callbacks' states, config."""
        if self._phase == "step":
            raise EmberError(
                "Trainer.save_checkpoint: called inside a training step, where the state is not "
                "consistent; call it from a callback (on_batch_end, on_epoch_end)"
            )
        mid = self._phase in ("train", "eval") and self._acc is not None
        if mid:
            rng = self._rng_after_train if self._phase == "eval" else _rng.capture(self._gens)
        else:
            rng = self._pending_rng or _rng.capture(self._gens)
        sched = self.scheduler.state_dict() if self.scheduler is not None else None
        names: Counter = Counter()
        cb_states = {}
        for c in self.callbacks:
            key = self._callback_key(c, names)
            state = c.state_dict() if hasattr(c, "state_dict") else {}
            if state:
                cb_states[key] = state
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": sched,
            "scaler": self.scaler.state_dict() if self.scaler is not None else None,
            "epoch": self.epoch,
            "step": self.step_in_epoch if mid else 0,
            "global_step": self.global_step,
            "history": {k: list(v) for k, v in self.history.items()},
            "rng": rng,
            "epoch_rng": self._epoch_rng if mid else None,
            "partial": self._partial() if mid else None,
            "callbacks": cb_states,
            "input_bound_warned": self.input_bound_warned,
            "config": self.config,
        }

    def _partial(self) -> dict:
        d = self._acc.to_dict()
        if self._phase == "train":  # mid-loop: `elapsed` is only set when the loop ends
            d["elapsed"] = time.perf_counter() - self._epoch_start
        return d

    @staticmethod
    def _callback_key(c, names: Counter) -> str:
        name = type(c).__name__
        names[name] += 1
        return name if names[name] == 1 else f"{name}.{names[name]}"

    def save_checkpoint(self, path: str | os.PathLike) -> Path:
        """Write the full training state to ``path`` (safetensors via ``ember.save``, atomic);
        returns the path. Allowed between steps (from callbacks), not inside one."""
        if self._bad_state:
            raise EmberError("Trainer.save_checkpoint: the loss became non-finite; not saving")
        from ..serialization import save

        state = self.state_dict()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save(state, path)
        self.last_checkpoint = path
        self.last_checkpoint_at = (
            f"end of epoch {state['epoch']}"
            if state["step"] == 0
            else f"epoch {state['epoch'] + 1}, step {state['step']}"
        )
        return path

    def load_state_dict(self, state: dict) -> None:
        """Restore a state from ``state_dict`` / a checkpoint file's contents."""
        if state.get("format") != CHECKPOINT_FORMAT:
            raise EmberError(
                "Trainer.resume: not a training-state checkpoint (no 'format': "
                f"'{CHECKPOINT_FORMAT}'); best.safetensors holds weights only: load those with "
                "model.load_state_dict(ember.load(path))"
            )
        if state.get("version") != CHECKPOINT_VERSION:
            raise EmberError(
                f"Trainer.resume: training checkpoint version {state.get('version')!r} is not "
                f"supported (this ember reads version {CHECKPOINT_VERSION})"
            )
        _check_config(self.config or {}, state.get("config") or {})
        _load_part("model", self.model, state["model"], state)
        self._bad_state = False
        _load_part("optimizer", self.optimizer, state["optimizer"], state)
        if state["scheduler"] is not None:
            if self.scheduler is None:
                raise EmberError(
                    "Trainer.resume: the checkpoint has a learning-rate scheduler's state but "
                    "this trainer has no scheduler"
                )
            sched = dict(state["scheduler"])
            for k, v in sched.items():  # Counters (MultiStepLR's milestones) come back as dicts
                if isinstance(getattr(self.scheduler, k, None), Counter) and isinstance(v, dict):
                    sched[k] = Counter(v)
            self.scheduler.load_state_dict(sched)
        self._load_scaler(state)
        self.epoch = int(state["epoch"])
        self.global_step = int(state["global_step"])
        self.history = {k: [float(x) for x in v] for k, v in state["history"].items()}
        self.input_bound_warned = bool(state.get("input_bound_warned", False))
        names: Counter = Counter()
        saved_cbs = state.get("callbacks", {})
        for c in self.callbacks:
            key = self._callback_key(c, names)
            if key in saved_cbs and hasattr(c, "load_state_dict"):
                c.load_state_dict(saved_cbs[key])
        step = int(state["step"])
        if step > 0 or state.get("partial") is not None:
            self._resume_point = (step, state["epoch_rng"], state["rng"], state["partial"])
            self._pending_rng = None
            self.step_in_epoch = step
        else:
            self._resume_point = None
            self._pending_rng = state["rng"]
            self.step_in_epoch = 0
        if not self.config:
            self.config = dict(state.get("config") or {})

    def _load_scaler(self, state: dict) -> None:
        """The GradScaler's scale and growth tracker, so the scale sequence goes on as if the
        run had not stopped. A checkpoint without them (written before ember saved them, or by
        a run without float16 ``amp``) resumes with a fresh scaler and a note saying so."""
        saved = state.get("scaler")
        if saved is not None and self.scaler is None:
            raise EmberError(
                "Trainer.resume: the checkpoint has a GradScaler's state (a run with amp "
                "float16) but this trainer has no scaler; resume with amp='float16'"
            )
        if self.scaler is None:
            return
        if saved is None:
            self._warn(
                "Trainer.resume: the checkpoint has no GradScaler state (written by an older "
                "ember or by a run without float16 amp); the loss scale starts afresh at "
                f"{self.scaler.get_scale():g}",
                UserWarning,
            )
            return
        _load_part("scaler", self.scaler, saved, state)

    def resume(self, path: str | os.PathLike) -> Trainer:
        """Restore everything from a ``save_checkpoint`` file (``last.safetensors``); the next
        ``fit`` continues exactly where that run stopped, mid-epoch included (same batch order,
        skipped batches not loaded). Returns the trainer.

        Build the trainer as for the run that wrote the file (same model, optimizer and
        scheduler types and hyperparameters, same loaders)."""
        self.load_state_dict(load_checkpoint(path))
        self.last_checkpoint = Path(path)
        self.last_checkpoint_at = (
            f"end of epoch {self.epoch}"
            if self._resume_point is None
            else f"epoch {self.epoch + 1}, step {self.step_in_epoch}"
        )
        return self


def _names(keys, limit: int = 3) -> str:
    keys = sorted(keys)
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return ", ".join(keys[:limit]) + more


def _mismatch(own: dict, saved: dict) -> str:
    """What differs between two state dicts, in a few words (keys, then shapes)."""
    parts = []
    missing, unexpected = own.keys() - saved.keys(), saved.keys() - own.keys()
    if missing:
        parts.append(f"{len(missing)} entries missing from the checkpoint ({_names(missing)})")
    if unexpected:
        parts.append(f"{len(unexpected)} entries it has no place for ({_names(unexpected)})")
    if not parts:
        shapes = [
            f"{k} {list(saved[k].shape)} vs {list(own[k].shape)}"
            for k in sorted(own)
            if hasattr(own[k], "shape") and tuple(getattr(saved[k], "shape", ())) != own[k].shape
        ]
        if shapes:
            parts.append(f"{len(shapes)} tensors of other shapes ({', '.join(shapes[:2])})")
    return "; ".join(parts)


def _check_config(mine: dict, theirs: dict) -> None:
    """A trainer configured (as ``ember train`` does) for another model, optimizer or scheduler
    than the checkpoint's run is refused before anything is loaded: an optimizer's state can
    load into another optimizer and fail only at its first step."""
    for key in ("model", "optimizer", "scheduler"):
        a, b = mine.get(key), theirs.get(key)
        if isinstance(a, str) and isinstance(b, str) and a != b:
            raise EmberError(
                f"Trainer.resume: the checkpoint was trained with {key} {b!r}, this trainer has "
                f"{key} {a!r}; resume with {key} {b!r}, or start a new run for {a!r}"
            )


def _load_part(what: str, obj, saved: dict, state: dict) -> None:
    """``obj.load_state_dict(saved)``; a state that doesn't fit ``obj`` (a checkpoint of another
    model or optimizer) is one ``EmberError`` line naming the mismatch and what to do."""
    try:
        obj.load_state_dict(saved)
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
        config = state.get("config") or {}
        trained = config.get(what)
        name = type(obj).__name__
        detail = _mismatch(obj.state_dict(), saved) if what == "model" else ""
        if not detail:
            detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        hint = f" (the run used {what} {trained!r})" if isinstance(trained, str) else ""
        raise EmberError(
            f"Trainer.resume: the checkpoint's {what} state does not fit this {what} ({name}): "
            f"{detail}; resume with the {what} the checkpoint was trained with{hint}"
        ) from None


def load_checkpoint(path: str | os.PathLike) -> dict:
    """The contents of a training-state checkpoint (``last.safetensors``) as a dict: ``model``
    (the state dict), ``optimizer``, ``scheduler``, ``epoch``, ``step``, ``global_step``,
    ``history``, ``config``...; raises ``EmberError`` for a file that is not one.

    >>> import ember, os, tempfile
    >>> from ember.train import load_checkpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> ember.save({"w": ember.ones(1)}, path)
    >>> load_checkpoint(path)
    Traceback (most recent call last):
    ...
    ember._errors.EmberError: ...w.safetensors is not a training-state checkpoint...
    """
    from ..serialization import load

    state = load(path)
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise EmberError(
            f"{path} is not a training-state checkpoint (it has no 'format': "
            f"'{CHECKPOINT_FORMAT}'); weights-only files load with ember.load"
        )
    return state


def load_weights(path: str | os.PathLike) -> dict:
    """A model state dict from either kind of file: ``best.safetensors`` (weights only) or
    ``last.safetensors`` (full training state).

    >>> import ember, os, tempfile
    >>> from ember.train import load_weights
    >>> path = os.path.join(tempfile.mkdtemp(), "best.safetensors")
    >>> ember.save(ember.nn.Linear(2, 1).state_dict(), path)
    >>> sorted(load_weights(path))
    ['bias', 'weight']
    """
    from ..serialization import load

    state = load(path)
    if isinstance(state, dict) and state.get("format") == CHECKPOINT_FORMAT:
        return state["model"]
    if not isinstance(state, dict):
        raise EmberError(f"{path}: expected a state dict, found a {type(state).__name__}")
    return state
