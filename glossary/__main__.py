"""Entry point for ``python -m glossary``."""

import sys

from glossary.cli import main

sys.exit(main(sys.argv[1:]))
