"""ember.utils.tensorboard.SummaryWriter: event files read back with tensorboard's own reader."""

from __future__ import annotations

import glob
import io
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember._errors import DTypeError, EmberError, ShapeError
from ember.utils.tensorboard import SummaryWriter

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

GUIDANCE = {ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.IMAGES: 0, ea.TENSORS: 0}


def read(logdir) -> ea.EventAccumulator:
    return ea.EventAccumulator(str(logdir), size_guidance=GUIDANCE).Reload()


def pixels(encoded: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(encoded)))


def events(logdir) -> list:
    (path,) = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    return list(EventFileLoader(path).Load())


# -- scalars ------------------------------------------------------------------------------------
def test_scalars_round_trip_as_float32(tmp_path):
    values = [
        0.1,  # Python float, not exactly representable
        3,  # Python int
        np.float64(2.5e-8),
        np.array(7.25),  # 0-d array
        np.array([1.5]),  # one element, squeezed as in PyTorch
        ember.tensor(0.3, dtype=ember.float64),
        ember.tensor([[1.0 / 3]], requires_grad=True) * 2,  # requires grad: detached
        ember.tensor(True),
    ]
    with SummaryWriter(tmp_path) as w:
        for step, v in enumerate(values):
            w.add_scalar("train/loss", v, step, walltime=1000.0 + step)
    got = read(tmp_path).Scalars("train/loss")
    assert [e.step for e in got] == list(range(len(values)))
    assert [e.wall_time for e in got] == [1000.0 + i for i in range(len(values))]
    expected = [np.float32(float(np.asarray(ember.tensor(v).detach()).reshape(()))) for v in values]
    assert [e.value for e in got] == [float(x) for x in expected]


