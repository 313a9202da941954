"""The virtualenv whose Ray connects to the real node's Ray heads as a Ray client.

A Ray client must run the Ray release and the Python minor version of the cluster it joins:
the node's image has flarekit's default Ray (`DEFAULT_RAY_VERSION`) on Debian's Python 3.11,
while the suite's own environment has the Ray its other tests pin. So the client runs in a
virtualenv of its own, with ``ray[client]`` at the default release, kept in the user's cache
outside every checkout and named after the release and the Python version (pip installs it
from PyPI, once).

``python ray_client_venv.py`` creates it when missing and prints its path. Standard library
only, apart from reading the default release from flarekit's source.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_COMPLETE = ".complete"


def ray_version() -> str:
    source = (REPO / "src" / "flarekit" / "cluster" / "_defaults.py").read_text()
    found = re.search(r'^DEFAULT_RAY_VERSION = "([^"]+)"', source, re.MULTILINE)
    assert found is not None, "flarekit defines DEFAULT_RAY_VERSION"
    return found.group(1)


def location() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    version = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    return Path(base) / "flarekit" / "venv" / f"ray-client-{ray_version()}-{version}"


def ensure() -> Path:
    """The virtualenv's folder, created first when missing (one creator at a time)."""
    folder = location()
    if (folder / _COMPLETE).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / _COMPLETE).exists():
            if folder.exists():
                shutil.rmtree(folder)
            subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
            pin = f"ray[client]=={ray_version()}"
            subprocess.run(
                [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", pin],
                check=True,
            )
            (folder / _COMPLETE).write_text(pin + "\n")
    return folder


if __name__ == "__main__":
    print(ensure())
