"""Trainer(amp=...): bfloat16 autocast (float16 + GradScaler) trains like float32."""

import numpy as np
import pytest

import ember
from ember.train import Trainer


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