def test_global_step_accepts_tensors_and_numpy(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("x", 1.0, ember.tensor(4))
        w.add_scalar("x", 2.0, np.int64(9))
        w.add_scalar("x", 3.0)  # no step: 0
    assert [e.step for e in read(tmp_path).Scalars("x")] == [4, 9, 0]


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("a/loss", {"train": 1.0 / (step + 1), "test": ember.tensor(step)}, step)
    assert sorted(os.listdir(tmp_path))[:2] == ["a_loss_test", "a_loss_train"]
    train = read(tmp_path / "a_loss_train").Scalars("a/loss")
    test = read(tmp_path / "a_loss_test").Scalars("a/loss")
    assert [e.value for e in train] == [float(np.float32(1.0 / (s + 1))) for s in range(3)]
    assert [e.value for e in test] == [0.0, 1.0, 2.0]
    assert [e.step for e in test] == [0, 1, 2]


# -- histograms ---------------------------------------------------------------------------------
def test_histogram_fields(tmp_path):
    values = ember.randn(50, 20, requires_grad=True)
    ref = values.detach().numpy().astype(np.float64).ravel()
    edges = np.linspace(-4, 4, 9)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", values, 3)
        w.add_histogram("edges", ref, 4, bins=edges)
        w.add_histogram("ints", np.array([1, 2, 2, 3, 3, 3]), 5, bins="auto")
    acc = read(tmp_path)
    (h,) = acc.Histograms("w")
    hv = h.histogram_value
    assert h.step == 3
    assert (hv.min, hv.max, hv.num) == (ref.min(), ref.max(), 1000)
    assert hv.sum == pytest.approx(ref.sum()) and hv.sum_squares == pytest.approx(ref @ ref)
    assert sum(hv.bucket) == 1000 and len(hv.bucket) == len(hv.bucket_limit)
    (e,) = acc.Histograms("edges")
    counts, _ = np.histogram(ref, bins=edges)
    nz = np.flatnonzero(counts)
    # PyTorch's trimming: one empty bucket before the first non-empty one, then up to the last
    kept = counts[nz[0] - 1 : nz[-1] + 1] if nz[0] > 0 else np.r_[0, counts[: nz[-1] + 1]]
    assert list(e.histogram_value.bucket) == kept.tolist()
    (i,) = acc.Histograms("ints")
    assert sum(i.histogram_value.bucket) == 6 and i.histogram_value.sum == 14


# expected buckets computed once with torch.utils.tensorboard.summary.make_histogram (2.13)
HIST_DATA = np.array([-2.0, -0.5, 0.0, 0.3, 0.3, 1.7, 40.0, 1e-13])
HIST_CASES = [
    (
        "tensorflow",
        40,
        [0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 2, 1, 1],
        (-13.22760431573435, 1283.3055803133884),
    ),
    ("auto", None, [0, 7, 0, 0, 0, 0, 1], (-2.0, 40.0)),
    (7, 3, [0, 7, 0, 0, 1], (-2.0, 40.0)),
]


@pytest.mark.parametrize("bins, max_bins, bucket, limits", HIST_CASES)
def test_histogram_matches_pytorch(tmp_path, bins, max_bins, bucket, limits):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", HIST_DATA, 0, bins=bins, max_bins=max_bins)
    hv = read(tmp_path).Histograms("h")[0].histogram_value
    assert list(hv.bucket) == bucket
    assert len(hv.bucket_limit) == len(bucket)
    assert (hv.bucket_limit[0], hv.bucket_limit[-1]) == pytest.approx(limits, rel=1e-12)
    assert (hv.min, hv.max, hv.num, hv.sum) == (-2.0, 40.0, 8, pytest.approx(39.8))


# -- images -------------------------------------------------------------------------------------
def test_images_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.integers(0, 256, size=(3, 5, 7), dtype=np.uint8)
    rgba = rng.integers(0, 256, size=(6, 4, 4), dtype=np.uint8)
    gray = np.array([[0.0, 0.5, 1.0], [2.0, -1.0, 0.25]], np.float32)  # scaled by 255, clipped
    batch = rng.integers(0, 256, size=(10, 1, 2, 3), dtype=np.uint8)  # 10 images: 8 + 2 grid
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", ember.tensor(chw), 1)
        w.add_image("hwc", chw.transpose(1, 2, 0), 2, dataformats="HWC")
        w.add_image("rgba", rgba, 3, dataformats="HWC")
        w.add_image("gray", ember.tensor(gray, requires_grad=True), 4, dataformats="HW")
        w.add_images("batch", batch, 5)
    acc = read(tmp_path)
    for tag, step in [("chw", 1), ("hwc", 2)]:
        (im,) = acc.Images(tag)
        assert (im.step, im.width, im.height) == (step, 7, 5)
        np.testing.assert_array_equal(pixels(im.encoded_image_string), chw.transpose(1, 2, 0))
    (im,) = acc.Images("rgba")
    np.testing.assert_array_equal(pixels(im.encoded_image_string), rgba)
    (im,) = acc.Images("gray")
    expect = np.array([[0, 127, 255], [255, 0, 63]], np.uint8)
    np.testing.assert_array_equal(pixels(im.encoded_image_string), np.stack([expect] * 3, 2))
    (im,) = acc.Images("batch")
    assert (im.width, im.height) == (8 * 3, 2 * 2)
    grid = pixels(im.encoded_image_string)[..., 0]
    np.testing.assert_array_equal(grid[0:2, 3:6], batch[1, 0])
    np.testing.assert_array_equal(grid[2:4, 3:6], batch[9, 0])
    np.testing.assert_array_equal(grid[2:4, 6:], 0)  # the empty cells of the last row


def test_image_scaling_and_grids_match_pytorch():
    """Expected pixels as torch.utils.tensorboard.summary.image (2.13) gives them."""
    from ember.utils.tensorboard._convert import image_hwc

    f = np.array([[[0.0, 0.999], [0.5, 1.2]]], np.float32)  # CHW, one channel
    np.testing.assert_array_equal(image_hwc(f, "CHW", "add_image")[..., 0], [[0, 254], [127, 255]])
    ints = np.array([[0, 1], [2, -1]], np.int64)  # non-uint8 types are scaled too
    np.testing.assert_array_equal(image_hwc(ints, "HW", "add_image")[..., 0], [[0, 255], [255, 0]])
    nhwc = np.arange(9 * 1 * 2 * 3, dtype=np.uint8).reshape(9, 1, 2, 3)
    grid = image_hwc(nhwc, "NHWC", "add_images")
    assert grid.shape == (2, 16, 3)
    np.testing.assert_array_equal(grid[1, :2], nhwc[8, 0])
    np.testing.assert_array_equal(grid[0, 14:], nhwc[7, 0])


def test_device_tensors_are_copied_to_the_host(tmp_path, fake_cuda):
    x = ember.arange(12, dtype=ember.float32, device="cuda").reshape(3, 2, 2) / 12
    x.requires_grad_(True)
    assert x.device.type == "cuda"
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("s", x.sum(), 0)
        w.add_histogram("h", x, 0)
        w.add_image("i", x, 0)
    acc = read(tmp_path)
    assert acc.Scalars("s")[0].value == float(np.float32(66 / 12))
    assert acc.Histograms("h")[0].histogram_value.num == 12
    (im,) = acc.Images("i")
    host = (np.arange(12, dtype=np.float32).reshape(3, 2, 2) / 12 * 255).astype(np.uint8)
    np.testing.assert_array_equal(pixels(im.encoded_image_string), host.transpose(1, 2, 0))


# -- text, hparams, files -----------------------------------------------------------------------
def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "lr **0.1** — ünïcode", 7)
    (t,) = read(tmp_path).Tensors("notes/text_summary")
    assert t.step == 7
    assert t.tensor_proto.string_val == ["lr **0.1** — ünïcode".encode()]


