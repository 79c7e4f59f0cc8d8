"""``python -m mle_env.cli``: the same as the ``mle-env`` command."""

import sys

from mle_env.cli.main import main

sys.exit(main())
