"""``python -m flarekit.cli`` is the ``flarekit`` command."""

import sys

from flarekit.cli._app import main

if __name__ == "__main__":
    sys.exit(main())
