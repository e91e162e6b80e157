"""Transforms against hand-computed values and against torchvision's semantics written out in
torch (torchvision itself is not installed)."""

import numpy as np
import pytest
import torch

import ember
from ember._errors import DTypeError, ShapeError
from ember.data import DataLoader, TensorDataset
from ember.data.transforms import (
    CenterCrop,
    Compose,
    Lambda,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    Resize,
    ToTensor,
    TransformError,
)

# -- torchvision's code, written out ------------------------------------------------------------


def tv_to_tensor(pic: np.ndarray) -> torch.Tensor:
    if pic.ndim == 2:
        pic = pic[:, :, None]
    img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
    if img.dtype == torch.uint8:
        return img.to(dtype=torch.get_default_dtype()).div(255)
    return img


def tv_normalize(t: torch.Tensor, mean, std) -> torch.Tensor:
    t = t.clone()
    mean = torch.as_tensor(mean, dtype=t.dtype)
    std = torch.as_tensor(std, dtype=t.dtype)
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return t.sub_(mean).div_(std)


def tv_pad(t: torch.Tensor, padding, fill, mode) -> torch.Tensor:
    """torchvision.transforms.functional_tensor.pad for (left, top, right, bottom)."""
    left, top, right, bottom = padding
    p = [left, right, top, bottom]
    if mode == "symmetric":  # torchvision's own implementation, by index
        h, w = t.shape[-2:]
        rows = torch.tensor([*range(top - 1, -1, -1), *range(h), *range(h - 1, h - 1 - bottom, -1)])
        cols = torch.tensor([*range(left - 1, -1, -1), *range(w), *range(w - 1, w - 1 - right, -1)])
        return t[..., rows[:, None], cols[None, :]]
    mode = {"edge": "replicate"}.get(mode, mode)
    if mode == "constant":
        return torch.nn.functional.pad(t, p, mode="constant", value=fill)
    return torch.nn.functional.pad(t[None], p, mode=mode)[0]


def uint8_image(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


# -- ToTensor -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 7), (5, 7, 3), (4, 4, 1)])
def test_to_tensor_uint8_matches_torchvision(shape):
    pic = uint8_image(shape)
    out = ToTensor()(pic)
    ref = tv_to_tensor(pic)
    assert out.dtype == ember.float32 and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())  # bit for bit
    assert out.numpy().flags.c_contiguous


