"""``python -m codec.cli``: the same as ``tfrlens-cli``."""
from __future__ import annotations

import sys

from codec.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
