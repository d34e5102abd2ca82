"""``python -m evaluation.judge FILE --operator ID [--chip SLUG] [--json]``."""

import sys

from evaluation.judge.cli import main

sys.exit(main())
