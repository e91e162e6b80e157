"""The ``ember`` command line: its sub-commands, options, defaults and help texts."""

from __future__ import annotations

import argparse

OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop")
SCHEDULERS = ("none", "cosine", "step", "onecycle")

# Defaults of `ember train`. Options are parsed with default None so a resumed run can tell
# what the user set on this command line from what comes from the checkpoint's own settings.
TRAIN_DEFAULTS = {
    "model": "cnn",
    "data": "digits",
    "epochs": 15,
    "batch_size": 64,
    "lr": 3e-3,
    "optimizer": "adam",
    "weight_decay": 0.0,
    "momentum": 0.9,
    "scheduler": "cosine",
    "device": "cpu",
    "compile": None,  # decided by the device: the faster path where measured (train.py)
    "amp": False,
    "workers": 0,
    "seed": 0,
    "augment": None,  # decided by the data: on for CIFAR-10 and image folders
    "nproc": 1,
}

EPILOG_TRAIN = """\
examples:
  ember train                                  small CNN on the bundled digits (about 20 s)
  ember train --data ~/data/mnist --epochs 5   a folder of MNIST IDX files
  ember train --data ~/data/cifar-10-batches-bin --model resnet18 --device cuda
  ember train --resume runs/digits-cnn-1       continue an interrupted run
  ember train --nproc 2                        data-parallel on 2 processes (MPI)

--data is 'digits' or a folder holding MNIST / Fashion-MNIST IDX files, the CIFAR-10
binary batches, or images in one sub-folder per class (with train/ and test/ splits, or
split 80/20). The output folder receives last.safetensors (full training state),
best.safetensors (model weights), config.json, log.csv, curves.png and tensorboard/.
"""


def positive_int(text: str) -> int:
    value = _number(text, int, "a whole number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _number(text, int, "a whole number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = _number(text, float, "a number")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = _number(text, float, "a number")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or a positive number, got {text!r}")
    return value


def _number(text: str, kind, what: str):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line pointing at ``--help`` (no usage block)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``ember`` argument parser (``ember --help``).

    >>> build_parser().parse_args(["train", "--epochs", "2"]).epochs
    2
    """
    from .. import __version__

    parser = _Parser(
        prog="ember",
        description="ember: a deep-learning framework. Train and evaluate image classifiers.",
        epilog="Run 'ember train' with no options to train a small CNN on bundled data.",
    )
    parser.add_argument("--version", action="version", version=f"ember {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    train = commands.add_parser(
        "train",
        help="train a model (default: a small CNN on the bundled digits)",
        description="Train an image classifier and leave checkpoints, logs and plots in --out.",
        epilog=EPILOG_TRAIN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d = TRAIN_DEFAULTS
    train.add_argument("--model", help=f"model name (default {d['model']}; see --list-models)")
    train.add_argument("--list-models", action="store_true", help="list the models and exit")
    train.add_argument("--data", help=f"'digits' or a dataset folder (default {d['data']})")
    train.add_argument("--epochs", type=positive_int, help=f"epochs (default {d['epochs']})")
    train.add_argument(
        "--batch-size", type=positive_int, help=f"batch size (default {d['batch_size']})"
    )
    train.add_argument("--lr", type=positive_float, help=f"learning rate (default {d['lr']})")
    train.add_argument(
        "--optimizer", choices=OPTIMIZERS, help=f"optimizer (default {d['optimizer']})"
    )
    train.add_argument("--weight-decay", type=non_negative_float, help="weight decay (default 0)")
    train.add_argument("--momentum", type=non_negative_float, help="SGD momentum (default 0.9)")
    train.add_argument(
        "--scheduler", choices=SCHEDULERS, help=f"LR schedule (default {d['scheduler']})"
    )
    train.add_argument("--device", help="cpu, cuda or cuda:N (default cpu)")
    train.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        help="compile the training step with ember.compile (default: on for cuda, where the "
        "step replays as a CUDA graph; off on the cpu, where it is no faster)",
    )
    train.add_argument(
        "--amp",
        nargs="?",
        const=True,
        choices=[True, "bfloat16", "float16"],
        type=lambda v: v,
        help="mixed precision: bfloat16 autocast on the CPU, float16 + GradScaler on a GPU; "
        "--amp bfloat16 / float16 chooses (default off; see docs/amp.md)",
    )
    train.add_argument(
        "--augment",
        action=argparse.BooleanOptionalAction,
        help="random crops and flips (default: on for CIFAR-10 and image folders)",
    )
    train.add_argument(
        "--workers", type=non_negative_int, help="background data-loading workers (default 0)"
    )
    train.add_argument("--seed", type=non_negative_int, help="random seed (default 0)")
    train.add_argument(
        "--nproc",
        type=positive_int,
        metavar="N",
        help="data-parallel training on N processes of this machine through 'ember run' "
        "(MPI); --batch-size is per process (default 1)",
    )
    train.add_argument(
        "--out", help="output folder (default runs/<data>-<model>-N, a new one each run)"
    )
    train.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="PATH",
        help="continue a run from its folder or last.safetensors (default: --out)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=non_negative_int,
        default=0,
        metavar="STEPS",
        help="also save the training state every STEPS steps (default: each epoch)",
    )
    train.add_argument(
        "-q", "--quiet", action="store_true", help="print only the final result line"
    )

    evaluate = commands.add_parser(
        "eval",
        help="evaluate a checkpoint on a dataset's test split",
        description="Report the loss and accuracy of a checkpoint on the test split of --data.",
    )
    evaluate.add_argument("checkpoint", help="best.safetensors, last.safetensors, or a run folder")
    evaluate.add_argument("--data", help="dataset (default: the one the model was trained on)")
    evaluate.add_argument("--model", help="model name (default: from the run's config.json)")
    evaluate.add_argument("--batch-size", type=positive_int, default=256, help="default 256")
    evaluate.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    evaluate.add_argument(
        "--workers", type=non_negative_int, default=0, help="data-loading workers"
    )
    evaluate.add_argument("--train-split", action="store_true", help="use the training split")

    run = commands.add_parser(
        "run",
        help="run a script on N processes (data-parallel, through MPI's mpiexec)",
        description="Start N ranks of 'python script.py args' with mpiexec; each gets RANK, "
        "LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE, and a share of the BLAS threads. If a "
        "rank fails, every rank stops and this prints which rank failed and why.",
        epilog="example:\n  ember run -n 2 train_ddp.py --epochs 3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "-n", "--nproc", type=positive_int, default=1, help="number of processes (default 1)"
    )
    run.add_argument("script", help="the Python script every rank runs")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser
