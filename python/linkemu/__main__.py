"""`python -m linkemu ...` is the same as the `linkemu` console script."""

import sys

from linkemu.cli.main import main

sys.exit(main())
