"""Error messages whose first line is PyTorch's, word for word (programs print it):
broadcasting, expand, in-place casts, requires_grad on integers, is_nonzero."""

import pytest
import torch

import ember


def _first_line(fn, m):
    with pytest.raises(RuntimeError) as info:
        fn(m)
    return str(info.value).splitlines()[0]


def _iadd(m, dtype, value):
    t = m.zeros(3, dtype=getattr(m, dtype))
    t += value


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(2, 3) + m.ones(4),
        lambda m: m.ones(2, 3) * m.ones(3, 2),
        lambda m: m.ones(3, 1, 5) - m.ones(4, 6, 5),
        lambda m: m.ones(2, 3, 1) + m.ones(5, 4),
        lambda m: m.ones(2, 3).expand(4, 3),
        lambda m: m.ones(2, 3).expand(-1, 4, 3),
        lambda m: m.ones(3).expand(-1, 3),
        lambda m: m.broadcast_shapes((2, 3), (3, 2)),
        lambda m: m.broadcast_shapes((2, 1), (1, 3), (4, 3)),
        lambda m: m.broadcast_shapes((3,), (2, 4)),
        lambda m: _iadd(m, "int32", 1.5),
        lambda m: _iadd(m, "bool", 1),
        lambda m: m.add(m.ones(2), 1, out=m.zeros(2, dtype=m.uint8)),
        lambda m: m.arange(3).requires_grad_(),
        lambda m: m.tensor([1, 2], requires_grad=True),
        lambda m: m.zeros(2, dtype=m.int64, requires_grad=True),
        lambda m: m.randint(0, 3, (2,), requires_grad=True),
        lambda m: setattr(m.ones(2, dtype=m.int32), "requires_grad", True),
        lambda m: m.is_nonzero(m.ones(2)),
        lambda m: m.is_nonzero(m.ones(0)),
    ],
)
def test_first_line_is_torchs(fn):
    assert _first_line(fn, ember) == _first_line(fn, torch)


def test_broadcast_errors_keep_embers_detail_below():
    with pytest.raises(ember.ShapeError, match=r"\nadd: shapes \(2, 3\) and \(4,\)"):
        ember.ones(2, 3) + ember.ones(4)


def test_broadcast_shapes_values_as_torch():
    for shapes in [((2, 1), 3), ((5, 1, 3), (2, 3)), (), ((1,), (4, 1))]:
        assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))


def test_is_nonzero_and_is_complex_as_torch():
    for m in (torch, ember):
        assert m.is_nonzero(m.tensor([2])) is True
        assert m.is_nonzero(m.tensor(0.0)) is False
        assert m.tensor([0.5]).is_nonzero() is True
        assert m.is_complex(m.zeros(2)) is False
