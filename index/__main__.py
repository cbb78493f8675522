"""Entry point for ``python -m index``."""

import sys

from index.cli import main

sys.exit(main())
