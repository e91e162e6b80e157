"""Trainer(amp=...): bfloat16 autocast (float16 + GradScaler) trains like float32."""

import numpy as np
import pytest
import torch

import ember
from ember.train import LambdaCallback, Trainer, TrainingInterrupted, load_checkpoint

from ._helpers import assert_same_run, make_trainer, weights


def _fit(amp, epochs=6):
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 8)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    data = ember.utils.data.TensorDataset(ember.tensor(x), ember.tensor(y))
    loader = ember.utils.data.DataLoader(data, batch_size=32, shuffle=True)
    model = ember.nn.Sequential(ember.nn.Linear(8, 32), ember.nn.ReLU(), ember.nn.Linear(32, 2))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    trainer = Trainer(model, opt, loader, loader, amp=amp, verbose=0)
    history = trainer.fit(epochs)
    return trainer, history


@pytest.mark.parametrize("amp", [True, "float16"])
def test_amp_reaches_float32_accuracy(amp):
    _, f32 = _fit(False)
    trainer, mixed = _fit(amp)
    assert mixed["test_acc"][-1] >= f32["test_acc"][-1] - 0.03
    assert trainer.model[0].weight.dtype is ember.float32
    expected = ember.bfloat16 if amp is True else ember.float16
    assert trainer.amp_dtype is expected
    assert (trainer.scaler is not None) == (amp == "float16")
    with trainer._autocast():
        assert trainer.model(ember.ones(1, 8)).dtype is expected


def test_bad_amp_dtype_is_refused():
    with pytest.raises(ember.EmberError, match="amp must be bfloat16 or float16"):
        _fit("float64", epochs=0)


# -- the GradScaler's state in training checkpoints ------------------------------------------


def _scaled_trainer(out_dir, *, callbacks=(), custom_scaler=True, init_seed=0):
    """A float16 trainer whose scaler skips and grows within 15 steps (init 2**20, interval 2:
    the scale goes 2**19, 2**18, 2**17, 2**17, 2**18...)."""
    trainer = make_trainer(out_dir, amp="float16", callbacks=callbacks, init_seed=init_seed)
    if custom_scaler:
        trainer.scaler = ember.amp.GradScaler("cpu", init_scale=2.0**20, growth_interval=2)
    return trainer


def test_resumed_amp_run_continues_the_scale_sequence(tmp_path):
    ref = _scaled_trainer(tmp_path / "ref")
    ref_hist = ref.fit(3)
    ref_scales = ref.scaler.state_dict()

    stop = LambdaCallback(
        on_batch_end=lambda tr, s, logs: _raise_at(tr.global_step == 7, KeyboardInterrupt)
    )
    first = _scaled_trainer(tmp_path / "run", callbacks=[stop])
    with pytest.raises(TrainingInterrupted):
        first.fit(3)
    saved = load_checkpoint(tmp_path / "run" / "last.safetensors")["scaler"]
    assert saved == first.scaler.state_dict()
    assert sorted(saved) == sorted(torch.amp.GradScaler("cpu").state_dict())  # torch's keys
    # a default scaler (init 2**16, interval 2000) gets the run's scale, tracker and settings
    second = _scaled_trainer(tmp_path / "run", custom_scaler=False, init_seed=123)
    second.resume(tmp_path / "run" / "last.safetensors")
    assert second.scaler.get_scale() == saved["scale"] != 2.0**16
    hist = second.fit(3)
    assert_same_run(weights(ref.model), ref_hist, weights(second.model), hist)
    assert second.scaler.state_dict() == ref_scales
    assert ref_scales["scale"] != 2.0**20  # the sequence moved: skips and growth happened


def _raise_at(cond, exc):
    if cond:
        raise exc


def test_checkpoint_without_scaler_state_resumes_with_a_note(tmp_path):
    first = _scaled_trainer(tmp_path / "run")
    first.fit(1)
    path = tmp_path / "run" / "last.safetensors"
    state = load_checkpoint(path)
    del state["scaler"]  # as written before the scaler was saved
    old = tmp_path / "old.safetensors"
    ember.save(state, old)
    second = _scaled_trainer(tmp_path / "run2", custom_scaler=False)
    with pytest.warns(UserWarning, match="no GradScaler state .* starts afresh at 65536"):
        second.resume(old)
    assert second.scaler.get_scale() == 2.0**16 and second.epoch == 1
    assert any("no GradScaler state" in d for d in second.diagnostics)
    second.fit(2)


def test_scaler_state_into_a_trainer_without_scaler_is_refused(tmp_path):
    _scaled_trainer(tmp_path / "run").fit(1)
    plain = make_trainer(tmp_path / "plain", amp="bfloat16")
    with pytest.raises(ember.EmberError, match="has a GradScaler's state .* amp='float16'"):
        plain.resume(tmp_path / "run" / "last.safetensors")
