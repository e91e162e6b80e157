"""The training loop: metrics, modes, schedulers, compile, diagnostics, progress, callbacks."""

from __future__ import annotations

import csv
import gc
import io
import math
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.data import DataLoader
from ember.train import (
    CSVLogger,
    EarlyStopping,
    InputBoundWarning,
    LambdaCallback,
    ModelCheckpoint,
    NonFiniteLossError,
    ProgressBar,
    Trainer,
    fit,
    load_checkpoint,
    load_weights,
)

from ._helpers import Images, blobs, loaders, mlp


def _trainer(model=None, lr=0.1, **kw):
    ember.manual_seed(0)
    model = model if model is not None else nn.Linear(2, 2)
    train = DataLoader(blobs(64, 0), batch_size=16, shuffle=True)
    test = DataLoader(blobs(32, 1), batch_size=16)
    kw.setdefault("verbose", 0)
    return Trainer(model, ember.optim.SGD(model.parameters(), lr=lr), train, test, **kw)


def test_fit_learns_and_fills_history():
    tr = _trainer()
    hist = tr.fit(4)
    assert set(hist) == {
        "train_loss",
        "train_acc",
        "test_loss",
        "test_acc",
        "lr",
        "epoch_time",
        "data_wait",
        "samples_per_s",
    }
    assert all(len(v) == 4 for v in hist.values())
    assert hist["train_loss"][-1] < hist["train_loss"][0]
    assert hist["test_acc"][-1] >= 0.9
    assert 0.0 <= hist["data_wait"][0] <= 1.0 and hist["samples_per_s"][0] > 0
    assert (tr.epoch, tr.global_step, tr.step_in_epoch) == (4, 16, 0)
    # the loss is the mean over samples; test metrics agree with evaluate()
    result = tr.evaluate()
    assert result["samples"] == 32
    assert math.isclose(result["loss"], hist["test_loss"][-1], rel_tol=1e-6)
    assert math.isclose(result["acc"], hist["test_acc"][-1])


