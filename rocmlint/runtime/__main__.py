"""``python -m rocmlint.runtime [--json] [--managed-memory]``: the runtime doctor."""

import sys

from .doctor import main

if __name__ == "__main__":
    sys.exit(main())
