"""The ``ember`` command: ``ember train`` (the main job), ``ember eval`` and ``ember run``
(a script on N data-parallel processes).

``main`` returns the exit status: 0 done, 1 the run failed (one line says why), 2 bad options,
130 interrupted (the training state was saved first).

>>> from ember.cli import main
>>> main(["train", "--epochs", "0"])  # doctest: +SKIP
"""

from __future__ import annotations

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
        print(f"ember {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"ember {args.command}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
