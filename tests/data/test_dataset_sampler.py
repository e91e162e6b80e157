"""Datasets, random_split and samplers, checked against torch.utils.data where it makes sense."""

import warnings

import numpy as np
import pytest

import ember
from ember.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

torch = pytest.importorskip("torch")
tdata = torch.utils.data


def test_tensor_dataset_rows_and_errors():
    x = ember.arange(12).reshape(4, 3).float()
    y = ember.arange(4)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 2 and b.shape == ()
    assert a.dtype == ember.float32 and b.dtype == ember.int64
    assert ds[-1][1].item() == 3
    assert [r.tolist() for r in ds[1:3][1]] == [1, 2]
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(x, ember.arange(5))
    with pytest.raises(TypeError, match="first dimension"):
        TensorDataset(ember.tensor(1.0))


def test_concat_chain_stack_subset():
    ds = ConcatDataset([[0, 1, 2], [3], [4, 5]])
    assert len(ds) == 6 and [ds[i] for i in range(6)] == list(range(6)) and ds[-6] == 0
    assert ds.cumulative_sizes == tdata.ConcatDataset([[0, 1, 2], [3], [4, 5]]).cumulative_sizes
    with pytest.raises(ValueError, match="absolute value"):
        ds[-7]
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])

    class It(IterableDataset):
        def __iter__(self):
            return iter([7, 8])

    with pytest.raises(TypeError, match="IterableDataset"):
        ConcatDataset([It()])
    assert list(It() + It()) == [7, 8, 7, 8]
    assert list(ChainDataset([It(), It()])) == [7, 8, 7, 8]

    class D(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return i * 10

    assert isinstance(D() + D(), ConcatDataset) and (D() + D())[3] == 10
    assert StackDataset(a=[1, 2], b=[3, 4])[1] == {"a": 2, "b": 4}
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset([1], [1, 2])
    sub = Subset(D(), [1, 0, 1])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [10, 0, 10]
    assert sub.__getitems__([0, 1]) == [10, 0]


def test_subset_subclass_overriding_getitem_is_honoured():
    class Doubled(Subset):
        def __getitem__(self, i):
            return 2 * super().__getitem__(i)

    loader = ember.data.DataLoader(Doubled(list(range(5)), [4, 3]), batch_size=2)
    assert next(iter(loader)).tolist() == [8, 6]


def test_random_split_lengths_fractions_and_generator():
    parts = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(1))
    again = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(1))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    for n, fracs in [
        (30, [0.3, 0.3, 0.4]),
        (10, [0.33, 0.33, 0.34]),
        (7, [0.5, 0.5]),
        (5, [0.1, 0.9]),
    ]:
        ours = [len(p) for p in random_split(range(n), fracs)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = [len(p) for p in tdata.random_split(range(n), fracs)]
        assert ours == theirs, (n, fracs)
    ember.manual_seed(3)
    a = [list(p) for p in random_split(range(6), [3, 3])]
    ember.manual_seed(3)
    assert a == [list(p) for p in random_split(range(6), [3, 3])]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [0.9, 0.1])


def test_sequential_and_batch_sampler_match_torch():
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)]:
        ours = BatchSampler(SequentialSampler(range(n)), bs, drop)
        theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler_permutation_replacement_and_reproducibility():
    g = ember.Generator().manual_seed(5)
    first = list(RandomSampler(range(20), generator=g))
    assert sorted(first) == list(range(20))
    second = list(RandomSampler(range(20), generator=g))
    assert first != second  # the generator moved on
    assert list(RandomSampler(range(20), generator=ember.Generator().manual_seed(5))) == first
    ember.manual_seed(0)
    a = list(RandomSampler(range(20)))
    ember.manual_seed(0)
    assert list(RandomSampler(range(20))) == a
    long = list(RandomSampler(range(4), num_samples=10))
    assert len(long) == 10 and sorted(long[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    rep = RandomSampler(range(3), replacement=True, num_samples=70)
    draws = list(rep)
    assert len(rep) == 70 and len(draws) == 70 and set(draws) <= {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)


def test_subset_random_and_weighted_samplers():
    idx = [10, 20, 30, 40]
    s = list(SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(0)))
    assert sorted(s) == idx and len(SubsetRandomSampler(idx)) == 4
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400, generator=ember.Generator().manual_seed(0))
    draws = np.array(list(w))
    assert set(draws.tolist()) == {1, 3} and 0.65 < (draws == 3).mean() < 0.85
    assert w.weights.dtype == ember.float64 and len(w) == 400
    no_rep = list(WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False))
    assert sorted(no_rep) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1.0, -1.0], 2)
