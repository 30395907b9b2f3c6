"""`python -m autodiff`: the same as the `autodiff` command."""

import sys

from .cli.main import main

sys.exit(main())
