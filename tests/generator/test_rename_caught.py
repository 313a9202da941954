"""Why the facade reads models, not dicts: an upstream rename becomes a type error.

A fixture CRD is generated, code that reads one of its fields as an attribute type-checks;
the field is renamed in the CRD (as an operator might between releases), the models are
generated again, and the type checker now fails on that very line, naming the field. The
same read through a dict (``obj["spec"]["serial"]``) would pass the checker and fail, or
silently give nothing, at run time.

The second test does the same to the facade: the pinned KubeRay CRDs, with RayCluster's
``workerGroupSpecs`` renamed, make mypy fail on the line of `flarekit.cluster` that reads the
worker groups.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
from small_package import FIXTURE_CRDS, FIXTURES, REPO_ROOT, SOURCE

from flarekit_generator import paths
from flarekit_generator.ir import CrdInfo
from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.lockfile import read_lock
from flarekit_generator.parse import parse_crd
from flarekit_generator.pipeline import render_package
from flarekit_generator.source import load_documents

USER_CODE = """\
from flarekit_models.example.v1 import Gadget


def serial_of(gadget: Gadget) -> str:
    return gadget.spec.serial
"""


def _crds(rename: bool) -> list[CrdInfo]:
    import yaml

    crds = []
    for name, family, release in FIXTURE_CRDS:
        doc = yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8"))
        if rename and doc["spec"]["names"]["kind"] == "Gadget":
            doc = copy.deepcopy(doc)
            spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            spec["properties"]["serialNumber"] = spec["properties"].pop("serial")
            spec["required"] = ["serialNumber"]
        crds.append(
            parse_crd(doc, family=family, release=release, source_path=f"{SOURCE}/{name}",
                      sha256="0" * 64)
        )  # fmt: skip
    return crds


def _type_check(models: Path, code: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(models)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         "--config-file=", str(code)],
        capture_output=True, text=True, env=env, cwd=code.parent, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_a_renamed_field_fails_type_checking(tmp_path: Path) -> None:
    defs = KubernetesDefinitions.load()
    code = tmp_path / "use_gadget.py"
    code.write_text(USER_CODE, encoding="utf-8")

    before = tmp_path / "before"
    render_package(_crds(rename=False), defs, before, SOURCE)
    checked = _type_check(before, code)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    after = tmp_path / "after"
    render_package(_crds(rename=True), defs, after, SOURCE)
    checked = _type_check(after, code)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert 'use_gadget.py:5: error: "GadgetSpec" has no attribute "serial"' in checked.stdout


# -- the facade itself ---------------------------------------------------------------------------

#: The facade module that reads a RayCluster's worker groups (`from_raycluster`).
FACADE_MODULE = REPO_ROOT / "src" / "flarekit" / "cluster" / "_read.py"
#: Only the facade module is checked; the rest of flarekit is not followed (its names are
#: untyped here), the generated models are.
MYPY_CONFIG = """\
[mypy]
follow_imports = silent
[mypy-flarekit.*]
follow_imports = skip
"""


def _pinned_crds(family: str, kind: str, rename: tuple[str, str] | None) -> list[CrdInfo]:
    """The pinned CRDs of `family` (from the schema cache `make generate` filled), with field
    ``rename[0]`` of `kind`'s spec renamed to ``rename[1]`` in every release and version."""
    crds = []
    for entry in read_lock():
        if entry.family != family:
            continue
        for doc in load_documents(entry, paths.cache_dir()):
            if rename is not None and doc["spec"]["names"]["kind"] == kind:
                doc = copy.deepcopy(doc)
                for version in doc["spec"]["versions"]:
                    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
                    if rename[0] in spec.get("properties", {}):
                        spec["properties"][rename[1]] = spec["properties"].pop(rename[0])
            crds.append(
                parse_crd(doc, family=entry.family, release=entry.tag,
                          source_path=f"{entry.repo}@{entry.tag}:{entry.path}",
                          sha256=entry.sha256)
            )  # fmt: skip
    return crds


def _check_facade(models: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "mypy.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(models)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", f"--config-file={config}",
         str(FACADE_MODULE)],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT / "src", timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_a_renamed_field_fails_type_checking_of_the_facade(tmp_path: Path) -> None:
    """KubeRay renaming ``workerGroupSpecs`` would be caught by mypy in `from_raycluster`,
    which reads the worker groups through the model (``spec.worker_group_specs``)."""
    defs = KubernetesDefinitions.load()
    shown = str(FACADE_MODULE.relative_to(REPO_ROOT / "src"))

    before = tmp_path / "before"
    render_package(_pinned_crds("kuberay", "RayCluster", None), defs, before, "pinned")
    checked = _check_facade(before, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    after = tmp_path / "after"
    renamed = ("workerGroupSpecs", "workerGroups")
    render_package(_pinned_crds("kuberay", "RayCluster", renamed), defs, after, "pinned")
    checked = _check_facade(after, tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    errors = [line for line in checked.stdout.splitlines() if ": error: " in line]
    assert errors, checked.stdout
    assert all(line.startswith(shown + ":") for line in errors), errors
    assert any(
        '"RayClusterSpec" has no attribute "worker_group_specs"' in line for line in errors
    ), errors