class _Probe(nn.Module):
    """Records (training flag, grad mode) at every forward."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.seen = []

    def forward(self, x):
        self.seen.append((self.training, ember.is_grad_enabled()))
        return self.lin(x)


def test_train_and_eval_modes():
    probe = _Probe()
    tr = _trainer(probe)
    probe.eval()
    tr.fit(1)
    assert probe.seen[:4] == [(True, True)] * 4  # 64 / 16 training steps
    assert probe.seen[4:] == [(False, False)] * 2  # evaluation: eval mode, no grad
    assert probe.training  # back in training mode after evaluation


def test_fit_function_defaults_to_adam_and_returns_history():
    ember.manual_seed(0)
    loader = DataLoader(blobs(64), batch_size=16)
    hist = fit(nn.Linear(2, 2), loader, epochs=2, lr=0.05, verbose=0)
    assert len(hist["train_loss"]) == 2 and "test_loss" not in hist


def test_non_classification_targets_log_loss_only():
    ember.manual_seed(0)
    x = ember.randn(32, 3)
    ds = ember.data.TensorDataset(x, x.sum(1, keepdim=True))
    model = nn.Linear(3, 1)
    hist = Trainer(
        model,
        ember.optim.SGD(model.parameters(), lr=0.1),
        DataLoader(ds, batch_size=8),
        loss_fn=nn.MSELoss(),
        verbose=0,
    ).fit(3)
    assert "train_acc" not in hist and hist["train_loss"][-1] < hist["train_loss"][0]


def test_topk():
    ember.manual_seed(0)
    train, test = loaders()
    model = mlp()
    tr = Trainer(
        model, ember.optim.Adam(model.parameters(), 1e-2), train, test, topk=(2,), verbose=0
    )
    hist = tr.fit(1)
    assert hist["train_top2"][0] >= hist["train_acc"][0]
    assert hist["test_top2"][0] >= hist["test_acc"][0]


def test_compile_matches_eager():
    from ember.backend import jit as _jit

    results = []
    for compile_ in (False, True):
        tr = _trainer(compile=compile_)
        results.append((tr.fit(2), {k: v.numpy() for k, v in tr.model.state_dict().items()}))
    (h_e, w_e), (h_c, w_c) = results
    np.testing.assert_allclose(h_c["train_loss"], h_e["train_loss"], rtol=1e-5)
    for k in w_e:
        np.testing.assert_allclose(w_c[k], w_e[k], rtol=1e-5, atol=1e-6)
    assert _jit.mode() != "sync" or __import__("os").environ.get("EMBER_JIT") == "sync"


def test_clip_grad_norm_runs():
    tr = _trainer(clip_grad_norm=0.01, lr=1.0)
    hist = tr.fit(1)
    assert math.isfinite(hist["train_loss"][0])


# -- schedulers -----------------------------------------------------------------------------------


def test_epoch_scheduler_and_lr_history():
    tr = _trainer()
    tr.scheduler = ember.optim.lr_scheduler.StepLR(tr.optimizer, step_size=1, gamma=0.5)
    hist = tr.fit(3)
    np.testing.assert_allclose(hist["lr"], [0.1, 0.05, 0.025])


def test_per_step_scheduler():
    ember.manual_seed(0)
    model = nn.Linear(2, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(blobs(64), batch_size=16)
    sched = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=8)
    tr = Trainer(model, opt, loader, scheduler=sched, verbose=0)
    assert tr.scheduler_interval == "step"
    tr.fit(2)
    assert sched.last_epoch == 8


def test_reduce_on_plateau_gets_the_monitored_metric():
    tr = _trainer(lr=0.0)  # nothing improves
    tr.scheduler = ember.optim.lr_scheduler.ReduceLROnPlateau(tr.optimizer, patience=0, eps=0)
    tr.optimizer.param_groups[0]["lr"] = 1e-12
    tr.fit(3)
    assert tr.optimizer.param_groups[0]["lr"] < 1e-12


def test_bad_scheduler_interval():
    with pytest.raises(ValueError, match="scheduler_interval must be 'epoch' or 'step'"):
        _trainer(scheduler_interval="batch")


# -- diagnostics ----------------------------------------------------------------------------------


def test_nan_loss_stops_and_names_the_last_good_checkpoint(tmp_path):
    calls = [0]

    def loss_fn(out, y):
        calls[0] += 1
        loss = ember.nn.functional.cross_entropy(out, y)
        return loss * float("nan") if calls[0] == 9 else loss  # 6 calls per epoch: 4 + 2 eval

    tr = _trainer(loss_fn=loss_fn, callbacks=[ModelCheckpoint(tmp_path)])
    tr.fit(1)
    last = tmp_path / "last.safetensors"
    before = last.read_bytes()
    with pytest.raises(NonFiniteLossError) as info:
        tr.fit(3)
    msg = str(info.value)
    assert "loss is nan at epoch 2, step 3 (global step 7)" in msg
    assert f"the last good checkpoint is {last} (end of epoch 1)" in msg
    assert "lower learning rate" in msg
    assert (info.value.epoch, info.value.step, info.value.checkpoint) == (2, 3, last)
    assert last.read_bytes() == before  # not overwritten with the bad state
    assert load_checkpoint(last)["epoch"] == 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_diverging_lr_stops_without_checkpoint():
    tr = _trainer(lr=1e30, model=nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2)))
    with pytest.raises(NonFiniteLossError, match="no checkpoint was written yet") as info:
        tr.fit(20)
    assert isinstance(info.value, ember.EmberError) and info.value.checkpoint is None


def test_slow_dataset_warns_once_with_the_hint():
    ember.manual_seed(0)
    model = mlp()
    # 40 ms of sleeping a batch: far above the step, even while another test process holds the
    # second core (a 2 ms delay gave a share of 0.24 under CI's two workers)
    train = DataLoader(Images(64, 0, delay=0.01), batch_size=4)
    tr = Trainer(
        model,
        ember.optim.SGD(model.parameters(), lr=0.1),
        train,
        verbose=0,
        input_bound_hint="raise --workers (now {workers})",
    )
    with pytest.warns(InputBoundWarning) as record:
        tr.fit(2)
    msgs = [str(w.message) for w in record if issubclass(w.category, InputBoundWarning)]
    assert len(msgs) == 1
    assert msgs[0].startswith("waiting for data ")
    assert msgs[0].endswith("% of each step: raise --workers (now 0)")
    assert int(msgs[0].split()[3].rstrip("%")) > 30
    # the first epoch's share also holds the one-time loading of the loss's compiled kernel
    # (numba's import and its cache: about a second in a fresh process), so read the second's
    assert tr.history["data_wait"][1] > 0.3 and tr.diagnostics == msgs


def test_fast_dataset_does_not_warn():
    ember.manual_seed(0)
    # in-memory samples, and a model whose step outweighs fetching a batch several times over,
    # so that a scheduling hiccup on a loaded machine cannot make the share look input-bound
    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(36, 512),
        nn.ReLU(),
        nn.Linear(512, 512),
        nn.ReLU(),
        nn.Linear(512, 3),
    )
    train = DataLoader(Images(512, 0), batch_size=64, shuffle=True)
    tr = Trainer(model, ember.optim.SGD(model.parameters(), lr=0.01), train, verbose=0)
    # a full garbage collection of the test session's objects, landing in a fetch (where most
    # allocations happen), would count as waiting for data: keep it out of this measurement
    gc.collect()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", InputBoundWarning)
            tr.fit(2)
    finally:
        gc.enable()
    assert not tr.input_bound_warned and max(tr.history["data_wait"]) < 0.3, tr.history


# -- progress output ------------------------------------------------------------------------------


class _TTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_not_a_tty_prints_only_epoch_lines():
    out = io.StringIO()
    _trainer(verbose=1, stream=out).fit(3)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in out.getvalue()
    assert lines[0].startswith("epoch 1/3  loss ")
    for part in ("acc ", "test loss ", "samples/s", "data ", "s"):
        assert part in lines[2]


def test_progress_on_a_tty_rewrites_one_line():
    out = _TTY()
    _trainer(verbose=1, stream=out).fit(2)
    text = out.getvalue()
    assert "\r" in text and "4/4" in text and "samples/s" in text
    assert text.endswith("\n") and text.count("\n") == 2
    assert "test loss" in text.splitlines()[-1]


def test_verbose_zero_is_silent(capsys):
    _trainer(verbose=0).fit(1)
    assert capsys.readouterr().err == ""


# -- callbacks ------------------------------------------------------------------------------------


def test_early_stopping():
    tr = _trainer(lr=0.0, callbacks=[EarlyStopping("test_loss", patience=1)])
    hist = tr.fit(10)
    assert len(hist["train_loss"]) == 3 and tr.stop_training
    assert "early stopping: test_loss has not improved for 2 epochs" in tr.stop_reason


def test_callback_hooks_order_and_arguments():
    calls = []
    cb = LambdaCallback(
        on_train_begin=lambda tr: calls.append("train_begin"),
        on_epoch_begin=lambda tr, e: calls.append(f"epoch_begin {e}"),
        on_batch_begin=lambda tr, s: calls.append(f"batch_begin {s}"),
        on_batch_end=lambda tr, s, logs: calls.append(f"batch_end {s} {logs['batch_size']}"),
        on_epoch_end=lambda tr, e, logs: calls.append(f"epoch_end {e} {sorted(logs)[0]}"),
        on_train_end=lambda tr: calls.append("train_end"),
    )
    _trainer(callbacks=[cb]).fit(1)
    assert calls == [
        "train_begin",
        "epoch_begin 0",
        "batch_begin 0",
        "batch_end 0 16",
        "batch_begin 1",
        "batch_end 1 16",
        "batch_begin 2",
        "batch_end 2 16",
        "batch_begin 3",
        "batch_end 3 16",
        "epoch_end 0 data_wait",
        "train_end",
    ]
    with pytest.raises(TypeError, match="unknown hooks"):
        LambdaCallback(on_step=print)


def test_checkpoint_best_and_csv(tmp_path):
    tr = _trainer(
        callbacks=[ModelCheckpoint(tmp_path), CSVLogger(tmp_path / "log.csv")],
        config={"model": "linear"},
    )
    hist = tr.fit(3)
    best = ember.load(tmp_path / "best.safetensors")
    assert sorted(best) == ["bias", "weight"]
    assert sorted(load_weights(tmp_path / "last.safetensors")) == ["bias", "weight"]
    tr.model.load_state_dict(best)
    cp = tr.callbacks[-1]
    assert cp.best == max(hist["test_acc"])
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert [r["epoch"] for r in rows] == ["1", "2", "3"]
    assert float(rows[2]["test_acc"]) == hist["test_acc"][2]
    assert (tmp_path / "config.json").read_text().strip().startswith("{")
    assert load_checkpoint(tmp_path / "last.safetensors")["config"] == {"model": "linear"}


def test_out_dir_layout(tmp_path):
    pytest.importorskip("ember.utils.tensorboard")
    out = tmp_path / "run"
    tr = _trainer(out_dir=out, verbose=1, stream=io.StringIO())
    assert {type(c).__name__ for c in tr.callbacks} == {
        "ModelCheckpoint",
        "CSVLogger",
        "TensorBoardLogger",
        "PlotCallback",
        "ProgressBar",
    }
    tr.fit(2)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["best.safetensors", "curves.png", "last.safetensors", "log.csv", "tensorboard"]
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG"
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    events = ea_mod.EventAccumulator(str(out / "tensorboard"), size_guidance={"histograms": 0})
    events.Reload()
    tags = events.Tags()
    assert {"loss/train_step", "loss/train", "acc/test", "lr"} <= set(tags["scalars"])
    assert {"weights/weight", "weights/bias"} <= set(tags["histograms"])
    assert [e.step for e in events.Scalars("acc/test")] == [1, 2]
    assert len(events.Scalars("loss/train_step")) == 8


def test_bad_batches_say_what_was_expected():
    ember.manual_seed(0)
    model = nn.Linear(2, 2)
    tr = Trainer(model, ember.optim.SGD(model.parameters(), lr=0.1), [ember.zeros(4, 2)], verbose=0)
    with pytest.raises(ember.EmberError, match=r"expected batches of \(input, target\), got a"):
        tr.fit(1)


def test_save_checkpoint_refused_inside_a_step(tmp_path):
    def loss_fn(out, y):
        tr.save_checkpoint(tmp_path / "x.safetensors")

    tr = _trainer(loss_fn=loss_fn)
    with pytest.raises(ember.EmberError, match="inside a training step"):
        tr.fit(1)


def test_progress_bar_is_added_once():
    pb = ProgressBar(io.StringIO())
    tr = _trainer(verbose=1, callbacks=[pb])
    assert [c for c in tr.callbacks if isinstance(c, ProgressBar)] == [pb]


class _NeedsValues(nn.Module):
    """Reads a tensor's value in forward: cannot be traced."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x) * (1.0 if x.sum().item() > -1e9 else 2.0)


