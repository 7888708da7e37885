"""`python -m searcher.cli ...`, the same as the `searcher` console script."""

import sys

from searcher.cli import main

sys.exit(main())
