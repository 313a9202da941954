"""Build hook: generate ``flarekit_models`` while a wheel is built, from the pinned CRDs.

Used by both distributions that carry the models: ``flarekit-models`` (this directory) and
``flarekit`` (the repository root, whose ``pyproject.toml`` points here). The models are not
in git; every wheel generates them from ``schemas/crds.lock.tsv``, each CRD file verified
against its pinned sha256, read from (in order) the schema cache, a mirror, or a download:

- ``FLAREKIT_SCHEMA_CACHE``: a schema cache to use (default: ``schemas/cache`` of the source
  tree, so a build in the repository reuses what ``make schemas`` verified);
- ``SCHEMA_MIRROR``: a directory laid out as ``<family>/<tag>/<file>`` (default:
  ``../shared/schemas`` beside the source tree, when there is one);
- ``FLAREKIT_SCHEMA_OFFLINE=1``: never download; a file found in neither fails the build with
  the list of what is missing.

The generator itself is a build-time tool: its source travels in the sdist (beside the lock
file) so that an sdist builds on its own, but it is never part of a wheel. An editable install
generates nothing: ``make generate`` writes ``generated/``, which the editable install puts on
the path.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

OFFLINE_ENV = "FLAREKIT_SCHEMA_OFFLINE"


class ModelsBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        tree = source_tree(root)
        if self.target_name == "sdist":
            if tree != root:  # the models project in the repository: carry what it builds from
                include = build_data["force_include"]
                include[str(tree / "generator" / "flarekit_generator")] = (
                    "generator/flarekit_generator"
                )
                include[str(tree / "schemas" / "crds.lock.tsv")] = "schemas/crds.lock.tsv"
            return
        if self.target_name != "wheel" or version == "editable":
            return
        self._scratch = Path(tempfile.mkdtemp(prefix="flarekit-models-build-"))
        try:
            package = generate_models(tree, root, self._scratch)
        except BaseException:
            shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        build_data["force_include"][str(package)] = "flarekit_models"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def source_tree(root: Path) -> Path:
    """The directory holding ``generator/`` and ``schemas/``: the project root itself (the
    repository, or an unpacked sdist), or its parent (``models/`` in the repository)."""
    for candidate in (root, root.parent):
        if (candidate / "generator" / "flarekit_generator").is_dir():
            return candidate
    raise RuntimeError(
        f"flarekit-models: no generator/flarekit_generator in {root} or its parent; build "
        "from the flarekit repository or from an sdist made by `python -m build`"
    )


def generate_models(tree: Path, root: Path, out: Path) -> Path:
    """Generate ``flarekit_models`` under ``out`` and return the package directory."""
    sys.path.insert(0, str(tree / "generator"))
    try:
        from flarekit_generator.fetch import SchemaCacheError
        from flarekit_generator.pipeline import generate
    finally:
        sys.path.remove(str(tree / "generator"))
    lock = tree / "schemas" / "crds.lock.tsv"
    cache = Path(os.environ.get("FLAREKIT_SCHEMA_CACHE") or tree / "schemas" / "cache")
    mirror = _mirror(tree)
    runtime = next(p for p in (tree / "models" / "runtime", root / "runtime") if p.is_dir())
    offline = os.environ.get(OFFLINE_ENV, "") not in ("", "0")
    try:
        result = generate(
            lock=lock,
            cache_dir=cache.resolve(),
            out_dir=out,
            mirror=mirror,
            allow_download=not offline,
            runtime_dir=runtime,
        )
    except SchemaCacheError as error:
        raise RuntimeError(
            "flarekit-models: the models are generated at build time from the CRD files "
            f"pinned in {lock.name}, and not all of them could be had.\n{error}\n"
            f"Schema cache: {cache.resolve()}; mirror: {mirror or 'none'}; downloads: "
            f"{'off (' + OFFLINE_ENV + ')' if offline else 'on'}. Point SCHEMA_MIRROR at a "
            "directory of the pinned files (<family>/<tag>/<file>) or FLAREKIT_SCHEMA_CACHE "
            "at a filled cache, or allow downloads."
        ) from None
    print(f"flarekit-models: {result.summary()}", file=sys.stderr)
    return result.package_dir


def _mirror(tree: Path) -> Path | None:
    value = os.environ.get("SCHEMA_MIRROR")
    path = Path(value).expanduser().resolve() if value else tree.parent / "shared" / "schemas"
    return path if path.is_dir() else None
