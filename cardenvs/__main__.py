"""``python -m cardenvs ...``: the ``cardenvs`` command line (:mod:`cardenvs.cli`)."""

import sys

from .cli import main

sys.exit(main())
