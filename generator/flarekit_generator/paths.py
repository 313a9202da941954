"""Where the generator reads and writes, relative to the repository root.

Every location can be overridden from the environment so that tests and CI can
point the generator at temporary directories.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _env_path(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value) if value else default


def lock_file() -> Path:
    """The lock file pinning every upstream CRD file we generate from."""
    return _env_path("FLAREKIT_SCHEMA_LOCK", REPO_ROOT / "schemas" / "crds.lock.tsv")


def cache_dir() -> Path:
    """The git-ignored cache of verified CRD files (and of their parsed form)."""
    return _env_path("FLAREKIT_SCHEMA_CACHE", REPO_ROOT / "schemas" / "cache")


def mirror_dir() -> Path | None:
    """An offline mirror laid out as ``<family>/<tag>/<file name>``, if present."""
    value = os.environ.get("SCHEMA_MIRROR")
    path = Path(value) if value else REPO_ROOT.parent / "shared" / "schemas"
    if not path.is_absolute():
        path = (REPO_ROOT / path).resolve()
    return path if path.is_dir() else None


def output_dir() -> Path:
    """Where the generated ``flarekit_models`` package is written."""
    return _env_path("FLAREKIT_GENERATED", REPO_ROOT / "generated")
