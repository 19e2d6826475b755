"""``python -m pi_context``: the ``pictx`` command line."""

import sys

from pi_context.cli.main import main

sys.exit(main())