def test_hparams(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2

    with SummaryWriter(tmp_path) as w:
        w.add_hparams(
            {"lr": ember.tensor(0.5), "opt": "sgd", "bn": True, "skip": None},
            {"hparam/acc": 0.97},
            hparam_domain_discrete={"opt": ["sgd", "adam"]},
            run_name="run0",
        )
    acc = read(tmp_path / "run0")
    assert [e.value for e in acc.Scalars("hparam/acc")] == [float(np.float32(0.97))]

    def content(tag):
        raw = acc.SummaryMetadata(tag).plugin_data.content
        return plugin_data_pb2.HParamsPluginData.FromString(raw)

    ssi = content("_hparams_/session_start_info").session_start_info.hparams
    assert (ssi["lr"].number_value, ssi["opt"].string_value, ssi["bn"].bool_value) == (
        0.5,
        "sgd",
        True,
    )
    assert "skip" not in ssi
    exp = content("_hparams_/experiment").experiment
    assert [h.name for h in exp.hparam_infos] == ["lr", "opt", "bn"]
    assert [v.string_value for v in exp.hparam_infos[1].domain_discrete.values] == ["sgd", "adam"]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/acc"]


def test_file_layout_purge_step_and_suffix(tmp_path):
    with SummaryWriter(tmp_path, purge_step=4, filename_suffix=".ember") as w:
        w.add_scalar("x", 1.0, 4)
    (name,) = os.listdir(tmp_path)
    assert name.startswith("events.out.tfevents.") and name.endswith(".ember")
    assert socket.gethostname() in name
    evs = events(tmp_path)  # the loader checks the record framing and checksums
    assert evs[0].file_version == "brain.Event:2"
    assert (evs[1].step, evs[1].file_version) == (4, "brain.Event:2")
    assert evs[2].session_log.status == evs[2].session_log.START
    assert evs[3].summary.value[0].tag == "x"


def test_flush_and_buffering(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=100, flush_secs=1000)
    (path,) = glob.glob(str(tmp_path / "events*"))
    size = os.path.getsize(path)
    for i in range(5):
        w.add_scalar("x", float(i), i)
    assert os.path.getsize(path) == size  # buffered
    w.flush()
    assert [e.value for e in read(tmp_path).Scalars("x")] == [0.0, 1.0, 2.0, 3.0, 4.0]
    w.close()
    w.close()  # twice is fine


def test_max_queue_writes(tmp_path):
    with SummaryWriter(tmp_path, max_queue=2, flush_secs=1000) as w:
        w.add_scalar("x", 1.0, 0)
        w.add_scalar("x", 2.0, 1)  # second pending event: written
        assert len(read(tmp_path).Scalars("x")) == 2


def test_add_after_close_starts_a_new_file(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalar("x", 1.0, 0)
    w.close()
    w.add_scalar("x", 2.0, 1)
    w.close()
    assert len(glob.glob(str(tmp_path / "events*"))) == 2
    assert [e.value for e in read(tmp_path).Scalars("x")] == [1.0, 2.0]


def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        logdir = w.get_logdir()
    assert os.path.dirname(logdir) == "runs"
    assert logdir.endswith("_" + socket.gethostname() + "_lr0.1")
    assert os.listdir(tmp_path / logdir)[0].startswith("events.out.tfevents.")


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, err, match",
    [
        (
            lambda w: w.add_scalar("x", ember.ones(2, 3)),
            ShapeError,
            r"add_scalar: scalar_value must hold exactly one element, got shape \(2, 3\)",
        ),
        (lambda w: w.add_scalar("x", "1.0"), DTypeError, "add_scalar: scalar_value must be a num"),
        (lambda w: w.add_scalar("x", None), DTypeError, "add_scalar: scalar_value must be an"),
        (lambda w: w.add_scalar(3, 1.0), DTypeError, "add_scalar: tag must be a string, got int"),
        (lambda w: w.add_scalar("x", 1.0, "one"), DTypeError, "add_scalar: global_step must be"),
        (
            lambda w: w.add_scalars("m", {"a": np.zeros(3)}),
            ShapeError,
            r"add_scalars: tag_scalar_dict\['a'\] must hold exactly one element, got shape \(3,\)",
        ),
        (lambda w: w.add_scalars("m", [1.0]), DTypeError, "add_scalars: tag_scalar_dict must be"),
        (
            lambda w: w.add_image("i", ember.rand(8, 8)),
            ShapeError,
            r"add_image: img_tensor of shape \(8, 8\) has 2 dims but dataformats='CHW' expects 3 "
            r"\(C, H, W\); pass dataformats='HW'",
        ),
        (
            lambda w: w.add_image("i", ember.rand(28, 28, 3)),
            ShapeError,
            r"add_image: img_tensor of shape \(28, 28, 3\) with dataformats='CHW' has 28 channels; "
            r"expected 1 \(grayscale\), 3 \(RGB\) or 4 \(RGBA\); for channels-last images pass "
            r"dataformats='HWC'",
        ),
        (
            lambda w: w.add_images("i", np.zeros((3, 8, 8))),
            ShapeError,
            r"add_images: img_tensor of shape \(3, 8, 8\) has 3 dims but dataformats='NCHW' "
            r"expects 4 \(N, C, H, W\); pass dataformats='CHW' or 'HWC'",
        ),
        (
            lambda w: w.add_image("i", np.zeros((3, 8, 8)), dataformats="CHX"),
            EmberError,
            "add_image: dataformats='CHX' is not an image layout",
        ),
        (
            lambda w: w.add_image("i", np.zeros((3, 0, 8))),
            ShapeError,
            r"add_image: img_tensor of shape \(3, 0, 8\) is empty",
        ),
        (
            lambda w: w.add_image("i", np.zeros((3, 2, 2), np.complex64)),
            DTypeError,
            "add_image: img_tensor must hold real numbers, got dtype complex64",
        ),
        (
            lambda w: w.add_histogram("h", ember.ones(0, 3)),
            ShapeError,
            r"add_histogram: values is empty \(shape \(0, 3\)\)",
        ),
        (
            lambda w: w.add_histogram("h", np.full(4, np.nan)),
            EmberError,
            r"add_histogram: none of the 4 values \(shape \(4,\)\) falls in a bucket",
        ),
        (
            lambda w: w.add_histogram("h", np.ones(4), bins="nope"),
            EmberError,
            "add_histogram: cannot bin values of shape",
        ),
        (lambda w: w.add_text("t", 3), DTypeError, "add_text: text_string must be a str, got int"),
        (
            lambda w: w.add_hparams({"lr": [0.1]}, {}),
            DTypeError,
            r"add_hparams: hparam_dict\['lr'\] must be a number, str, bool",
        ),
        (lambda w: w.add_hparams([], {}), DTypeError, "add_hparams: hparam_dict and metric_dict"),
    ],
)
def test_errors(tmp_path, call, err, match):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(err, match=match):
            call(w)


def test_missing_tensorboardx_is_named(monkeypatch, tmp_path):
    from ember.utils.tensorboard import _tbx

    monkeypatch.setattr(_tbx, "_MODULES", None)
    for name in [m for m in sys.modules if m == "tensorboardX" or m.startswith("tensorboardX.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(EmberError, match="pip install tensorboardX") as info:
        SummaryWriter(tmp_path)
    assert isinstance(info.value, ImportError)  # `except ImportError` fallbacks still work


def test_imports_stay_lazy(tmp_path):
    """``import ember`` loads neither tensorboardX nor matplotlib, and writing events does not
    drag in torch (tensorboardX would import it for a type hint)."""
    code = f"""
import sys, importlib.util
import ember, ember.utils.tensorboard, ember.utils.plot
heavy = [m for m in ("tensorboardX", "matplotlib", "PIL", "torch") if m in sys.modules]
assert not heavy, heavy
w = ember.utils.tensorboard.SummaryWriter({str(tmp_path)!r})
w.add_scalar("x", 1.0, 0); w.close()
assert "tensorboardX" in sys.modules and "torch" not in sys.modules
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
