"""The virtualenv with real PyTorch that the Ray head test's training jobs and the practice
cluster's local pods run with (see `flarekit_testing.local._torch`, which makes and finds it).

PyTorch is no dependency of flarekit, nor of its tests' own environment: it is large (the PyPI
wheels for Linux bring the CUDA runtime libraries, which ``import torch`` loads even on a CPU),
so it lives in the user's cache, outside every checkout, in a folder named after the pins and
the Python version: every checkout with the same pins shares one copy.

``python torch_venv.py`` creates it when missing (``make torch-venv``; ``make test`` runs it)
and prints its path; the tests find it with `find`.
"""

from __future__ import annotations

import sys

from flarekit_testing.local._torch import ENV, PINS, default_location, ensure, find

__all__ = ["ENV", "PINS", "default_location", "find", "main"]


def main() -> int:
    try:
        print(ensure(quiet=True))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
