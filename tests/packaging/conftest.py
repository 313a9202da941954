"""Session fixtures of the packaging tests: one clean copy, one build of each distribution.

Every test here is slow (builds and fresh virtual environments); they share the artifacts so
that each distribution is built once per run. Builds use the development environment's build
tools (no download) and the repository's verified schema cache; installs into fresh venvs
take flarekit's own wheels from disk and their third-party requirements from the package
index, as a user's would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging_support import Dists, Venv, build, clean_copy, clean_env, make_venv

from flarekit_generator import paths


@pytest.fixture(scope="session")
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean clone of the working tree (no generated models, no cache, no venv)."""
    return clean_copy(tmp_path_factory.mktemp("clone"))


@pytest.fixture(scope="session")
def mirror() -> Path:
    found = paths.mirror_dir()
    if found is None:
        pytest.fail(f"the schema mirror is missing: set {paths.MIRROR_ENV} (make test does)")
    return found


@pytest.fixture(scope="session")
def build_env(mirror: Path) -> dict[str, str]:
    """Builds read the pinned CRDs from the repository's verified cache, else the mirror."""
    return clean_env(
        SCHEMA_MIRROR=str(mirror), FLAREKIT_SCHEMA_CACHE=str(paths.cache_dir().resolve())
    )


@pytest.fixture(scope="session")
def dists(
    clean_tree: Path, build_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Dists:
    """``python -m build`` of each project of the clean copy: an sdist, and a wheel from it."""
    out = tmp_path_factory.mktemp("dist")
    made: dict[str, Path] = {}
    for name, project in (
        ("flarekit", clean_tree),
        ("models", clean_tree / "models"),
        ("generator", clean_tree / "generator"),
        ("testing", clean_tree / "testing"),
    ):
        artifacts = build(project, out, build_env)
        made[f"{name}_sdist"] = next(a for a in artifacts if a.name.endswith(".tar.gz"))
        made[f"{name}_wheel"] = next(a for a in artifacts if a.name.endswith(".whl"))
    return Dists(**made)


@pytest.fixture(scope="session")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory outside the repository, so nothing imports from the source tree."""
    return tmp_path_factory.mktemp("user")


@pytest.fixture(scope="session")
def flarekit_venv(dists: Dists, user_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh venv with the flarekit wheel and the flarekit-testing wheel beside it (what
    ``pip install 'flarekit[testing]'`` installs)."""
    env = clean_env()
    venv = make_venv(tmp_path_factory.mktemp("venv") / "flarekit", env)
    venv.pip(f"{dists.flarekit_wheel}[testing]", str(dists.testing_wheel), env=env, cwd=user_dir)
    return venv
