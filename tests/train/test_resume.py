"""An interrupted run resumed from its checkpoint ends exactly like an uninterrupted one."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import ember
from ember.train import LambdaCallback, TrainingInterrupted, load_checkpoint

from ._helpers import assert_same_run, make_trainer, random_transform, weights

EPOCHS = 3  # 5 steps per epoch


def _interrupter(at_global_step=None, at_epoch_end=None):
    def on_batch_end(tr, step, logs):
        if tr.global_step == at_global_step:
            raise KeyboardInterrupt

    def on_epoch_end(tr, epoch, logs):
        if epoch + 1 == at_epoch_end:
            raise KeyboardInterrupt

    return LambdaCallback(on_batch_end=on_batch_end, on_epoch_end=on_epoch_end)


@pytest.fixture(autouse=True)
def _python_handles_sigint():
    """Ctrl-C reaches Python as ``KeyboardInterrupt`` here, as in a terminal: a shell's
    background job (``cmd &`` without job control) starts with SIGINT ignored, and the Trainer
    leaves an ignored SIGINT alone."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _run_interrupted_and_resume(tmp_path, interrupter, **kw):
    ref = make_trainer(tmp_path / "ref", **kw)
    ref_hist = ref.fit(EPOCHS)
    ref_w = weights(ref.model)

    out = tmp_path / "run"
    first = make_trainer(out, callbacks=[interrupter], **kw)
    with pytest.raises(TrainingInterrupted) as info:
        first.fit(EPOCHS)
    assert info.value.checkpoint == out / "last.safetensors"
    assert os.path.exists(out / "last.safetensors")
    # a fresh process would start from other random states: start from another seed
    second = make_trainer(out, init_seed=123, **kw).resume(out / "last.safetensors")
    hist = second.fit(EPOCHS)
    assert_same_run(ref_w, ref_hist, weights(second.model), hist)
    assert len(hist["train_loss"]) == EPOCHS
    return info.value


@pytest.mark.parametrize(
    "case",
    ["plain", "transforms+dropout", "onecycle", "compile"],
)
def test_resume_mid_epoch_is_bitwise_identical(tmp_path, case, request):
    kw = {"dropout": 0.3}
    if case == "plain":
        kw = {"dropout": 0.0}
    elif case == "transforms+dropout":
        kw["transform"] = random_transform()
    elif case == "onecycle":
        kw.update(sched="onecycle", transform=random_transform())
    elif case == "compile":
        kw.update(compile=True, transform=random_transform())
        # numba kernels replace the NumPy path whenever their background compile ends, which
        # changes the rounding mid-run: bitwise reproducibility needs EMBER_JIT=off or sync
        from ember.backend import jit as _jit

        previous = _jit.set_mode("off")
        request.addfinalizer(lambda: _jit.set_mode(previous))
    exc = _run_interrupted_and_resume(tmp_path, _interrupter(at_global_step=7), **kw)
    assert (exc.epoch, exc.step) == (2, 2)
    assert "interrupted at epoch 2, step 2: training state saved to" in str(exc)


def test_resume_after_last_batch_and_at_epoch_end(tmp_path):
    kw = {"transform": random_transform()}
    exc = _run_interrupted_and_resume(tmp_path / "a", _interrupter(at_global_step=10), **kw)
    assert (exc.epoch, exc.step) == (2, 5)  # all batches of epoch 2 done, not yet evaluated
    exc = _run_interrupted_and_resume(tmp_path / "b", _interrupter(at_epoch_end=1), **kw)
    assert (exc.epoch, exc.step) == (1, 0)
    assert "end of epoch 1" in str(exc)


def test_resume_with_explicit_generator_and_workers(tmp_path):
    """The loader's own generator is saved and restored; thread workers keep the order."""
    kw = {"gen_seed": 5, "num_workers": 2}
    _run_interrupted_and_resume(tmp_path, _interrupter(at_global_step=8), **kw)


def test_sigint_stops_at_the_step_boundary_and_resumes(tmp_path):
    def ctrl_c(tr, step, logs):
        if tr.global_step == 6:
            os.kill(os.getpid(), signal.SIGINT)  # as if the user pressed Ctrl-C now

    kw = {"transform": random_transform()}
    exc = _run_interrupted_and_resume(tmp_path, LambdaCallback(on_batch_end=ctrl_c), **kw)
    assert exc.step >= 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_checkpoint_contents(tmp_path):
    tr = make_trainer(tmp_path, callbacks=[_interrupter(at_global_step=7)])
    with pytest.raises(TrainingInterrupted):
        tr.fit(EPOCHS)
    state = load_checkpoint(tmp_path / "last.safetensors")
    assert state["format"] == "ember.train" and state["version"] == 1
    assert (state["epoch"], state["step"], state["global_step"]) == (1, 2, 7)
    assert set(state["rng"]) == {"ember", "python", "numpy", "generators"}
    assert state["epoch_rng"] is not None and state["partial"]["count"] == 16
    assert state["scheduler"]["last_epoch"] == 1
    assert len(state["history"]["train_loss"]) == 1
    assert state["callbacks"]["ModelCheckpoint"]["best_epoch"] == 1
    # best.safetensors is a plain state dict
    model = tr.model
    model.load_state_dict(ember.load(tmp_path / "best.safetensors"))