def test_to_tensor_by_hand():
    out = ToTensor()(np.array([[[0, 255, 51]], [[102, 0, 0]]], dtype=np.uint8))  # H=2, W=1, C=3
    assert out.shape == (3, 2, 1)
    want = np.array([[0, 102], [255, 0], [51, 0]], np.float32) / np.float32(255)
    np.testing.assert_array_equal(out.numpy()[:, :, 0], want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_to_tensor_keeps_other_dtypes(dtype):
    pic = np.arange(12, dtype=dtype).reshape(2, 3, 2) / (2 if dtype != np.int32 else 1)
    pic = pic.astype(dtype)
    out = ToTensor()(pic)
    ref = tv_to_tensor(pic)
    assert out.numpy().dtype == dtype and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    out.numpy()[0, 0, 0] = 99  # a copy: the dataset's array is untouched
    assert pic[0, 0, 0] == 0
    grey = np.ones((2, 2), np.float32)
    t = ToTensor()(grey)
    t.numpy()[:] = 5
    assert grey.max() == 1


def test_to_tensor_non_contiguous_and_big_endian():
    pic = uint8_image((6, 8, 3))[::2, ::-2]
    np.testing.assert_array_equal(ToTensor()(pic).numpy(), tv_to_tensor(pic.copy()).numpy())
    be = np.arange(4, dtype=">f4").reshape(2, 2)
    out = ToTensor()(be)
    assert out.dtype == ember.float32 and out.tolist() == [[[0.0, 1.0], [2.0, 3.0]]]


def test_to_tensor_pil():
    from PIL import Image

    rgb = uint8_image((3, 4, 3))
    np.testing.assert_array_equal(
        ToTensor()(Image.fromarray(rgb)).numpy(), tv_to_tensor(rgb).numpy()
    )
    grey = uint8_image((3, 4))
    assert ToTensor()(Image.fromarray(grey)).shape == (1, 3, 4)
    assert ToTensor()(Image.new("1", (2, 1), 1)).tolist() == [[[1.0, 1.0]]]
    assert ToTensor()(Image.new("F", (1, 1), 2.5)).tolist() == [[[2.5]]]
    assert ToTensor()(Image.new("I", (1, 1), 300)).dtype == ember.int32


def test_to_tensor_errors():
    with pytest.raises(
        DTypeError, match=r"ToTensor: pic should be a Pillow image or ndarray, got Tensor"
    ):
        ToTensor()(ember.zeros(2, 2))
    with pytest.raises(DTypeError, match=r"got list"):
        ToTensor()([[1]])
    with pytest.raises(
        ShapeError, match=r"expected an HxW or HxWxC image, got an array of shape \(1, 2, 2, 2\)"
    ):
        ToTensor()(np.zeros((1, 2, 2, 2), np.uint8))
    assert repr(ToTensor()) == "ToTensor()"


# -- Normalize ----------------------------------------------------------------------------------


def test_normalize_by_hand():
    x = ember.tensor([[[1.0, 2.0]], [[3.0, 5.0]]])
    out = Normalize((1.0, 1.0), (1.0, 2.0))(x)
    assert out.tolist() == [[[0.0, 1.0]], [[1.0, 2.0]]]
    assert x.tolist() == [[[1.0, 2.0]], [[3.0, 5.0]]]  # not in place
    assert Normalize([0.5], [0.5])(x).tolist() == [[[1.0, 3.0]], [[5.0, 9.0]]]  # broadcast


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalize_matches_torchvision(shape, dtype):
    arr = np.random.default_rng(1).random(shape).astype(dtype)
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    out = Normalize(mean, std)(ember.from_numpy(arr.copy()))
    ref = tv_normalize(torch.from_numpy(arr), mean, std)
    assert out.numpy().dtype == dtype
    np.testing.assert_array_equal(out.numpy(), ref.numpy())  # bit for bit


def test_normalize_inplace():
    x = ember.ones(1, 2, 2)
    version = x._version[0]
    out = Normalize((0.5,), (0.25,), inplace=True)(x)
    assert out is x and x.tolist() == [[[2.0, 2.0], [2.0, 2.0]]] and x._version[0] > version


def test_normalize_grad():
    x = ember.ones(2, 1, 1, requires_grad=True)
    out = Normalize((0.0, 1.0), (2.0, 4.0))(x)
    out.sum().backward()
    assert out.tolist() == [[[0.5]], [[0.0]]] and x.grad.tolist() == [[[0.5]], [[0.25]]]


def test_normalize_errors_and_repr():
    with pytest.raises(DTypeError, match=r"input tensor should be a float tensor, got ember.uint8"):
        Normalize((0,), (1,))(ember.zeros(1, 2, 2, dtype=ember.uint8))
    with pytest.raises(
        ShapeError,
        match=r"expected a tensor image of size \(..., C, H, W\), got a tensor of shape \(2, 2\)",
    ):
        Normalize((0,), (1,))(ember.zeros(2, 2))
    with pytest.raises(TransformError, match=r"std evaluated to zero after conversion to float32"):
        Normalize((0,), (0,))(ember.zeros(1, 2, 2))
    with pytest.raises(ShapeError, match=r"2 values of mean/std for an image with 3 channels"):
        Normalize((0, 0), (1, 1))(ember.zeros(3, 2, 2))
    with pytest.raises(DTypeError, match=r"Normalize: expected a tensor, got ndarray"):
        Normalize((0,), (1,))(np.zeros((1, 2, 2), np.float32))
    assert repr(Normalize([0.5], [0.25])) == "Normalize(mean=[0.5], std=[0.25])"


# -- RandomCrop ---------------------------------------------------------------------------------


def _expected_corner(seed, h, w, th, tw):
    g = np.random.Generator(np.random.PCG64(seed))
    return int(g.integers(0, h - th + 1)), int(g.integers(0, w - tw + 1))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("padding", [2, (1,), (1, 2), (1, 2, 0, 3)])
def test_random_crop_matches_torchvision(mode, padding):
    img = uint8_image((3, 5, 6)).astype(np.float32)
    if isinstance(padding, int):
        pad = (padding,) * 4
    elif len(padding) == 1:
        pad = padding * 4
    elif len(padding) == 2:
        pad = padding * 2  # (left/right, top/bottom) -> (left, top, right, bottom)
    else:
        pad = padding
    padded = tv_pad(torch.from_numpy(img), pad, 7.0, mode)
    h, w = padded.shape[-2:]
    for seed in range(3):
        ember.manual_seed(seed)
        out = RandomCrop((4, 5), padding=padding, fill=7, padding_mode=mode)(ember.from_numpy(img))
        i, j = _expected_corner(seed, h, w, 4, 5)
        np.testing.assert_array_equal(out.numpy(), padded[:, i : i + 4, j : j + 5].numpy())


@pytest.mark.parametrize("layout", ["hw", "hwc", "chw"])
def test_random_crop_constant_against_pad_then_crop(layout):
    """The one-step constant pad-and-crop equals np.pad then crop, crops inside the padding
    included."""
    rng = np.random.default_rng(5)
    for k in range(40):
        h, w = rng.integers(1, 6, 2)
        shape = {"hw": (h, w), "hwc": (h, w, 2), "chw": (2, h, w)}[layout]
        img = rng.integers(1, 200, shape).astype(np.uint8)
        pad = tuple(int(v) for v in rng.integers(0, 7, 4))
        th, tw = (int(v) for v in rng.integers(1, 9, 2))
        needed = bool(rng.integers(0, 2))
        l, t, r, b = pad
        if needed:
            dx = max(tw - (w + l + r), 0)
            dy = max(th - (h + t + b), 0)
            l, r, t, b = l + dx, r + dx, t + dy, b + dy
        H, W = h + t + b, w + l + r
        if H < th or W < tw:
            continue
        widths = [(t, b), (l, r)]
        if layout == "chw":
            ref = np.pad(img, [(0, 0)] + widths, constant_values=9)
        else:
            ref = np.pad(img, widths + [(0, 0)] * (img.ndim - 2), constant_values=9)
        ember.manual_seed(k)
        x = ember.from_numpy(img) if layout == "chw" else img
        out = RandomCrop((th, tw), padding=pad, pad_if_needed=needed, fill=9)(x)
        out = out.numpy() if layout == "chw" else out
        if (H, W) == (th, tw):
            i, j = 0, 0
        else:
            i, j = _expected_corner(k, H, W, th, tw)
        want = ref[..., i : i + th, j : j + tw] if layout == "chw" else ref[i : i + th, j : j + tw]
        np.testing.assert_array_equal(out, want)


def test_random_crop_by_hand():
    x = np.arange(9).reshape(3, 3)
    ember.manual_seed(0)
    out = RandomCrop(2)(x)
    i, j = _expected_corner(0, 3, 3, 2, 2)
    np.testing.assert_array_equal(out, x[i : i + 2, j : j + 2])
    # padding 1 around a 1x1 image, cropped to 3x3: the whole padded image, no draws
    state = ember.get_rng_state()
    assert RandomCrop(3, padding=1, fill=9)(np.array([[5]])).tolist() == [
        [9, 9, 9],
        [9, 5, 9],
        [9, 9, 9],
    ]
    assert ember.equal(ember.get_rng_state(), state)


def test_random_crop_layouts_agree():
    hwc = uint8_image((6, 7, 3))
    chw = ember.from_numpy(np.ascontiguousarray(hwc.transpose(2, 0, 1)))
    for seed in range(4):
        ember.manual_seed(seed)
        a = RandomCrop(4, padding=2, padding_mode="reflect")(hwc)
        ember.manual_seed(seed)
        b = RandomCrop(4, padding=2, padding_mode="reflect")(chw)
        ember.manual_seed(seed)
        c = RandomCrop(4, padding=2, padding_mode="reflect")(hwc[:, :, 0])
        assert a.shape == (4, 4, 3) and a.dtype == np.uint8 and b.shape == (3, 4, 4)
        np.testing.assert_array_equal(a.transpose(2, 0, 1), b.numpy())
        np.testing.assert_array_equal(a[:, :, 0], c)


def test_random_crop_pad_if_needed():
    # torchvision pads the missing amount on both sides
    x = np.ones((2, 3), np.uint8)
    ember.manual_seed(0)
    out = RandomCrop((4, 3), pad_if_needed=True)(x)
    assert out.shape == (4, 3) and out.sum() == 6
    big = RandomCrop((2, 5), pad_if_needed=True, fill=0)
    ember.manual_seed(1)
    out = big(x)
    i, j = _expected_corner(1, 2, 3 + 2 * 2, 2, 5)
    ref = np.pad(x, ((0, 0), (2, 2)))
    np.testing.assert_array_equal(out, ref[i : i + 2, j : j + 5])


def test_random_crop_fill_per_channel_and_pil():
    from PIL import Image

    rgb = np.zeros((1, 1, 3), np.uint8)
    out = RandomCrop(3, padding=1, fill=(1, 2, 3))(rgb)
    assert out[0, 0].tolist() == [1, 2, 3] and out[1, 1].tolist() == [0, 0, 0]
    t = RandomCrop(3, padding=1, fill=(1, 2, 3))(ember.zeros(3, 1, 1))
    assert t[:, 0, 0].tolist() == [1, 2, 3] and t[:, 1, 1].tolist() == [0, 0, 0]
    img = Image.fromarray(uint8_image((5, 6, 3)))
    ember.manual_seed(3)
    out = RandomCrop(4)(img)
    i, j = _expected_corner(3, 5, 6, 4, 4)
    assert isinstance(out, Image.Image) and out.size == (4, 4)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(img)[i : i + 4, j : j + 4])


