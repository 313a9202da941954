"""PyTorch for local pods: one virtualenv in the user's cache, installed once, shared by every
practice cluster and checkout with the same pins.

Why not a dependency: PyPI's Linux wheels of torch bring the CUDA runtime libraries (about
2.8 GB to download, 5 GB on disk) that ``import torch`` loads even on a CPU. Most users of
the practice cluster never run a torch job, and those who do need it once, not in every
virtualenv. So it lives in ``$FLAREKIT_CACHE_DIR/venv`` (default
``$XDG_CACHE_HOME/flarekit/venv`` or ``~/.cache/flarekit/venv``), in a folder named after the
pins and the Python version, made by `ensure` (``flarekit dev setup``, ``make run``, ``make
torch-venv``) with the installer's progress on the terminal. Local pods see it through the
path (`site_packages`); their interpreter stays the practice cluster's own, so the user's
other packages are there too. ``FLAREKIT_TORCH_VENV`` points at another virtualenv with torch.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["PINS", "default_location", "ensure", "find", "site_packages"]

#: What the virtualenv holds (PyTorch pins its CUDA runtime wheels exactly).
PINS = ("torch==2.15.0",)
#: The installer: uv fetches and unpacks the wheels in parallel, about four times as fast as
#: pip here (148 s against 575 to 666 s for the same pins, cold).
INSTALLER = "uv==0.13.9"
#: Set to use another virtualenv with torch (its folder), e.g. one made with a CPU-only build.
ENV = "FLAREKIT_TORCH_VENV"
_COMPLETE = ".complete"


def cache_root() -> Path:
    explicit = os.environ.get("FLAREKIT_CACHE_DIR")
    if explicit:
        return Path(explicit) / "venv"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flarekit" / "venv"


def default_location() -> Path:
    """Where these pins and this Python put the virtualenv."""
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
        return None, (
            f"PyTorch is not installed for local pods: `flarekit dev setup` installs it "
            f"into {folder} (once, about 2.8 GB)"
        )
    return folder, ""


def site_packages(folder: Path) -> Path | None:
    """The virtualenv's site-packages, when it was made for this Python version."""
    found = folder / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    return found if (found / "torch").is_dir() else None


def _create(folder: Path, quiet: bool) -> None:
    """Create the virtualenv and install the pins; a half-made one is started again."""
    if folder.exists():
        shutil.rmtree(folder)
    started = time.monotonic()
    print(
        f"Installing {', '.join(PINS)} for local pods into {folder} (once; about 2.8 GB to "
        "download, 5 GB on disk)",
        file=sys.stderr,
        flush=True,
    )
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--no-cache-dir", INSTALLER]
    subprocess.run(pip, check=True)
    uv = [str(folder / "bin" / "uv"), "pip", "install", "--no-cache", "--python", python]
    subprocess.run([*uv, *(["--quiet"] if quiet else []), *PINS], check=True)
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
    (folder / _COMPLETE).write_text("\n".join(PINS) + "\n")
    print(
        f"installed {', '.join(PINS)} in {time.monotonic() - started:.0f}s "
        f"({size / 2**30:.1f} GiB on disk)",
        file=sys.stderr,
        flush=True,
    )


def ensure(quiet: bool = False) -> Path:
    """The virtualenv, made first when missing (the installer's progress goes to stderr
    unless `quiet`). Raises `RuntimeError` when ``FLAREKIT_TORCH_VENV`` names a folder
    without torch, `subprocess.CalledProcessError` when the installation fails."""
    found, why = find()
    if found is not None:
        return found
    if os.environ.get(ENV):
        raise RuntimeError(why)
    folder = default_location()
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Checkouts sharing the cache may run this at once: one creates, the others wait.
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / _COMPLETE).exists():
            _create(folder, quiet)
    return folder
