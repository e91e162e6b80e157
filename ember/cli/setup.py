"""What ``ember train`` and ``ember eval`` build from their options: data, model, optimizer..."""

from __future__ import annotations

import math
import os
from pathlib import Path

from .._errors import EmberError

STATE_FILE = "last.safetensors"


class CliError(EmberError):
    """A problem the command reports in one line (bad option, unreadable data, busy folder)."""


def pick_device(spec: str):
    """``spec`` as an ember device that can be used here."""
    from .. import cuda
    from ..backend import Device

    try:
        device = Device(spec)
    except EmberError as e:
        raise CliError(f"--device {spec}: {e}") from None
    if device.type == "cuda":
        if not cuda.is_available():
            raise CliError(
                f"--device {spec}: no usable GPU here (install ember[cuda12] or ember[cuda13] "
                "on a machine with an NVIDIA GPU), or use --device cpu"
            )
        if (device.index or 0) >= cuda.device_count():
            raise CliError(f"--device {spec}: only {cuda.device_count()} GPU(s) visible")
    return device


def transforms_for(info, train: bool, augment: bool):
    """ToTensor + Normalize (with the data's own statistics), plus crops and flips to augment."""
    from ..data import transforms as T

    steps = []
    if info.name == "imagefolder":  # photos of many sizes: bring them all to the common one
        steps.append(T.Resize(tuple(info.image_size)))
    if train and augment:
        h, w = info.image_size
        steps += [T.RandomCrop((h, w), padding=max(1, h // 8)), T.RandomHorizontalFlip()]
    steps += [T.ToTensor(), T.Normalize(info.mean, info.std)]
    return T.Compose(steps)


def open_data(spec: str, augment: bool | None):
    """Train and test datasets for ``--data``, their DatasetInfo, and whether they augment."""
    from ..data.datasets import DatasetError, open_dataset

    try:
        train_set, info = open_dataset(spec, train=True)
        test_set, _ = open_dataset(spec, train=False)
    except DatasetError as e:
        raise CliError(f"--data {spec}: {e}") from None
    except OSError as e:
        raise CliError(f"--data {spec}: cannot read {e.filename or spec}: {e.strerror}") from None
    if augment is None:
        augment = info.name in ("cifar10", "imagefolder")
    train_set.transform = transforms_for(info, True, augment)
    test_set.transform = transforms_for(info, False, False)
    if len(train_set) == 0 or len(test_set) == 0:
        raise CliError(f"--data {spec}: the train or test split is empty")
    return train_set, test_set, info, augment


def build_model(name: str, info):
    """The model ``name`` sized for the data in ``info``."""
    from .. import models

    if name not in models.list_models():
        known = ", ".join(models.list_models())
        raise CliError(f"--model {name}: unknown model (known: {known})")
    try:
        return models.get_model(
            name,
            num_classes=info.num_classes,
            in_channels=info.in_channels,
            image_size=tuple(info.image_size),
        )
    except (EmberError, ValueError, TypeError) as e:
        raise CliError(f"--model {name}: {e}") from None


def build_optimizer(config: dict, params):
    from .. import optim

    name, lr, wd = config["optimizer"], config["lr"], config["weight_decay"]
    if name == "sgd":
        return optim.SGD(params, lr=lr, momentum=config["momentum"], weight_decay=wd)
    if name == "adam":
        return optim.Adam(params, lr=lr, weight_decay=wd)
    if name == "adamw":
        return optim.AdamW(params, lr=lr, weight_decay=wd or 0.01)
    if name == "rmsprop":
        return optim.RMSprop(params, lr=lr, weight_decay=wd)
    raise CliError(f"--optimizer {name}: unknown optimizer")


def build_scheduler(config: dict, optimizer, steps_per_epoch: int):
    """The LR schedule and whether it steps per batch (``True``) or per epoch."""
    from ..optim import lr_scheduler as S

    name, epochs = config["scheduler"], config["epochs"]
    if name == "none":
        return None, False
    if name == "cosine":
        return S.CosineAnnealingLR(optimizer, T_max=epochs * steps_per_epoch), True
    if name == "step":
        return S.StepLR(optimizer, step_size=max(1, math.ceil(epochs / 3)), gamma=0.1), False
    if name == "onecycle":
        total = epochs * steps_per_epoch
        return S.OneCycleLR(optimizer, max_lr=config["lr"], total_steps=total), True
    raise CliError(f"--scheduler {name}: unknown schedule")


def new_run_folder(root: str | os.PathLike, stem: str) -> Path:
    """``root/stem-N`` for the first N that does not exist yet (runs are never overwritten)."""
    root = Path(root)
    n = 1
    while (root / f"{stem}-{n}").exists():
        n += 1
    return root / f"{stem}-{n}"