def test_random_crop_grad():
    x = ember.ones(1, 2, 2, requires_grad=True)
    out = RandomCrop(2, padding=1)(x)
    out.sum().backward()
    assert out.shape == (1, 2, 2) and x.grad is not None and float(x.grad.sum()) == float(out.sum())


def test_random_crop_errors_and_repr():
    with pytest.raises(
        ShapeError,
        match=r"required crop size \(4, 4\) is larger than the input image size \(3, 3\)",
    ):
        RandomCrop(4)(np.zeros((3, 3)))
    with pytest.raises(
        TransformError,
        match=r"padding_mode must be one of constant, edge, reflect, symmetric; got 'wrap'",
    ):
        RandomCrop(2, padding_mode="wrap")
    with pytest.raises(
        TransformError, match=r"padding must be an int or a sequence of 1, 2 or 4 ints"
    ):
        RandomCrop(2, padding=(1, 2, 3))
    with pytest.raises(TransformError, match=r"size must be an int or a sequence of 1 or 2 ints"):
        RandomCrop((1, 2, 3))
    with pytest.raises(ShapeError, match=r"expected an HxW or HxWxC image"):
        RandomCrop(1)(np.zeros(3))
    with pytest.raises(DTypeError, match=r"expected a tensor, ndarray or Pillow image, got list"):
        RandomCrop(1)([[1]])
    assert repr(RandomCrop(32, padding=4)) == "RandomCrop(size=(32, 32), padding=4)"
    assert repr(RandomCrop([3])) == "RandomCrop(size=(3, 3), padding=None)"


# -- RandomHorizontalFlip -----------------------------------------------------------------------


def test_flip_draws_like_torchvision():
    x = np.arange(6).reshape(2, 3)
    for seed in range(6):
        ember.manual_seed(seed)
        out = RandomHorizontalFlip(0.5)(x)
        flipped = np.random.Generator(np.random.PCG64(seed)).random() < 0.5
        np.testing.assert_array_equal(out, x[:, ::-1] if flipped else x)


def test_flip_layouts():
    hwc = uint8_image((2, 3, 3))
    assert RandomHorizontalFlip(1.0)(hwc).tolist() == hwc[:, ::-1].tolist()
    assert RandomHorizontalFlip(0.0)(hwc) is hwc
    chw = ember.from_numpy(np.ascontiguousarray(hwc.transpose(2, 0, 1)))
    out = RandomHorizontalFlip(1.0)(chw)
    np.testing.assert_array_equal(out.numpy(), torch.from_numpy(chw.numpy()).flip(-1).numpy())
    assert out.numpy().flags.c_contiguous and not np.shares_memory(out.numpy(), chw.numpy())
    batch = ember.arange(8.0).reshape(2, 1, 2, 2)
    assert RandomHorizontalFlip(1.0)(batch).tolist() == [
        [[[1.0, 0.0], [3.0, 2.0]]],
        [[[5.0, 4.0], [7.0, 6.0]]],
    ]


