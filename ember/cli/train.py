"""``ember train``: put the options together, train with ``ember.train.Trainer``, report."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from .parser import TRAIN_DEFAULTS
from .setup import (
    STATE_FILE,
    CliError,
    build_model,
    build_optimizer,
    build_scheduler,
    new_run_folder,
    open_data,
    pick_device,
)

CONFIG_FILE = "config.json"


def run_train(args: argparse.Namespace) -> int:
    """Train as ``args`` say; returns the exit status."""
    if args.list_models:
        from .. import models

        print("\n".join(models.list_models()))
        return 0
    out, state_path, saved = _run_folder(args)
    config = {key: value for key, value in TRAIN_DEFAULTS.items()}
    config.update(saved)
    config.update({k: getattr(args, k) for k in TRAIN_DEFAULTS if getattr(args, k) is not None})
    if state_path is not None and args.out is not None and Path(args.out) != out:
        raise CliError(f"--resume {args.resume}: the run continues in {out}; leave out --out")
    if state_path is not None:
        _check_same_run(args, saved, out)

    import random

    import numpy as np

    from .. import Generator, manual_seed
    from ..data import DataLoader
    from ..train import Trainer, TrainingInterrupted

    manual_seed(config["seed"])
    random.seed(config["seed"])
    np.random.seed(config["seed"] % 2**32)
    device = pick_device(config["device"])
    train_set, test_set, info, augment = open_data(config["data"], config["augment"])
    config["augment"] = augment
    config["dataset"] = _describe(info)
    model = build_model(config["model"], info)
    optimizer = build_optimizer(config, model.parameters())
    loader_args = {"num_workers": config["workers"], "pin_memory": device.type == "cuda"}
    train_loader = DataLoader(
        train_set,
        batch_size=config["batch_size"],
        shuffle=True,
        generator=Generator().manual_seed(config["seed"]),
        **loader_args,
    )
    test_loader = DataLoader(test_set, batch_size=max(256, config["batch_size"]), **loader_args)
    scheduler, per_step = build_scheduler(config, optimizer, len(train_loader))
    trainer = Trainer(
        model,
        optimizer,
        train_loader,
        test_loader,
        scheduler=scheduler,
        scheduler_interval="step" if per_step else "epoch",
        device=device,
        compile=config["compile"],
        amp=config.get("amp", False),
        out_dir=out,
        verbose=0 if args.quiet else 1,
        input_bound_hint="raise --workers (now {workers})",
        config=config,
        checkpoint_every=args.checkpoint_every,
    )
    if state_path is not None:
        trainer.resume(state_path)
    say = (lambda *a: None) if args.quiet else _stderr
    say(_header(config, info, train_set, test_set, device, out, trainer))

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            history = trainer.fit(config["epochs"])
        except TrainingInterrupted as e:
            _stderr(f"ember train: {e}; continue with: ember train --resume {out}")
            return 130
    seconds = time.perf_counter() - start
    print(_result_line(history, seconds, out))
    return 0


def _run_folder(args) -> tuple[Path, Path | None, dict]:
    """The output folder, the state file to resume from (or None) and the run's saved options."""
    if args.resume is None:
        if args.out is not None:
            out = Path(args.out).expanduser()
            if (out / STATE_FILE).exists():
                raise CliError(
                    f"--out {out}: this folder already holds a run; continue it with "
                    f"--resume {out}, or choose another --out"
                )
            return out, None, {}
        model = args.model or TRAIN_DEFAULTS["model"]
        data = Path(args.data or TRAIN_DEFAULTS["data"]).name or "data"
        return new_run_folder("runs", f"{data}-{model}"), None, {}
    target = Path(args.resume or args.out or "").expanduser()
    if not str(target) or str(target) == ".":
        raise CliError("--resume: name the run folder or its last.safetensors (or give --out)")
    state = target / STATE_FILE if target.is_dir() else target
    if not state.is_file():
        raise CliError(f"--resume {target}: no training state found ({state} does not exist)")
    saved = {}
    config_path = state.parent / CONFIG_FILE
    if config_path.is_file():
        try:
            saved = json.loads(config_path.read_text())
        except ValueError as e:
            raise CliError(f"--resume {target}: {config_path} is not valid JSON ({e})") from None
    saved = {k: v for k, v in saved.items() if k in TRAIN_DEFAULTS}
    return state.parent, state, saved


# options a resumed run can't change: its checkpoint holds state for exactly these
_FIXED_ON_RESUME = ("model", "data", "optimizer", "scheduler")


def _check_same_run(args, saved: dict, out: Path) -> None:
    """Refuse, in one line, an option that would resume the run as another model, data set,
    optimizer or scheduler than the one it was trained with."""
    for key in _FIXED_ON_RESUME:
        given, trained = getattr(args, key, None), saved.get(key)
        if given is None or trained is None or str(given) == str(trained):
            continue
        if key == "data" and Path(str(given)).expanduser().resolve() == (
            Path(str(trained)).expanduser().resolve()
        ):
            continue
        flag = "--" + key.replace("_", "-")
        raise CliError(
            f"--resume {args.resume}: the run in {out} was trained with {flag} {trained}, not "
            f"{given}; leave out {flag} to continue it, or start a new run (--out) for {given}"
        )


def _describe(info) -> dict:
    return {
        "name": info.name,
        "num_classes": info.num_classes,
        "in_channels": info.in_channels,
        "image_size": list(info.image_size),
        "mean": list(info.mean),
        "std": list(info.std),
        "classes": list(info.classes),
    }


def _header(config, info, train_set, test_set, device, out, trainer) -> str:
    c, (h, w) = config, info.image_size
    resumed = ""
    if trainer.epoch or trainer.step_in_epoch:
        resumed = f", resuming at epoch {trainer.epoch + 1} step {trainer.step_in_epoch + 1}"
    return (
        f"ember train: {c['model']} on {info.name} ({len(train_set):,} train / "
        f"{len(test_set):,} test images, {info.in_channels}x{h}x{w}, {info.num_classes} classes)"
        f", {c['epochs']} epochs, {c['optimizer']} lr {c['lr']:g}, batch {c['batch_size']}, "
        f"{device}{', compiled' if c['compile'] else ''}{_amp_note(c)}{resumed} -> {out}"
    )


def _amp_note(config) -> str:
    amp = config.get("amp")
    if not amp:
        return ""
    return ", amp" if amp is True else f", amp {amp}"


def _result_line(history: dict, seconds: float, out: Path) -> str:
    acc = history.get("test_acc") or []
    loss = history.get("test_loss") or []
    if not acc:
        return f"no epochs were run; output in {out}"
    best = max(range(len(acc)), key=acc.__getitem__)
    return (
        f"test accuracy {100 * acc[-1]:.2f}% (loss {loss[-1]:.4f}) after {len(acc)} epochs "
        f"in {seconds:.1f} s; best {100 * acc[best]:.2f}% at epoch {best + 1}; output in {out}"
    )


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _stderr(f"ember train: warning: {message}")
