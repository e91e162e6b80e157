"""Resuming a run as another model, optimizer or data set is one line saying what differs and
what to do, never a traceback (issue 16, item 7): from ``ember train --resume`` with a
conflicting option, from a checkpoint copied away from its config.json, and from
``Trainer.resume`` with a checkpoint of another model."""

import contextlib
import io
import shutil

import pytest

import ember
from ember import nn
from ember.cli import main
from ember.train import Trainer

from ..train._helpers import loaders, mlp


def _run(*argv):
    with (
        contextlib.redirect_stdout(io.StringIO()) as out,
        contextlib.redirect_stderr(io.StringIO()) as err,
    ):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _one_line(err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and "warning: waiting" not in line]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("resume") / "run"
    code, _, err = _run("train", "--epochs", "1", "--out", str(out), "--quiet")
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    "option, value, trained",
    [("--model", "mlp", "cnn"), ("--optimizer", "sgd", "adam"), ("--scheduler", "step", "cosine")],
)
def test_resume_with_another_option_is_one_line(run, option, value, trained):
    code, _, err = _run("train", "--resume", str(run), option, value, "--epochs", "2")
    assert code == 1
    _one_line(
        err,
        f"ember train: error: --resume {run}: the run in {run} was trained with {option} "
        f"{trained}, not {value}",
        f"leave out {option} to continue it",
    )


def test_resume_naming_the_same_options_still_works(run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    code, _, err = _run(
        "train", "--resume", str(copy), "--model", "cnn", "--optimizer", "adam", "--epochs", "1"
    )
    assert code == 0, err  # already at epoch 1 of 1: nothing more to do, no error


@pytest.mark.parametrize("option, value", [("--model", "mlp"), ("--optimizer", "sgd")])
def test_checkpoint_without_its_config_checks_the_checkpoints_own(run, tmp_path, option, value):
    (tmp_path / "r").mkdir()
    state = tmp_path / "r" / "last.safetensors"
    shutil.copy(run / "last.safetensors", state)  # no config.json beside it
    code, _, err = _run("train", "--resume", str(state), option, value, "--epochs", "2")
    assert code == 1
    key = option[2:]
    _one_line(err, f"Trainer.resume: the checkpoint was trained with {key} ", f"{value!r}")


def _trainer(model, tmp_path):
    train, test = loaders()
    return Trainer(model, ember.optim.Adam(model.parameters(), lr=1e-2), train, test, verbose=0)


def test_trainer_resume_from_another_models_checkpoint(tmp_path):
    tr = _trainer(mlp(), tmp_path)
    path = tr.save_checkpoint(tmp_path / "last.safetensors")
    other = nn.Sequential(nn.Flatten(), nn.Linear(36, 3))
    with pytest.raises(ember.EmberError) as info:
        _trainer(other, tmp_path).resume(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert (
        "Trainer.resume: the checkpoint's model state does not fit this model (Sequential)" in msg
    )
    assert "2 entries it has no place for (3.bias, 3.weight)" in msg
    assert "resume with the model the checkpoint was trained with" in msg


def test_trainer_resume_with_other_shapes(tmp_path):
    tr = _trainer(mlp(), tmp_path)
    path = tr.save_checkpoint(tmp_path / "last.safetensors")
    wider = nn.Sequential(nn.Flatten(), nn.Linear(36, 16), nn.ReLU(), nn.Linear(16, 5))
    with pytest.raises(ember.EmberError, match=r"tensors of other shapes \(3\.bias \[3\] vs \[5\]"):
        _trainer(wider, tmp_path).resume(path)