def test_interrupt_inside_a_step_keeps_the_last_good_checkpoint(tmp_path):
    calls = [0]

    def loss_fn(out, y):
        calls[0] += 1
        if calls[0] == 8:
            raise KeyboardInterrupt
        return ember.nn.functional.cross_entropy(out, y)

    tr = make_trainer(tmp_path)
    tr.loss_fn = loss_fn
    with pytest.raises(TrainingInterrupted, match="not a consistent point") as info:
        tr.fit(EPOCHS)
    assert info.value.checkpoint == tmp_path / "last.safetensors"
    assert load_checkpoint(tmp_path / "last.safetensors")["epoch"] == 1


def test_interrupt_without_checkpoint_folder_says_so():
    tr = make_trainer(None, callbacks=[_interrupter(at_global_step=3)])
    with pytest.raises(TrainingInterrupted, match="no checkpoint folder set") as info:
        tr.fit(EPOCHS)
    assert info.value.checkpoint is None


def test_resume_rejects_weights_only_files(tmp_path):
    tr = make_trainer(tmp_path)
    tr.fit(1)
    with pytest.raises(
        ember.EmberError if hasattr(ember, "EmberError") else RuntimeError,
        match="not a training-state checkpoint",
    ):
        make_trainer(tmp_path).resume(tmp_path / "best.safetensors")


def test_resume_continues_for_more_epochs(tmp_path):
    ref = make_trainer(tmp_path / "ref")
    ref_hist = ref.fit(3)
    tr = make_trainer(tmp_path / "run")
    tr.fit(2)
    tr2 = make_trainer(tmp_path / "run", init_seed=9).resume(tmp_path / "run" / "last.safetensors")
    assert tr2.epoch == 2 and len(tr2.history["train_loss"]) == 2
    hist = tr2.fit(3)
    assert_same_run(weights(ref.model), ref_hist, weights(tr2.model), hist)
    np.testing.assert_allclose(hist["lr"], [1e-2, 5e-3, 2.5e-3])


def test_sigint_during_evaluation(tmp_path):
    evals = [0]

    def loss_fn(out, y):
        if not ember.is_grad_enabled():
            evals[0] += 1
            if evals[0] == 3:  # epoch 2's evaluation, first batch
                os.kill(os.getpid(), signal.SIGINT)
        return ember.nn.functional.cross_entropy(out, y)

    ref = make_trainer(tmp_path / "ref")
    ref_hist = ref.fit(EPOCHS)
    first = make_trainer(tmp_path / "run")
    first.loss_fn = loss_fn
    with pytest.raises(TrainingInterrupted) as info:
        first.fit(EPOCHS)
    assert (info.value.epoch, info.value.step) == (2, 5)
    assert info.value.checkpoint is not None
    second = make_trainer(tmp_path / "run", init_seed=7).resume(info.value.checkpoint)
    hist = second.fit(EPOCHS)
    assert_same_run(weights(ref.model), ref_hist, weights(second.model), hist)


def test_checkpoint_every_n_steps_survives_a_crash(tmp_path):
    """A crash (not an interrupt) leaves the state of the last `every_n_steps` save."""

    def crash(tr, step, logs):
        if tr.global_step == 8:
            raise RuntimeError("power cut")

    ref = make_trainer(tmp_path / "ref")
    ref_hist = ref.fit(EPOCHS)
    first = make_trainer(tmp_path / "run", callbacks=[LambdaCallback(on_batch_end=crash)])
    first.callbacks[-1].every_n_steps = 3
    with pytest.raises(RuntimeError, match="power cut"):
        first.fit(EPOCHS)
    state = load_checkpoint(tmp_path / "run" / "last.safetensors")
    assert (state["epoch"], state["step"], state["global_step"]) == (1, 1, 6)
    second = make_trainer(tmp_path / "run", init_seed=3).resume(
        tmp_path / "run" / "last.safetensors"
    )
    hist = second.fit(EPOCHS)
    assert_same_run(weights(ref.model), ref_hist, weights(second.model), hist)


def test_checkpoint_every_option_reaches_model_checkpoint(tmp_path):
    from ember.train import ModelCheckpoint, Trainer

    model = ember.nn.Linear(2, 2)
    tr = Trainer(
        model,
        ember.optim.SGD(model.parameters(), lr=0.1),
        [],
        out_dir=tmp_path,
        checkpoint_every=50,
        verbose=0,
    )
    assert [c.every_n_steps for c in tr.callbacks if isinstance(c, ModelCheckpoint)] == [50]
