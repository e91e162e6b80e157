"""The ``ember`` command: ``ember train`` (the main job), ``ember eval`` and ``ember run``
(a script on N data-parallel processes).

``main`` returns the exit status: 0 done, 1 the run failed (one line says why), 2 bad options,
130 interrupted (the training state was saved first).

>>> from ember.cli import main
>>> main(["train", "--epochs", "0"])  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .._errors import EmberError
from .parser import build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ember`` with ``argv`` (default: the process's arguments) and return the exit code.

    >>> from ember.cli import main
    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["train", "--list-models"])
    >>> code, "resnet18" in out.getvalue()
    (0, True)
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse has printed the usage line and the error
        return int(e.code or 0)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "train":  # its own options, for the ranks of --nproc to parse again
        raw = list(sys.argv[1:] if argv is None else argv)
        args.train_argv = raw[raw.index("train") + 1 :]
    try:
        if args.command == "train":
            from .train import run_train

            return run_train(args)
        if args.command == "run":
            from ..distributed.launch import run

            return run(args.nproc, [args.script, *args.args])
        from .evaluate import run_eval

        return run_eval(args)
    except KeyboardInterrupt:
        print(f"ember {args.command}: interrupted", file=sys.stderr)
        return 130
    except EmberError as e:
        return _error(args.command, str(e))
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        return _error(args.command, f"{where}{e.strerror or e}")


def _error(command: str, message: str) -> int:
    """Print the one-line error; on a rank of ``ember run`` also leave it for its summary."""
    rank = os.environ.get("RANK") if "EMBER_RUN_ERROR_DIR" in os.environ else None
    name = f"ember {command}" if rank in (None, "0") else f"ember {command} [rank {rank}]"
    print(f"{name}: error: {message}", file=sys.stderr)
    if rank is not None:
        from ..distributed._rank import report

        report(f"ember {command}: {message}", "")
    return 1