def test_flip_pil_grad_errors_repr():
    from PIL import Image

    img = Image.fromarray(np.array([[1, 2]], np.uint8))
    assert np.asarray(RandomHorizontalFlip(1)(img)).tolist() == [[2, 1]]
    x = ember.tensor([[[1.0, 2.0]]], requires_grad=True)
    (RandomHorizontalFlip(1)(x) * ember.tensor([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [[[10.0, 1.0]]]
    with pytest.raises(TransformError, match=r"p must be in \[0, 1\], got 2"):
        RandomHorizontalFlip(2)
    assert repr(RandomHorizontalFlip()) == "RandomHorizontalFlip(p=0.5)"


# -- Compose, Lambda, seeding -------------------------------------------------------------------


def test_compose_and_lambda():
    t = Compose([ToTensor(), Lambda(lambda x: x * 2), Normalize((1.0,), (2.0,))])
    assert t(np.array([[255, 0]], np.uint8)).tolist() == [[[0.5, -0.5]]]
    assert (
        repr(t)
        == "Compose(\n    ToTensor()\n    Lambda()\n    Normalize(mean=(1.0,), std=(2.0,))\n)"
    )
    with pytest.raises(DTypeError, match=r"Lambda: argument should be callable, got int"):
        Lambda(3)
    with pytest.raises(DTypeError, match=r"Compose: every transform must be callable"):
        Compose([ToTensor(), 3])


def _augment():
    return Compose([RandomCrop(6, padding=2), RandomHorizontalFlip(), ToTensor()])


class _Images(ember.data.Dataset):
    def __init__(self, n):
        self.images = uint8_image((n, 6, 6))
        self.transform = _augment()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.transform(self.images[i]), i


@pytest.mark.parametrize("workers", [0, 2])
def test_seeding_reproducible(workers):
    def run(seed):
        ember.manual_seed(seed)
        loader = DataLoader(_Images(12), batch_size=4, num_workers=workers)
        return np.concatenate([x.numpy() for x, _ in loader])

    a, b, c = run(0), run(0), run(1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # the samples did not all get the same augmentation
    ref = np.stack([ToTensor()(im).numpy() for im in _Images(12).images])
    assert not all((a[k] == ref[k]).all() for k in range(12))


def test_default_collate_of_transformed_tensors():
    ds = TensorDataset(ember.zeros(4, 1, 3, 3))
    x = [RandomCrop(2)(ds[i][0]) for i in range(4)]
    assert ember.stack(x).shape == (4, 1, 2, 2)


# -- Resize -------------------------------------------------------------------------------------


def tv_resize_tensor(t: torch.Tensor, size, mode, antialias) -> torch.Tensor:
    """torchvision's tensor resize (float path): interpolate, then round back to integers."""
    x = t if t.dtype in (torch.float32, torch.float64) else t.float()
    nearest = mode.startswith("nearest")
    out = torch.nn.functional.interpolate(
        x.reshape(-1, *x.shape[-3:]) if x.ndim >= 3 else x[None, None],
        size=size,
        mode=mode,
        align_corners=None if nearest else False,
        antialias=antialias and not nearest,
    ).reshape(*t.shape[:-2], *size)
    if not t.dtype.is_floating_point:
        if mode == "bicubic":
            out = out.clamp(0, 255)
        out = out.round()
    return out.to(t.dtype)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_tensor_matches_torch(mode, antialias):
    rng = np.random.default_rng(2)
    for H, W, oh, ow in [(7, 9, 3, 4), (5, 5, 12, 7), (16, 10, 5, 23), (1, 8, 3, 2), (9, 3, 1, 1)]:
        x = rng.random((2, H, W))
        for dtype in (np.float32, np.float64):
            a = x.astype(dtype)
            out = Resize((oh, ow), mode, antialias=antialias)(ember.from_numpy(a))
            ref = tv_resize_tensor(torch.from_numpy(a), (oh, ow), mode, antialias)
            assert out.numpy().dtype == dtype and out.shape == (2, oh, ow)
            tol = 2e-6 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=0, atol=tol)


def test_resize_tensor_big_downscale_batch_and_dtypes():
    rng = np.random.default_rng(3)
    x = rng.random((2, 3, 60, 45)).astype(np.float32)
    out = Resize(16)(ember.from_numpy(x))  # smaller edge 45 -> 16, 60 -> int(16 * 60 / 45) = 21
    ref = tv_resize_tensor(torch.from_numpy(x), (21, 16), "bilinear", True)
    assert out.shape == (2, 3, 21, 16)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=5e-6)
    u8 = rng.integers(0, 256, (3, 13, 17), dtype=np.uint8)
    for mode in ("bilinear", "bicubic"):
        got = Resize((6, 20), mode)(ember.from_numpy(u8))
        want = tv_resize_tensor(torch.from_numpy(u8), (6, 20), mode, True)
        assert got.dtype == ember.uint8
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if mode == "bilinear":  # torchvision's CPU uint8 fast path: torch's own kernel, off by 1
            native = torch.nn.functional.interpolate(
                torch.from_numpy(u8)[None], size=(6, 20), mode=mode, antialias=True
            )[0]
            assert np.abs(got.numpy().astype(int) - native.numpy()).max() <= 1
    half = Resize((4, 4))(ember.from_numpy(x[0, :1].astype(np.float16)))
    assert half.dtype == ember.float16
    np.testing.assert_allclose(
        half.numpy(),
        tv_resize_tensor(torch.from_numpy(x[0, :1]), (4, 4), "bilinear", True),
        atol=1e-3,
    )
    grey = Resize((2, 3))(ember.from_numpy(x[0, 0]))  # HxW tensors too
    assert grey.shape == (2, 3)


def test_resize_by_hand():
    x = ember.arange(16.0).reshape(1, 4, 4)
    # plain bilinear halving averages 2x2 blocks
    assert Resize(2, antialias=False)(x).tolist() == [[[2.5, 4.5], [10.5, 12.5]]]
    # antialiased halving: support 2 input pixels, weights 3/7, 3/7, 1/7 around the centre
    w = np.array([3, 3, 1, 0]) / 7
    m = np.stack([w, w[::-1]])
    np.testing.assert_allclose(
        Resize(2)(x).numpy()[0], m @ np.arange(16.0).reshape(4, 4) @ m.T, rtol=1e-6
    )
    # doubling a 1-pixel-wide row: bilinear repeats it, nearest picks the same pixel
    row = ember.tensor([[[1.0, 3.0]]])
    assert Resize((1, 4), antialias=False)(row).tolist() == [[[1.0, 1.5, 2.5, 3.0]]]
    assert Resize((1, 4), "nearest")(row).tolist() == [[[1.0, 1.0, 3.0, 3.0]]]


@pytest.mark.parametrize(
    "hw, size, max_size, want",
    [
        ((4, 6), 2, None, (2, 3)),
        ((6, 4), [2], None, (3, 2)),
        ((5, 7), 3, None, (3, 4)),  # int(3 * 7 / 5) = 4
        ((7, 5), 3, None, (4, 3)),
        ((5, 5), 3, None, (3, 3)),
        ((10, 40), 5, 12, (3, 12)),  # long edge capped at 12: short int(12 * 5 / 20) = 3
        ((10, 40), 5, 30, (5, 20)),
        ((10, 40), None, 8, (2, 8)),
        ((4, 6), (3, 5), None, (3, 5)),
    ],
)
def test_resize_output_size(hw, size, max_size, want):
    out = Resize(size, max_size=max_size)(np.zeros(hw, np.uint8))
    assert out.shape == want
    assert Resize(size, max_size=max_size)(ember.zeros(1, *hw)).shape == (1, *want)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "box", "hamming", "lanczos"])
