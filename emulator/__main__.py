"""``python -m emulator``: the same as the ``botemu`` command."""

import sys

from emulator.cli import main

if __name__ == "__main__":
    sys.exit(main())
