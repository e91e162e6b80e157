"""``python -m ember`` is the ``ember`` command."""

import sys

from .cli import main

sys.exit(main())
