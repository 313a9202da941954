"""The virtualenv with real PyTorch that the Ray head test's training jobs run in.

PyTorch is no dependency of flarekit, nor of its tests' own environment: only the DDP jobs that
test_ray_jobs_integration.py submits to a real Ray head need it, and only as the ``torchrun``
and the interpreter those jobs start (they put this virtualenv's ``bin`` first on their PATH).
It is large (the PyPI wheels for Linux bring the CUDA runtime libraries, which ``import torch``
loads even on a CPU), so it lives in the user's cache, outside every checkout, in a folder named
after the pins and the Python version: every checkout with the same pins shares one copy, and a
new pin gets a new folder.

``python torch_venv.py`` creates it when missing (``make torch-venv``; ``make test`` runs it) and
prints its path; the test finds it with `find`. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: What the virtualenv holds (PyTorch pins its CUDA runtime wheels exactly); its folder is named
#: after these.
PINS = ("torch==2.15.0",)
#: The installer: uv fetches and unpacks the 2.8 GB of wheels in parallel, about four times as
#: fast as pip here (148 s against 575 to 666 s for the same pins, cold).
INSTALLER = "uv==0.13.9"
#: Set to use another virtualenv with torch (its folder), e.g. one made with a CPU-only build.
ENV = "FLAREKIT_TORCH_VENV"
_COMPLETE = ".complete"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flarekit" / "venv"


def default_location() -> Path:
    """Where this checkout's pins and this Python put the virtualenv."""
    pins = "-".join(pin.replace("==", "-") for pin in PINS)
    return cache_root() / f"{pins}-py{sys.version_info[0]}.{sys.version_info[1]}"


def find() -> tuple[Path | None, str]:
    """The virtualenv's folder, or None and why it is not there."""
    if os.environ.get(ENV):
        folder = Path(os.environ[ENV])
        if not (folder / "bin" / "torchrun").exists():
            return None, f"{ENV}={folder} has no bin/torchrun"
        return folder, ""
    folder = default_location()
    if not (folder / _COMPLETE).exists():
        return None, f"PyTorch for the Ray jobs is not installed: run `make torch-venv` ({folder})"
    return folder, ""


def create(folder: Path) -> None:
    """Create the virtualenv and install the pins; a half-made one is started again."""
    if folder.exists():
        shutil.rmtree(folder)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--no-cache-dir"]
    subprocess.run([*pip, INSTALLER], check=True)
    uv = [str(folder / "bin" / "uv"), "pip", "install", "--quiet", "--no-cache"]
    subprocess.run([*uv, "--python", python, *PINS], check=True)
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
    (folder / _COMPLETE).write_text("\n".join(PINS) + "\n")
    print(
        f"installed {', '.join(PINS)} in {time.monotonic() - started:.0f}s "
        f"({size / 2**30:.1f} GiB on disk)",
        file=sys.stderr,
    )


def main() -> int:
    found, why = find()
    if found is None:
        if os.environ.get(ENV):
            print(why, file=sys.stderr)
            return 1
        found = default_location()
        found.parent.mkdir(parents=True, exist_ok=True)
        # Checkouts sharing the cache may run this at once: one creates, the others wait.
        with open(found.parent / f"{found.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (found / _COMPLETE).exists():
                create(found)
    print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
