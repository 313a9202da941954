"""Golden snapshots of what the generator writes for the small fixture CRDs.

The snapshots under ``golden/`` are the generated model modules of the fixture
group (``flarekit_models/example/...``), the resource registry and the
per-release field table, stored as ``.txt``/``.json`` so that no tool imports
them. After an intended change to the generator, regenerate them with::

    FLAREKIT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/generator/test_golden.py

and review the diff as a user of the models would before committing it.

The other tests here read the generated text for things a snapshot would only
freeze, not judge: determinism, and what a reader of the code must be told.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from small_package import generate

from flarekit_generator import __version__
from flarekit_generator.k8s_types import KubernetesDefinitions

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("FLAREKIT_UPDATE_GOLDEN") == "1"


def _normalise(text: str) -> str:
    # The generator's own version is not part of what the snapshot judges.
    return text.replace(f"flarekit-generator {__version__};", "flarekit-generator <version>;")


def snapshot(package: Path) -> dict[str, str]:
    """Golden file name -> expected text, for the files the snapshots cover."""
    out: dict[str, str] = {}
    for path in sorted((package / "example").rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        out[f"{relative}.txt"] = _normalise(path.read_text(encoding="utf-8"))
    out["_registry.py.txt"] = _normalise((package / "_registry.py").read_text(encoding="utf-8"))
    fields = json.loads(gzip.decompress((package / "_data" / "fields.json.gz").read_bytes()))
    out["_data/fields.json"] = json.dumps(fields, indent=1, sort_keys=True) + "\n"
    return out


def _stored() -> dict[str, str]:
    return {
        path.relative_to(GOLDEN).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(GOLDEN.rglob("*"))
        if path.is_file()
    }


def class_body(package: Path, file: str, name: str) -> str:
    """The source of one generated class (up to the next class)."""
    text = (package / file).read_text(encoding="utf-8")
    start = re.search(rf"\nclass {name}\(", text)
    assert start is not None, f"{file} has no class {name}"
    return text[start.start() :].split("\n\n\nclass ", 1)[0]


def field_source(body: str, attr: str) -> tuple[str, str]:
    """(annotation and assignment, docstring) of one attribute in a class body."""
    found = re.search(rf"\n    {attr}: (.*?)\n(?:    \"\"\"(.*?)\"\"\"\n)?(?:\n|$)", body, re.S)
    assert found is not None, f"no attribute {attr}"
    return " ".join(found.group(1).split()), found.group(2) or ""


def test_generated_files_match_golden(small_package: Path) -> None:
    actual = snapshot(small_package)
    if UPDATE:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for name, text in actual.items():
            (GOLDEN / name).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / name).write_text(text, encoding="utf-8")
    stored = _stored()
    assert sorted(actual) == sorted(stored), "set FLAREKIT_UPDATE_GOLDEN=1 to regenerate"
    changed = [name for name in actual if actual[name] != stored[name]]
    assert not changed, f"generated output differs from golden/ for {changed}"


def test_generation_is_deterministic(
    small_package: Path, tmp_path: Path, k8s_defs: KubernetesDefinitions
) -> None:
    again = generate(tmp_path, k8s_defs)
    first = {p.relative_to(small_package): p.read_bytes() for p in _files(small_package)}
    second = {p.relative_to(again): p.read_bytes() for p in _files(again)}
    assert sorted(first) == sorted(second)
    assert [name for name in first if first[name] != second[name]] == []


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


WIDGET_TYPES = "example/v1/_widget_types.py"


@pytest.mark.parametrize(("attr", "default"), [("replicas", "``1``"), ("enabled", "``false``")])
def test_defaults_are_documented_not_assigned(small_package: Path, attr: str, default: str) -> None:
    annotation, doc = field_source(class_body(small_package, WIDGET_TYPES, "WidgetSpec"), attr)
    assert annotation.endswith("| None = None"), annotation
    assert f"Server default: {default}." in doc


def test_cel_rules_are_in_the_class_docstring(small_package: Path) -> None:
    body = class_body(small_package, WIDGET_TYPES, "WidgetSpec")
    assert "Server-side validation rules (CEL, checked by the API server only)" in body
    assert "- ``self.minReplicas <= self.replicas  (minReplicas must not exceed replicas)``" in body
    root = class_body(small_package, "example/v1/_widget.py", "Widget")
    assert "``self.metadata.name.size() <= 40  (widget names are at most 40 characters)``" in root


def test_cel_rules_of_fields_are_documented(small_package: Path) -> None:
    spec = class_body(small_package, WIDGET_TYPES, "WidgetSpec")
    assert "!self.startsWith('tmp-')" in field_source(spec, "name")[1]
    assert "names starting with tmp- are reserved" in field_source(spec, "name")[1]
    assert "self.all(t, t.size() <= 10)" in field_source(spec, "tags")[1]


def test_deprecated_version_says_so(small_package: Path) -> None:
    doc = class_body(small_package, "example/v1beta1/_widget.py", "Widget")
    assert "deprecated" in doc.lower()
    assert "example.flarekit.dev/v1beta1 Widget is deprecated; use v1" in doc


def test_list_and_map_types_are_documented(small_package: Path) -> None:
    spec = class_body(small_package, WIDGET_TYPES, "WidgetSpec")
    ports = field_source(spec, "ports")[1]
    assert "keyed by ``name``" in ports
    assert "set" in field_source(spec, "tags")[1].lower()
    assert "atomic" in field_source(spec, "selector")[1].lower()


def test_generated_imports_are_sorted(small_package: Path) -> None:
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I"]
    result = subprocess.run(
        [*command, "--output-format", "concise", str(small_package / "example")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout
