"""``flarekit generate``: rebuild the typed models from the pinned CRD schemas.

It runs ``python -m flarekit_generator generate`` in a child process (the generator is a
build tool with its own dependencies: the ``generate`` extra), so that a missing extra is
reported as one line with the install command instead of an import error. The schema cache
must be filled first (``python -m flarekit_generator schemas``, or ``make generate``); the
command exits with the generator's status.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

from flarekit.cli._common import add_common
from flarekit.cli._exit import UsageError

__all__ = ["GENERATOR_MODULES", "register"]

#: What the generator imports beyond flarekit's own dependencies (the ``generate`` extra).
GENERATOR_MODULES = ("flarekit_generator", "jinja2", "kubernetes_validate")


def missing_modules() -> list[str]:
    return [m for m in GENERATOR_MODULES if importlib.util.find_spec(m) is None]


def _generate(args: argparse.Namespace) -> int:
    missing = missing_modules()
    if missing:
        raise UsageError(
            f"the model generator needs the 'generate' extra ({', '.join(missing)} not "
            "installed): pip install 'flarekit[generate]'"
        )
    command = [sys.executable, "-m", "flarekit_generator", "generate"]
    # The generator prints its own one-line error; its exit status is this command's.
    return subprocess.run(command, check=False).returncode


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``generate``."""
    p = commands.add_parser(
        "generate",
        help="rebuild the typed models (flarekit_models) from the pinned CRD schemas",
        description=__doc__,
    )
    add_common(p)
    p.set_defaults(run=_generate)
