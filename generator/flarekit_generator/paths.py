"""Where the generator reads and writes by default.

Run from the flarekit repository (or from an unpacked flarekit-models sdist, which is laid out
the same way), the defaults are the repository's: ``schemas/crds.lock.tsv``, the git-ignored
``schemas/cache/``, the mirror ``../shared/schemas`` and ``generated/``. Installed as the
``flarekit-generator`` distribution, there is no repository: the lock file is the copy the
distribution ships (the releases flarekit pins), the cache is the user's cache directory, and
the output directory must be given.

Every location can be overridden from the environment, so that tests, CI and package builds
can point the generator at other directories.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: The repository (or unpacked sdist) this copy of the generator sits in, if it sits in one.
REPO_ROOT = PACKAGE_DIR.parents[1]
#: Environment variables naming each location.
LOCK_ENV = "FLAREKIT_SCHEMA_LOCK"
CACHE_ENV = "FLAREKIT_SCHEMA_CACHE"
MIRROR_ENV = "SCHEMA_MIRROR"
OUTPUT_ENV = "FLAREKIT_GENERATED"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def in_repository() -> bool:
    """Whether this generator runs from a source tree that has its own lock file."""
    return (REPO_ROOT / "schemas" / "crds.lock.tsv").is_file()


def lock_file() -> Path:
    """The lock file pinning every upstream CRD file we generate from."""
    override = _env_path(LOCK_ENV)
    if override is not None:
        return override
    if in_repository():
        return REPO_ROOT / "schemas" / "crds.lock.tsv"
    return PACKAGE_DIR / "crds.lock.tsv"


def cache_dir() -> Path:
    """The cache of verified CRD files (and of their parsed form)."""
    override = _env_path(CACHE_ENV)
    if override is not None:
        return override
    if in_repository():
        return REPO_ROOT / "schemas" / "cache"
    base = _env_path("XDG_CACHE_HOME") or Path.home() / ".cache"
    return base / "flarekit-generator" / "schemas"


def mirror_dir() -> Path | None:
    """An offline mirror laid out as ``<family>/<tag>/<file name>``, if present."""
    value = os.environ.get(MIRROR_ENV)
    if value:
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = (REPO_ROOT / path).resolve() if in_repository() else path.resolve()
    elif in_repository():
        path = REPO_ROOT.parent / "shared" / "schemas"
    else:
        return None
    return path if path.is_dir() else None


def output_dir() -> Path | None:
    """Where generated packages are written by default (``None``: the caller must say)."""
    override = _env_path(OUTPUT_ENV)
    if override is not None:
        return override
    return REPO_ROOT / "generated" if in_repository() else None


def runtime_dir() -> Path:
    """The hand-written modules every generated package carries (``_base.py``, ``_types.py``).

    They belong to the models distribution (``models/runtime/`` in the repository); the
    flarekit-generator distribution ships a copy of them inside its package.
    """
    in_repo = REPO_ROOT / "models" / "runtime"
    return in_repo if in_repo.is_dir() else PACKAGE_DIR / "runtime"
