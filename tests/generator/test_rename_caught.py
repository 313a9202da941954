"""Why the facade reads models, not dicts: an upstream rename becomes a type error.

A fixture CRD is generated, code that reads one of its fields as an attribute type-checks;
the field is renamed in the CRD (as an operator might between releases), the models are
generated again, and the type checker now fails on that very line, naming the field. The
same read through a dict (``obj["spec"]["serial"]``) would pass the checker and fail, or
silently give nothing, at run time.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
from small_package import FIXTURE_CRDS, FIXTURES, SOURCE

from flarekit_generator.ir import CrdInfo
from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.parse import parse_crd
from flarekit_generator.pipeline import render_package

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