def test_resize_array_and_pil_match_pillow(mode):
    from PIL import Image

    filt = {
        "nearest": Image.NEAREST,
        "bilinear": Image.BILINEAR,
        "bicubic": Image.BICUBIC,
        "box": Image.BOX,
        "hamming": Image.HAMMING,
        "lanczos": Image.LANCZOS,
    }[mode]
    rgb = uint8_image((13, 17, 3))
    want = np.asarray(Image.fromarray(rgb).resize((20, 6), filt))
    got = Resize((6, 20), mode)(rgb)
    assert got.dtype == np.uint8 and got.shape == (6, 20, 3)
    np.testing.assert_array_equal(got, want)  # channel by channel as L == Pillow's RGB
    pil = Resize((6, 20), mode)(Image.fromarray(rgb))
    assert isinstance(pil, Image.Image) and pil.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(pil), want)
    grey = rgb[:, :, 0]
    np.testing.assert_array_equal(
        Resize((6, 20), mode)(grey), np.asarray(Image.fromarray(grey).resize((20, 6), filt))
    )
    # float arrays: mode F per channel, dtype kept
    f = np.random.default_rng(4).random((13, 17, 2))
    got = Resize((6, 20), mode)(f)
    assert got.dtype == np.float64 and got.shape == (6, 20, 2)
    for c in range(2):
        ref = np.asarray(Image.fromarray(f[:, :, c].astype(np.float32)).resize((20, 6), filt))
        np.testing.assert_array_equal(got[:, :, c], ref)


def test_resize_integer_arrays_and_identity():
    from PIL import Image

    a = np.array([[0, 1000], [3000, -7]], np.int16)
    got = Resize((3, 3))(a)
    ref = np.asarray(Image.fromarray(a.astype(np.float32)).resize((3, 3), Image.BILINEAR))
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, np.round(ref).astype(np.int16))
    img = uint8_image((4, 6))
    assert Resize(4)(img) is img  # already the right size: returned as is (torchvision)
    t = ember.zeros(1, 4, 6)
    assert Resize((4, 6))(t) is t
    pil = Image.fromarray(img)
    assert Resize(4)(pil) is pil


