"""``ember train``: put the options together, train with ``ember.train.Trainer``, report."""

from __future__ import annotations

import argparse
import json
import os
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
    """Train as ``args`` say; returns the exit status.

    With ``--nproc N`` (N > 1) this process only launches: ``ember run -n N`` starts ``python
    -m ember train ...`` N times, and each of those (``WORLD_SIZE`` set by the launcher) is one
    data-parallel rank. Rank 0 alone writes the run folder and prints."""
    if args.list_models:
        from .. import models

        print("\n".join(models.list_models()))
        return 0
    world = _launched_world(args)
    if world is None:
        out, state_path, config = _prepare(args)
        if config["nproc"] > 1:
            return _launch(args, config, out, state_path)
        return _train(args, config, out, state_path, rank=0, world=1)

    from .. import distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("mpi")
    rank = dist.get_rank()
    found: list = [None]
    if rank == 0:  # one rank decides the folder (a new run-N), the others are told
        try:
            found = [("ok", _prepare(args))]
        except CliError as e:
            found = [("error", str(e))]
    dist.broadcast_object_list(found, src=0)
    kind, value = found[0]
    if kind == "error":  # rank 0 reports it and ends the job
        if rank == 0:
            raise CliError(value)
        return 0
    out, state_path, config = value
    config["nproc"] = world
    return _train(args, config, out, state_path, rank=rank, world=world)


def _launched_world(args) -> int | None:
    """The job's size when this process is a rank started by ``ember run`` / ``mpiexec`` for
    ``--nproc``, else None (this process trains alone, or launches the ranks)."""
    size = os.environ.get("WORLD_SIZE")
    if size is None or args.nproc is None and size == "1":
        return None
    world = int(size)
    if args.nproc is not None and args.nproc != world:
        raise CliError(f"--nproc {args.nproc}: this process is one of {world} ranks already")
    return world


def _prepare(args) -> tuple[Path, Path | None, dict]:
    """The output folder, the state to resume from (or None) and the run's settings."""
    out, state_path, saved = _run_folder(args)
    config = {key: value for key, value in TRAIN_DEFAULTS.items()}
    config.update(saved)
    config.update({k: getattr(args, k) for k in TRAIN_DEFAULTS if getattr(args, k) is not None})
    if state_path is not None and args.out is not None and Path(args.out) != out:
        raise CliError(f"--resume {args.resume}: the run continues in {out}; leave out --out")
    if state_path is not None:
        _check_same_run(args, saved, out)
    if config["compile"] is None:  # the faster path measured for ember train's models
        config["compile"] = str(config["device"]).startswith("cuda") and config["nproc"] == 1
    return out, state_path, config


def _launch(args, config: dict, out: Path, state_path: Path | None) -> int:
    """``ember run -n N python -m ember train <the same options>`` (every rank told the
    folder this process chose); the job's exit status, with the launcher's summary on failure."""
    from ..distributed.launch import run

    argv = ["-m", "ember", "train", *args.train_argv]
    if state_path is None:
        argv += ["--out", str(out)]
    if args.nproc is None:  # from a resumed run's config.json
        argv += ["--nproc", str(config["nproc"])]
    return run(config["nproc"], argv)


def _train(args, config: dict, out: Path, state_path: Path | None, rank: int, world: int) -> int:
    import random

    import numpy as np

    from .. import Generator, manual_seed
    from ..data import DataLoader
    from ..train import Trainer, TrainingInterrupted

    lead = rank == 0
    manual_seed(config["seed"])  # the same on every rank: equal initial weights
    random.seed(config["seed"])
    np.random.seed(config["seed"] % 2**32)
    device = pick_device(_rank_device(config["device"], world))
    train_set, test_set, info, augment = open_data(config["data"], config["augment"])
    config["augment"] = augment
    config["dataset"] = _describe(info)
    model = build_model(config["model"], info)
    loader_args = {"num_workers": config["workers"], "pin_memory": device.type == "cuda"}
    sampler, eval_set = None, test_set
    if world > 1:
        from ..data import DistributedSampler, Subset
        from ..nn.parallel import DistributedDataParallel

        model.to(device)
        model = DistributedDataParallel(model)  # rank 0's weights on every rank
        sampler = DistributedSampler(train_set, world, rank, shuffle=True, seed=config["seed"])
        eval_set = Subset(test_set, range(rank, len(test_set), world))  # disjoint, no padding
    optimizer = build_optimizer(config, model.parameters())
    train_loader = DataLoader(
        train_set,
        batch_size=config["batch_size"],
        shuffle=sampler is None,
        sampler=sampler,
        generator=Generator().manual_seed(config["seed"]),
        **loader_args,
    )
    test_loader = DataLoader(eval_set, batch_size=max(256, config["batch_size"]), **loader_args)
    scheduler, per_step = build_scheduler(config, optimizer, len(train_loader))
    quiet = args.quiet or not lead
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
        out_dir=out if lead else None,
        verbose=0 if quiet else 1,
        input_bound_hint="raise --workers (now {workers})",
        config=config,
        checkpoint_every=args.checkpoint_every if lead else 0,
    )
    if state_path is not None:
        trainer.resume(state_path)  # every rank: rank 0's state
    if not quiet:
        _stderr(_header(config, info, train_set, test_set, device, out, trainer, world))

    start = time.perf_counter()
    with warnings.catch_warnings():
        if lead:
            warnings.showwarning = _show_warning
        else:
            warnings.simplefilter("ignore")  # rank 0 says it once
        try:
            history = trainer.fit(config["epochs"])
        except TrainingInterrupted as e:
            if lead:
                _stderr(f"ember train: {e}; continue with: ember train --resume {out}")
            return 130
    seconds = time.perf_counter() - start
    if lead:
        print(_result_line(history, seconds, out), flush=True)
    return 0


def _rank_device(spec: str, world: int) -> str:
    """``cuda`` on a rank of a multi-process job: the GPU of its local rank (round robin)."""
    if world == 1 or spec != "cuda":
        return spec
    from .. import cuda

    count = cuda.device_count() if cuda.is_available() else 0
    return f"cuda:{int(os.environ.get('LOCAL_RANK', '0')) % count}" if count else spec


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


def _header(config, info, train_set, test_set, device, out, trainer, world: int = 1) -> str:
    c, (h, w) = config, info.image_size
    resumed = ""
    if trainer.epoch or trainer.step_in_epoch:
        resumed = f", resuming at epoch {trainer.epoch + 1} step {trainer.step_in_epoch + 1}"
    batch, where = f"batch {c['batch_size']}", str(device)
    if world > 1:
        batch += f" per process ({c['batch_size'] * world} in all)"
        where = f"{world} processes ({device}, MPI data-parallel)"
    return (
        f"ember train: {c['model']} on {info.name} ({len(train_set):,} train / "
        f"{len(test_set):,} test images, {info.in_channels}x{h}x{w}, {info.num_classes} classes)"
        f", {c['epochs']} epochs, {c['optimizer']} lr {c['lr']:g}, {batch}, "
        f"{where}, {'compiled' if c['compile'] else 'eager'}{_amp_note(c)}{resumed} -> {out}"
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