class _StepReadsValues(ember.optim.SGD):
    """Reads a gradient's value in step: the trace fails after GradScaler's unscale_."""

    def step(self, closure=None):
        if float(self.param_groups[0]["params"][0].grad.sum()) > 1e30:
            return None
        return super().step(closure)


def test_a_failed_compile_with_a_grad_scaler_runs_eagerly():
    """The failed trace's unscale_ records are dropped: the eager step starts clean."""
    ember.manual_seed(0)
    model = nn.Linear(2, 2)
    train = DataLoader(blobs(64, 0), batch_size=16, shuffle=True)
    opt = _StepReadsValues(model.parameters(), lr=0.1)
    tr = Trainer(model, opt, train, None, compile=True, amp="float16", verbose=0)
    with pytest.warns(RuntimeWarning, match="could not compile the training step"):
        hist = tr.fit(2)
    assert hist["train_loss"][1] < hist["train_loss"][0]


def test_compile_falls_back_to_eager_with_a_warning():
    tr = _trainer(_NeedsValues(), compile=True)
    with pytest.warns(RuntimeWarning, match="could not compile the (training|evaluation) step"):
        hist = tr.fit(2)
    assert hist["train_loss"][1] < hist["train_loss"][0]
    assert any("evaluation step" in d for d in tr.diagnostics)
