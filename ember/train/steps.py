"""The Trainer's steps: one training step and one evaluation step, run eagerly or, with
``compile=True``, as ``ember.compile`` graphs that fall back to eager mode when tracing fails."""

from __future__ import annotations

from .._config import no_grad
from .._errors import EmberError


class TrainerSteps:
    """The step half of :class:`~ember.train.Trainer`: forward, loss, backward, optimizer step,
    and the correct-prediction counts behind the accuracies."""

    def _jit_sync(self) -> str | None:
        """With ``compile=True``, build numba kernels before a graph first runs (``sync``)
        instead of switching to them mid-run when a background compile ends: the switch changes
        the rounding, so runs (and resumed runs) would not repeat bit for bit. Returns the
        mode to put back, or None."""
        if not self.compile:
            return None
        from ..backend import jit as _jit

        return _jit.set_mode("sync") if _jit.mode() == "auto" else None

    def _stats(self, out, y) -> tuple:
        """Correct-prediction counts (top-1, then each of ``topk``) for classification batches."""
        if y.ndim != 1 or out.ndim != 2 or y.dtype.np.kind not in "iu":
            return ()
        stats = [(out.argmax(1) == y).sum()]
        for k in self.topk:
            if k <= out.shape[1]:
                stats.append((out.topk(k, 1).indices == y.unsqueeze(1)).sum())
        return tuple(stats)

    def _autocast(self):
        """The step's autocast region (``amp=``; a disabled region without it)."""
        from ..amp import autocast

        dev = self._amp_device()
        return autocast(dev, dtype=self.amp_dtype, enabled=self.amp_dtype is not None)

    def _amp_device(self) -> str:
        p = next(iter(self.model.parameters()), None)
        return p.device.type if p is not None else "cpu"

    def _setup_amp(self, amp) -> None:
        """``amp``: False/None (float32), True (bfloat16 on the CPU, float16 with a GradScaler
        on cuda), or a dtype name ('bfloat16', 'float16')."""
        from .. import dtypes as _dt
        from ..amp import GradScaler

        self.amp_dtype = None
        self.scaler = None
        if not amp:
            return
        dev = self._amp_device()
        if amp is True or amp == "auto":
            dtype = _dt.float16 if dev == "cuda" else _dt.bfloat16
        else:
            dtype = _dt.to_dtype(amp)
        if dtype not in (_dt.bfloat16, _dt.float16):
            raise EmberError(f"Trainer: amp must be bfloat16 or float16, got {dtype}")
        self.amp_dtype = dtype
        if dtype is _dt.float16:
            self.scaler = GradScaler(dev)

    def _backward_step(self, loss) -> None:
        """backward, clipping and the optimizer step (through the GradScaler with float16)."""
        opt, scaler = self.optimizer, self.scaler
        if scaler is None:
            loss.backward()
            if self.clip_grad_norm is not None:
                self._clip()
            opt.step()
            return
        scaler.scale(loss).backward()
        if self.clip_grad_norm is not None:
            scaler.unscale_(opt)
            self._clip()
        scaler.step(opt)
        scaler.update()

    def _eager_train(self, x, y):
        self.optimizer.zero_grad()
        with self._autocast():
            out = (self.model if self.ddp is None else self.ddp)(x)  # DDP: averages grads
            loss = self.loss_fn(out, y)
        self._backward_step(loss)
        return loss, self._eager_stats(out, y)

    def _eager_stats(self, out, y) -> tuple:
        """``_stats`` on the raw arrays: no autograd, no op dispatch (most of the loop's cost
        on a small model otherwise). Returns Python ints."""
        o, t = out._data, y._data
        if t.ndim != 1 or o.ndim != 2 or t.dtype.kind not in "iu":
            return ()
        if not self.topk:
            return (int((o.argmax(1) == t).sum()),)
        with no_grad():
            return tuple(int(s) for s in self._stats(out.detach(), y))

    def _clip(self) -> None:
        from ..nn.utils import clip_grad_norm_

        if self._params is None:
            self._params = [p for g in self.optimizer.param_groups for p in g["params"]]
        clip_grad_norm_(self._params, self.clip_grad_norm)

    def _eager_eval(self, x, y):
        with self._autocast():
            out = self.model(x)
            loss = self.loss_fn(out, y)
        return loss, self._eager_stats(out, y)

    def _setup_compile(self) -> None:
        if not self.compile or self._compiled is not None:
            return
        from ..static import compile as ember_compile

        net = self.model  # the evaluation forward: the plain module
        model, opt, loss_fn, stats, trainer = (
            self.model if self.ddp is None else self.ddp,  # DDP: all-reduces in the graph
            self.optimizer,
            self.loss_fn,
            self._stats,
            self,
        )

        def train_step(x, y):
            opt.zero_grad()
            with trainer._autocast():
                out = model(x)
                loss = loss_fn(out, y)
            trainer._backward_step(loss)
            return loss, stats(out, y)

        def eval_step(x, y):
            with trainer._autocast():
                out = net(x)
                loss = loss_fn(out, y)
            return loss, stats(out, y)

        compiled_train = ember_compile(train_step, name="train_step", verbose=False)
        compiled_eval = ember_compile(eval_step, name="eval_step", verbose=False)
        self._compiled = (compiled_train, compiled_eval)
        self._train_step = self._guard(compiled_train, "training step", "_train_step")
        self._eval_step = self._guard(compiled_eval, "evaluation step", "_eval_step")

    def _guard(self, compiled, what: str, attr: str):
        """Run ``compiled``; if its first trace fails, warn and fall back to eager for good."""
        eager = getattr(self, "_eager_" + attr.split("_")[1])
        traced = [False]

        def run(x, y):
            if traced[0]:
                return compiled(x, y)
            try:
                result = compiled(x, y)
            except EmberError as e:
                if compiled.traces > 1:
                    raise
                msg = f"compile: could not compile the {what} ({e}); running it eagerly"
                self._warn(msg, RuntimeWarning)
                setattr(self, attr, eager)
                if self.optimizer is not None:
                    self.optimizer.zero_grad()
                if self.scaler is not None:  # the failed trace's unscale_ records: forgotten
                    self.scaler._per_optimizer_states.clear()
                return eager(x, y)
            traced[0] = True
            return result

        return run
