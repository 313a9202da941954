"""The per-release field table: which pinned release declares which field of a kind.

Several releases pin the same API version; models are generated from the
newest, and this table records, for every path, the releases that have it.
Paths stop where the newest schema embeds a Kubernetes type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit_generator.catalog import Catalog, release_key


def schema_paths(raw: Mapping[str, Any], stops: set[str], path: str = "") -> list[str]:
    """Every property path of a raw schema; ``[]`` marks list items, ``{}`` map values."""
    out: list[str] = []
    if path and path in stops:
        return out
    for name, child in (raw.get("properties") or {}).items():
        child_path = f"{path}.{name}" if path else name
        out.append(child_path)
        out += schema_paths(child, stops, child_path)
    items = raw.get("items")
    if isinstance(items, Mapping):
        out += schema_paths(items, stops, path + "[]")
    values = raw.get("additionalProperties")
    if isinstance(values, Mapping):
        out += schema_paths(values, stops, path + "{}")
    return out


def build_field_table(
    catalog: Catalog, core_paths: Mapping[tuple[str, str, str], set[str]]
) -> dict[str, Any]:
    """``{"releases": [...], "kinds": {"<apiVersion> <Kind>": {path: release bitmask}}}``."""
    releases = sorted(
        {crd.release_id for crd in catalog.crds},
        key=lambda r: (r.split("@")[0], release_key(r.split("@")[1])),
    )
    index = {r: i for i, r in enumerate(releases)}
    kinds: dict[str, dict[str, int]] = {}
    for key, kv in sorted(catalog.kinds.items()):
        stops = core_paths.get(key, set())
        table: dict[str, int] = {}
        for crd, version in kv.releases:
            bit = 1 << index[crd.release_id]
            for path in schema_paths(version.raw_schema, stops):
                table[path] = table.get(path, 0) | bit
        kinds[f"{kv.api_version} {kv.kind}"] = dict(sorted(table.items()))
    return {"releases": releases, "kinds": kinds}
