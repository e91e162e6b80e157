"""``ember eval CHECKPOINT``: the loss and accuracy of trained weights on a test split."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .._errors import EmberError
from .setup import STATE_FILE, CliError, build_model, open_data, pick_device

BEST_FILE = "best.safetensors"
CONFIG_FILE = "config.json"


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate as ``args`` say; prints one result line and returns the exit status."""
    from .. import load
    from ..data import DataLoader
    from ..train import Trainer

    weights_path = _weights_file(Path(args.checkpoint).expanduser())
    config = _config_beside(weights_path)
    data = args.data or config.get("data")
    model_name = args.model or config.get("model")
    if data is None or model_name is None:
        raise CliError(
            f"{weights_path}: no {CONFIG_FILE} beside it to say which data and model it was "
            "trained with; pass --data and --model"
        )
    device = pick_device(args.device)
    train_set, test_set, info, _ = open_data(data, augment=False)
    model = build_model(model_name, info)
    try:
        state = load(weights_path, map_location="cpu")
    except EmberError as e:
        raise CliError(f"{weights_path}: {e}") from None
    if isinstance(state, dict) and state.get("format") == "ember.train":
        state = state["model"]
    try:
        model.load_state_dict(state)
    except (EmberError, RuntimeError, KeyError, TypeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CliError(f"{weights_path} does not fit --model {model_name}: {first}") from None
    split = train_set if args.train_split else test_set
    loader = DataLoader(split, batch_size=args.batch_size, num_workers=args.workers)
    trainer = Trainer(model, None, loader, loader, device=device, verbose=0)
    metrics = trainer.evaluate(loader)
    n = len(split)
    correct = round(metrics["acc"] * n) if "acc" in metrics else None
    which = "train" if args.train_split else "test"
    acc = f"accuracy {100 * metrics['acc']:.2f}% ({correct:,}/{n:,})" if correct is not None else ""
    print(
        f"{model_name} on {info.name} ({which} split): {acc}, loss {metrics['loss']:.4f} "
        f"[{weights_path}]"
    )
    return 0


def _weights_file(path: Path) -> Path:
    if path.is_dir():
        for name in (BEST_FILE, STATE_FILE):
            if (path / name).is_file():
                return path / name
        raise CliError(f"{path}: no {BEST_FILE} or {STATE_FILE} in this folder")
    if not path.is_file():
        raise CliError(f"{path}: no such checkpoint file")
    return path


def _config_beside(weights: Path) -> dict:
    path = weights.parent / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CliError(f"{path}: unreadable ({e})") from None