def test_resize_grad_matches_torch():
    x = np.random.default_rng(5).random((2, 6, 9))
    w = np.random.default_rng(6).random((2, 4, 5))
    for mode, aa in [("bilinear", True), ("bicubic", False), ("nearest", False)]:
        ex = ember.tensor(x, requires_grad=True)
        (Resize((4, 5), mode, antialias=aa)(ex) * ember.tensor(w)).sum().backward()
        tx = torch.tensor(x, requires_grad=True)
        (tv_resize_tensor(tx, (4, 5), mode, aa) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    x32 = ember.ones(1, 4, 4, requires_grad=True)
    out = Resize(2)(x32)
    assert out.dtype == ember.float32 and out.requires_grad
    np.testing.assert_allclose(out.detach().numpy(), 1.0, rtol=1e-6)


def test_resize_in_a_pipeline_batches_different_sizes():
    images = [uint8_image(s, seed=k) for k, s in enumerate([(8, 12, 3), (10, 10, 3), (5, 9, 3)])]
    t = Compose([Resize(6), CenterCrop(6), ToTensor()])
    batch = ember.stack([t(im) for im in images])
    assert batch.shape == (3, 3, 6, 6) and batch.dtype == ember.float32


def test_resize_errors_and_repr():
    with pytest.raises(TransformError, match=r"size must be an int or a sequence of 1 or 2 ints"):
        Resize((1, 2, 3))
    with pytest.raises(TransformError, match=r"size must be positive, got 0"):
        Resize(0)
    with pytest.raises(TransformError, match=r"size can only be None if max_size is also set"):
        Resize(None)
    with pytest.raises(TransformError, match=r"max_size should only be passed if size specifies"):
        Resize((2, 3), max_size=5)
    with pytest.raises(TransformError, match=r"max_size = 2 must be strictly greater"):
        Resize(3, max_size=2)
    with pytest.raises(TransformError, match=r"interpolation must be one of nearest, .*'cubic'"):
        Resize(3, interpolation="cubic")
    with pytest.raises(TransformError, match=r"'lanczos' works on Pillow images and arrays only"):
        Resize(3, interpolation="lanczos")(ember.zeros(1, 4, 4))
    with pytest.raises(ShapeError, match=r"Resize: expected an HxW or HxWxC image"):
        Resize(3)(np.zeros(4))
    with pytest.raises(ShapeError, match=r"expected a tensor image of size \(..., H, W\)"):
        Resize(3)(ember.zeros(4))
    with pytest.raises(DTypeError, match=r"Resize: expected a tensor, ndarray or Pillow image"):
        Resize(3)([[1]])
    with pytest.raises(DTypeError, match=r"Resize: cannot resize an array of dtype bool"):
        Resize(3)(np.zeros((2, 2), bool))
    with pytest.raises(DTypeError, match=r"Resize: cannot resize a tensor of dtype ember.bool"):
        Resize(3)(ember.zeros(1, 2, 2, dtype=ember.bool))
    with pytest.raises(
        ShapeError,
        match=r"image of size \(1, 1000\) to size=100 \(max_size=101\) gives an empty image "
        r"\(0, 101\)",
    ):
        Resize(100, max_size=101)(np.zeros((1, 1000), np.uint8))
    with pytest.raises(ShapeError, match=r"cannot resize an empty image of size \(0, 3\)"):
        Resize(2)(np.zeros((0, 3), np.uint8))
    assert (
        repr(Resize(32)) == "Resize(size=32, interpolation=bilinear, max_size=None, antialias=True)"
    )
    assert (
        repr(Resize([8, 9], "nearest", antialias=False))
        == "Resize(size=[8, 9], interpolation=nearest, max_size=None, antialias=False)"
    )


# -- CenterCrop ---------------------------------------------------------------------------------


def tv_center_crop(t: torch.Tensor, size) -> torch.Tensor:
    """torchvision.transforms.functional.center_crop, written out."""
    th, tw = size
    h, w = t.shape[-2:]
    if tw > w or th > h:
        ltrb = [
            (tw - w) // 2 if tw > w else 0,
            (th - h) // 2 if th > h else 0,
            (tw - w + 1) // 2 if tw > w else 0,
            (th - h + 1) // 2 if th > h else 0,
        ]
        t = tv_pad(t, ltrb, 0, "constant")
        h, w = t.shape[-2:]
        if (th, tw) == (h, w):
            return t
    top = int(round((h - th) / 2.0))
    left = int(round((w - tw) / 2.0))
    return t[..., top : top + th, left : left + tw]


def test_center_crop_matches_torchvision():
    from PIL import Image

    rng = np.random.default_rng(7)
    for _ in range(60):
        h, w, th, tw = (int(v) for v in rng.integers(1, 9, 4))
        chw = rng.integers(1, 256, (3, h, w)).astype(np.uint8)
        ref = tv_center_crop(torch.from_numpy(chw), (th, tw)).numpy()
        out = CenterCrop((th, tw))(ember.from_numpy(chw))
        np.testing.assert_array_equal(out.numpy(), ref)
        assert not np.shares_memory(out.numpy(), chw)
        hwc = np.ascontiguousarray(chw.transpose(1, 2, 0))
        np.testing.assert_array_equal(CenterCrop((th, tw))(hwc), ref.transpose(1, 2, 0))
        np.testing.assert_array_equal(CenterCrop((th, tw))(hwc[:, :, 0]), ref[0])
        pil = CenterCrop((th, tw))(Image.fromarray(hwc))
        assert isinstance(pil, Image.Image) and pil.size == (tw, th)
        np.testing.assert_array_equal(np.asarray(pil), ref.transpose(1, 2, 0))


def test_center_crop_by_hand():
    x = np.arange(7)[None, :]
    assert CenterCrop((1, 2))(x).tolist() == [[2, 3]]  # round(2.5) = 2: half to even
    assert CenterCrop((1, 2))(x[:, :5]).tolist() == [[2, 3]]  # round(1.5) = 2
    assert CenterCrop((1, 3))(x[:, :4]).tolist() == [[0, 1, 2]]  # round(0.5) = 0
    # larger than the image: (4 - 1) // 2 = 1 zero above, 2 below
    assert CenterCrop((4, 1))(np.array([[5]])).tolist() == [[0], [5], [0], [0]]
    # one side larger, the other cropped
    assert CenterCrop((3, 1))(np.array([[1, 2, 3]])).tolist() == [[0], [2], [0]]
    assert CenterCrop([2])(np.arange(16).reshape(4, 4)).tolist() == [[5, 6], [9, 10]]
    batch = ember.arange(32.0).reshape(2, 1, 4, 4)
    assert CenterCrop(2)(batch).tolist() == [
        [[[5.0, 6.0], [9.0, 10.0]]],
        [[[21.0, 22.0], [25.0, 26.0]]],
    ]


def test_center_crop_pil_palette_and_grad():
    from PIL import Image

    pal = Image.fromarray(np.array([[1, 2], [3, 1]], np.uint8), mode="L").convert("P")
    out = CenterCrop(4)(pal)
    assert out.mode == "P" and out.getpalette() == pal.getpalette()
    assert np.asarray(out)[1:3, 1:3].tolist() == np.asarray(pal).tolist()
    x = ember.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)
    out = CenterCrop((3, 1))(x)
    assert out.tolist() == [[[0.0], [2.0], [0.0]]]
    (out * 5).sum().backward()
    assert x.grad.tolist() == [[[0.0, 5.0, 0.0]]]


