"""Tiny datasets and models for the training-loop tests (a few milliseconds per epoch)."""

from __future__ import annotations

import time

import numpy as np

import ember
from ember import nn
from ember.data import DataLoader, Dataset, TensorDataset
from ember.train import TIMING_KEYS, ModelCheckpoint, Trainer


class Images(Dataset):
    """``n`` random 6x6 float32 images in 3 classes (class = brightest third), with an optional
    transform (the random ones draw from ember's generator) and an optional delay per item."""

    def __init__(self, n: int, seed: int, transform=None, delay: float = 0.0) -> None:
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 3, n)
        self.images = rng.random((n, 6, 6), dtype=np.float32) * 0.5
        for i, c in enumerate(self.labels):
            self.images[i, 2 * c : 2 * c + 2] += 0.5
        self.transform, self.delay = transform, delay
        self.tensors = [ember.tensor(img[None]) for img in self.images]

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        x = self.images[i]
        x = self.transform(x) if self.transform is not None else self.tensors[i]
        return x, int(self.labels[i])


def random_transform():
    from ember.data.transforms import Compose, RandomCrop, RandomHorizontalFlip, ToTensor

    return Compose([ToTensor(), RandomCrop(6, padding=1), RandomHorizontalFlip()])


def mlp(dropout: float = 0.0) -> nn.Module:
    layers = [nn.Flatten(), nn.Linear(36, 16), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(16, 3))
    return nn.Sequential(*layers)


def loaders(transform=None, batch_size=8, n_train=40, **kw):
    train = DataLoader(Images(n_train, 0, transform), batch_size=batch_size, shuffle=True, **kw)
    test = DataLoader(Images(16, 1), batch_size=8)
    return train, test


def blobs(n: int = 64, seed: int = 0):
    """A TensorDataset of 2-d points in 2 linearly separable classes."""
    g = ember.Generator().manual_seed(seed)
    x = ember.randn(n, 2, generator=g)
    return TensorDataset(x, (x[:, 0] > x[:, 1]).long())


def make_trainer(
    out_dir,
    *,
    dropout=0.3,
    transform=None,
    sched="step",
    callbacks=(),
    compile=False,
    init_seed=0,
    gen_seed=None,
    amp=False,
    **loader_kw,
) -> Trainer:
    ember.manual_seed(init_seed)
    if gen_seed is not None:
        loader_kw["generator"] = ember.Generator().manual_seed(gen_seed)
    model = mlp(dropout)
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    train, test = loaders(transform, **loader_kw)
    scheduler = None
    if sched == "step":
        scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    elif sched == "onecycle":
        scheduler = ember.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=0.05, total_steps=3 * len(train)
        )
    callbacks = list(callbacks)
    if out_dir is not None:  # the checkpoints only: plots and TensorBoard are tested elsewhere
        callbacks.append(ModelCheckpoint(out_dir))
    return Trainer(
        model,
        opt,
        train,
        test,
        scheduler=scheduler,
        callbacks=callbacks,
        verbose=0,
        compile=compile,
        amp=amp,
    )


def weights(model) -> dict:
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def assert_same_run(a_weights, a_hist, b_weights, b_hist) -> None:
    assert a_weights.keys() == b_weights.keys()
    for k in a_weights:
        np.testing.assert_array_equal(a_weights[k], b_weights[k], err_msg=k)
        assert a_weights[k].tobytes() == b_weights[k].tobytes(), k
    strip = lambda h: {k: v for k, v in h.items() if k not in TIMING_KEYS}  # noqa: E731
    assert strip(a_hist) == strip(b_hist)
