"""default_collate / default_convert against torch.utils.data on the same samples."""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import ember
from ember.data import default_collate, default_convert
from ember.data.collate import collate, default_collate_fn_map

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = namedtuple("Point", ["x", "y"])


def to_plain(obj):
    """Tensors of either library -> (dtype name, nested list); containers recursively."""
    if isinstance(obj, ember.Tensor):
        return (str(obj.dtype).split(".")[-1], obj.tolist())
    if isinstance(obj, torch.Tensor):
        return (str(obj.dtype).split(".")[-1], obj.tolist())
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: to_plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [to_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [to_plain(v) for v in obj])
    return obj


def ember_to_torch(sample):
    """The same sample with ember tensors turned into torch tensors."""
    if isinstance(sample, ember.Tensor):
        return torch.from_numpy(sample.numpy().copy())
    if isinstance(sample, dict):
        return type(sample)((k, ember_to_torch(v)) for k, v in sample.items())
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(ember_to_torch(v) for v in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(ember_to_torch(v) for v in sample)
    return sample


BATCHES = {
    "ints": [0, 1, 2],
    "floats": [0.5, 1.5],
    "bools": [True, False],
    "ints_then_floats": [1, 2.5],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "np_float32": [np.float32(1), np.float32(2)],
    "np_int32": [np.int32(1), np.int32(2)],
    "np_bool": [np.bool_(True), np.bool_(False)],
    "np_arrays": [np.arange(3, dtype=np.float64), np.arange(3, 6, dtype=np.float64)],
    "np_uint8_images": [np.zeros((2, 2, 3), np.uint8), np.ones((2, 2, 3), np.uint8)],
    "np_0d": [np.array(1.0, dtype=np.float32), np.array(2.0, dtype=np.float32)],
    "tensors": [ember.ones(2, 3), ember.zeros(2, 3)],
    "int_tensors": [ember.arange(3), ember.arange(3, 6)],
    "0d_tensors": [ember.tensor(1.0), ember.tensor(2.0)],
    "mixed_dtype_tensors": [ember.arange(2), ember.ones(2)],
    "tuples": [(ember.zeros(2), 1, "a"), (ember.ones(2), 2, "b")],
    "lists": [[0, 1.0], [2, 3.0]],
    "dicts": [{"img": ember.zeros(2), "label": 1}, {"img": ember.ones(2), "label": 0}],
    "ordered_dicts": [OrderedDict(a=1, b=2.0), OrderedDict(a=3, b=4.0)],
    "namedtuples": [Point(0, 0.5), Point(1, 1.5)],
    "nested": [
        {"a": (np.float32(1), [1, {"deep": ember.zeros(1)}]), "s": "x"},
        {"a": (np.float32(2), [3, {"deep": ember.ones(1)}]), "s": "y"},
    ],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate_matches_torch(name):
    batch = BATCHES[name]
    ours = default_collate(batch)
    theirs = tdata.default_collate([ember_to_torch(s) for s in batch])
    assert to_plain(ours) == to_plain(theirs)


@pytest.mark.parametrize(
    "sample",
    [
        np.arange(3),
        np.float32(2.5),
        (np.zeros(2), 1, "s"),
        [np.ones(1), 2],
        {"a": np.zeros(1), "b": "x"},
        Point(np.array(0), 1),
        np.array(["a", "b"]),
        "text",
        3,
    ],
)
def test_default_convert_matches_torch(sample):
    assert to_plain(default_convert(sample)) == to_plain(tdata.default_convert(sample))


def test_stacked_batch_is_contiguous_and_independent():
    rows = [ember.ones(2), ember.zeros(2)]
    out = default_collate(rows)
    assert out._data.flags.c_contiguous and out.shape == (2, 2)
    out._data[0, 0] = 5
    assert rows[0].tolist() == [1.0, 1.0]


def test_collate_errors_match_torch_messages():
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got "
        r"\[3\] at entry 0 and \[4\] at entry 1",
    ):
        default_collate([ember.zeros(3), ember.zeros(4)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_collate_fn_map_is_extensible():
    class Box:
        def __init__(self, v):
            self.v = v

    fns = {**default_collate_fn_map, Box: lambda batch, *, collate_fn_map: sum(b.v for b in batch)}
    assert collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=fns)[0] == 4


def test_requires_grad_rows_keep_history_when_stack_exists():
    x = ember.ones(3, requires_grad=True)
    out = default_collate([x, x])
    assert out.shape == (2, 3)
    if hasattr(ember, "stack"):
        assert out.requires_grad
