"""`python -m freqgap …`: the same as the `freqgap` command."""

import sys

from freqgap.cli import main

sys.exit(main())
