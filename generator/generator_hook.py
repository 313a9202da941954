"""Build hook: ship the pinned lock file and the models' runtime modules with the generator.

Both live elsewhere in the repository (``schemas/crds.lock.tsv``, ``models/runtime/``); an
installed generator has no repository, so the sdist and the wheel carry copies inside the
package (``flarekit_generator/crds.lock.tsv``, ``flarekit_generator/runtime/``), where
``flarekit_generator.paths`` looks when it does not run from a repository. Built from an
sdist, the copies are already in the package directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class GeneratorBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        repo = Path(self.root).parent
        lock = repo / "schemas" / "crds.lock.tsv"
        runtime = repo / "models" / "runtime"
        if version == "editable" or not lock.is_file() or not runtime.is_dir():
            return  # an editable install reads them in place; an sdist has them already
        include = build_data["force_include"]
        include[str(lock)] = "flarekit_generator/crds.lock.tsv"
        for module in sorted(runtime.glob("*.py")):
            include[str(module)] = f"flarekit_generator/runtime/{module.name}"
