"""``ember train`` / ``ember eval`` end to end on the bundled digits (short runs), and the
one-line errors for bad options and unreadable data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.cli import main

TRAIN_OPTIONS = [
    "--model",
    "--data",
    "--epochs",
    "--batch-size",
    "--lr",
    "--optimizer",
    "--device",
    "--compile",
    "--workers",
    "--seed",
    "--out",
    "--resume",
]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(err: str, *fragments: str) -> None:
    # the input-bound warning comes and goes with the machine's load: not part of the error
    lines = [line for line in err.splitlines() if line.strip() and "warning: waiting" not in line]
    assert "Traceback" not in err
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].startswith("usage:")), err
    for fragment in fragments:
        assert fragment in lines[-1], (fragment, lines[-1])


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """One short training run shared by the tests that inspect its output."""
    out = tmp_path_factory.mktemp("cli") / "run"
    import contextlib
    import io

    with (
        contextlib.redirect_stdout(io.StringIO()) as so,
        contextlib.redirect_stderr(io.StringIO()) as se,
    ):
        code = main(["train", "--epochs", "3", "--out", str(out), "--seed", "1"])
    return code, so.getvalue(), se.getvalue(), out


def test_help_lists_commands_and_every_train_option(capsys):
    code, text, _ = _run(capsys, "--help")
    assert code == 0
    assert "train" in text and "eval" in text
    code, out, _ = _run(capsys, "train", "--help")
    assert code == 0
    for option in TRAIN_OPTIONS:
        assert option in out, option
    assert "digits" in out and "last.safetensors" in out


def test_no_command_prints_help_and_exits_2(capsys):
    code, out, _ = _run(capsys)
    assert code == 2 and "usage: ember" in out


def test_list_models(capsys):
    code, out, _ = _run(capsys, "train", "--list-models")
    assert code == 0
    assert set(out.split()) >= {"mlp", "cnn", "lenet5", "vgg11_bn", "resnet18", "resnet50"}


@pytest.mark.parametrize(
    "argv, fragments",
    [
        (["--epochs", "0"], ["--epochs", "positive whole number", "'0'"]),
        (["--lr", "fast"], ["--lr", "expected a number", "'fast'"]),
        (["--optimizer", "lbfgs"], ["--optimizer", "invalid choice", "lbfgs"]),
        (["--bogus"], ["unrecognized arguments", "--bogus"]),
    ],
)
def test_bad_options_are_one_line_with_exit_2(capsys, argv, fragments):
    code, _, err = _run(capsys, "train", *argv)
    assert code == 2
    _one_line_error(err, *fragments)


def test_bad_values_are_one_line_with_exit_1(capsys, tmp_path):
    missing = tmp_path / "nowhere"
    cases = [
        (["--data", str(missing)], ["--data", "nowhere"]),
        (["--model", "alexnet"], ["--model alexnet", "unknown model", "resnet18"]),
        (["--device", "tpu"], ["--device tpu"]),
        (["--resume", str(missing)], ["--resume", "no training state"]),
    ]
    if not ember.cuda.is_available():
        cases.append((["--device", "cuda"], ["--device cuda", "no usable GPU"]))
    for argv, fragments in cases:
        code, _, err = _run(capsys, "train", "--out", str(tmp_path / "o"), *argv)
        assert code == 1, argv
        _one_line_error(err, "ember train: error:", *fragments)


def test_unreadable_data_is_one_line(capsys, tmp_path):
    bad = tmp_path / "mnist"
    bad.mkdir()
    (bad / "train-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x03garbage")
    (bad / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01")
    code, _, err = _run(capsys, "train", "--data", str(bad), "--out", str(tmp_path / "o"))
    assert code == 1
    _one_line_error(err, "ember train: error: --data", str(bad))


def test_default_run_trains_and_leaves_checkpoint_log_and_plot(digits_run):
    code, out, err, folder = digits_run
    assert code == 0, err
    result = out.strip().splitlines()[-1]
    match = re.match(r"test accuracy ([\d.]+)% \(loss [\d.]+\) after 3 epochs in [\d.]+ s", result)
    assert match, result
    assert float(match.group(1)) >= 90.0
    assert "ember train: cnn on digits (1,438 train / 359 test images" in err
    assert "samples/s" in err and "data" in err  # the per-epoch progress line
    names = {p.name for p in folder.iterdir()}
    assert {"last.safetensors", "best.safetensors", "config.json", "log.csv", "curves.png"} <= names
    assert (folder / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    events = list((folder / "tensorboard").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0
    rows = (folder / "log.csv").read_text().strip().splitlines()
    assert len(rows) == 4 and "test_acc" in rows[0]
    config = json.loads((folder / "config.json").read_text())
    assert config["model"] == "cnn" and config["epochs"] == 3 and config["seed"] == 1


def test_tensorboard_log_reads_back(digits_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(digits_run[3] / "tensorboard"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert any("loss" in t for t in tags) and any("acc" in t for t in tags)


def test_eval_reports_the_same_accuracy(digits_run, capsys):
    code, out, err, folder = digits_run
    trained = float(re.search(r"best ([\d.]+)%", out).group(1))
    code, out, err = _run(capsys, "eval", str(folder))
    assert code == 0, err
    assert "cnn on digits (test split)" in out
    assert float(re.search(r"accuracy ([\d.]+)%", out).group(1)) == pytest.approx(trained)


def test_eval_errors(capsys, digits_run, tmp_path):
    code, _, err = _run(capsys, "eval", str(tmp_path / "none.safetensors"))
    assert code == 1
    _one_line_error(err, "ember eval: error:", "no such checkpoint")
    code, _, err = _run(capsys, "eval", str(digits_run[3]), "--model", "mlp")
    assert code == 1
    _one_line_error(err, "does not fit --model mlp")


def test_out_folder_with_a_run_is_not_overwritten(capsys, digits_run):
    folder = digits_run[3]
    before = (folder / "last.safetensors").read_bytes()
    code, _, err = _run(capsys, "train", "--epochs", "1", "--out", str(folder))
    assert code == 1
    _one_line_error(err, "already holds a run", "--resume")
    assert (folder / "last.safetensors").read_bytes() == before


def test_interrupted_run_resumes_to_the_same_weights(capsys, tmp_path, monkeypatch):
    import ember.train

    common = ["--model", "mlp", "--epochs", "2", "--seed", "3", "-q"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert _run(capsys, "train", "--out", str(straight), *common)[0] == 0

    class CtrlCAtStep30(ember.train.Trainer):  # as if the user pressed Ctrl-C mid-epoch 2
        def __init__(self, *args, callbacks=(), **kw):
            def on_batch_end(tr, step, logs):
                if tr.global_step == 30:
                    raise KeyboardInterrupt

            cb = ember.train.LambdaCallback(on_batch_end=on_batch_end)
            super().__init__(*args, callbacks=[*callbacks, cb], **kw)

    with monkeypatch.context() as m:
        m.setattr(ember.train, "Trainer", CtrlCAtStep30)
        code, out, err = _run(capsys, "train", "--out", str(resumed), *common)
    assert code == 130
    _one_line_error(err, "ember train: interrupted at epoch 2, step 7", "--resume")
    code, out, err = _run(capsys, "train", "--resume", str(resumed), "-q")
    assert code == 0, err
    assert "after 2 epochs" in out
    a = ember.load(straight / "last.safetensors")["model"]
    b = ember.load(resumed / "last.safetensors")["model"]
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key].numpy(), b[key].numpy(), err_msg=key)


def test_python_dash_m_ember(tmp_path):
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "ember", "train", "--list-models"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(root), "PATH": ""},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "resnet18" in proc.stdout


def test_compile_workers_and_other_options(capsys, tmp_path):
    argv = ["--model", "mlp", "--epochs", "1", "--compile", "--workers", "2", "--seed", "4"]
    argv += ["--optimizer", "sgd", "--lr", "0.1", "--batch-size", "32", "--scheduler", "step"]
    code, out, err = _run(capsys, "train", *argv, "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert "mlp on digits" in err and "compiled" in err and "sgd lr 0.1, batch 32" in err
    assert float(re.search(r"test accuracy ([\d.]+)%", out).group(1)) > 80
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["compile"] is True and config["workers"] == 2 and config["optimizer"] == "sgd"


@pytest.mark.parametrize(
    "device, argv, compiled",
    [
        ("cpu", [], False),  # measured no faster on the CPU
        ("cuda", [], True),  # a CUDA graph: 1.2-1.9x faster on an H100
        ("cuda", ["--no-compile"], False),
        ("cpu", ["--compile"], True),
    ],
)
def test_train_picks_the_faster_path_and_says_which(
    request, capsys, tmp_path, device, argv, compiled
):
    if device == "cuda" and not ember.cuda.is_available():
        request.getfixturevalue("fake_cuda")  # the strict fake CuPy stands in for a GPU
    code, out, err = _run(
        capsys, "train", "--model", "mlp", "--epochs", "1", "--device", device, *argv,
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert code == 0, err
    assert (", compiled" if compiled else ", eager") in err.splitlines()[0]
    assert json.loads((tmp_path / "r" / "config.json").read_text())["compile"] is compiled


@pytest.mark.parametrize("amp", ["float16", "bfloat16"])
def test_train_with_amp_on_a_gpu_compiles_its_step(request, capsys, tmp_path, amp):
    """The main job's mixed precision on a GPU, compiled (the default there): float16's
    GradScaler step traces too (it failed on an H100 and ran eagerly, then crashed)."""
    if not ember.cuda.is_available():
        request.getfixturevalue("fake_cuda")  # the strict fake CuPy stands in for a GPU
    code, out, err = _run(
        capsys, "train", "--epochs", "1", "--device", "cuda", "--amp", amp,
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert code == 0, err
    assert ", compiled" in err.splitlines()[0] and "could not compile" not in err
    assert float(re.search(r"test accuracy ([\d.]+)%", out).group(1)) > 50