def test_center_crop_errors_and_repr():
    with pytest.raises(TransformError, match=r"CenterCrop: size must be an int or a sequence"):
        CenterCrop((1, 2, 3))
    with pytest.raises(TransformError, match=r"CenterCrop: size must be positive"):
        CenterCrop(0)
    with pytest.raises(ShapeError, match=r"CenterCrop: expected an HxW or HxWxC image"):
        CenterCrop(1)(np.zeros(3))
    with pytest.raises(ShapeError, match=r"CenterCrop: expected a tensor image"):
        CenterCrop(1)(ember.zeros(3, requires_grad=True))
    with pytest.raises(DTypeError, match=r"CenterCrop: expected a tensor, ndarray or Pillow"):
        CenterCrop(1)([[1]])
    assert repr(CenterCrop(224)) == "CenterCrop(size=(224, 224))"
    assert repr(CenterCrop((3, 4))) == "CenterCrop(size=(3, 4))"


def test_image_folder_info_size_with_resize(tmp_path):
    """ImageFolder's info gives the most common raw size; Resize + CenterCrop make the images of
    different sizes batchable."""
    from PIL import Image

    from ember.data.datasets import ImageFolder

    sizes = {"a": [(6, 4), (6, 4), (5, 9)], "b": [(6, 4), (3, 3)]}  # Pillow (w, h)
    for cls, whs in sizes.items():
        (tmp_path / cls).mkdir()
        for k, wh in enumerate(whs):
            Image.new("RGB", wh, (k * 40, 10, 200)).save(tmp_path / cls / f"{k}.png")
    t = Compose([Resize(4), CenterCrop(4), ToTensor()])
    ds = ImageFolder(tmp_path, transform=t)
    assert ds.info.image_size == (4, 6)  # (h, w) of the three 6x4 images
    x, y = next(iter(DataLoader(ds, batch_size=5)))
    assert x.shape == (5, 3, 4, 4) and y.tolist() == [0, 0, 0, 1, 1]
