"""Sample objects and served CRD schemas for the conversion tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit_models._crds import crds_for
from flarekit_models._registry import lookup
from flarekit_testing.apiserver._structural import admit

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples"


def samples(api_version: str, kind: str) -> list[Path]:
    """The sample files of one apiVersion/kind, sorted (empty if none are present)."""
    return sorted((SAMPLES / api_version / kind).glob("*.yaml"))


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def sample_params(api_version: str, kind: str) -> list[Any]:
    """pytest params (id: the file name) for every sample of a kind."""
    return [pytest.param(path, id=path.stem) for path in samples(api_version, kind)]


@cache
def served_schema(api_version: str, kind: str) -> dict[str, Any]:
    """The openAPIV3Schema of the newest pinned release serving ``api_version`` ``kind``."""
    info = lookup(api_version, kind)
    family, tag = info.served_by[-1].split("@")
    for crd in crds_for({family: tag}):
        spec = crd["spec"]
        if spec["group"] == info.group and spec["names"]["kind"] == kind:
            for version in spec["versions"]:
                if version["name"] == info.version:
                    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
                    return schema
    raise LookupError(f"{api_version} {kind} is not served by {family}@{tag}")


def assert_admitted(obj: dict[str, Any]) -> None:
    """The object passes the served CRD schema as is: no causes, nothing pruned."""
    result = admit(obj, served_schema(obj["apiVersion"], obj["kind"]))
    assert result.causes == [], [str(c) for c in result.causes]
    assert result.unknown_fields == []
