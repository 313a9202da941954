"""``python -m flarekit.walkthrough`` (see :mod:`flarekit.walkthrough`)."""

import sys

from flarekit.walkthrough._main import main

if __name__ == "__main__":
    sys.exit(main())
