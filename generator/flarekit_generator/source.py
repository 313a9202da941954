"""Read the pinned CRD files from the verified cache, parsing each YAML file once.

Parsing the pinned YAML takes seconds; the parsed documents are kept as JSON
beside the cache, keyed by the file's sha256, so a warm run reads JSON only.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from flarekit_generator.fetch import cached_path
from flarekit_generator.ir import CrdInfo
from flarekit_generator.lockfile import LockEntry
from flarekit_generator.parse import parse_crd


def load_documents(entry: LockEntry, cache_dir: Path) -> list[dict[str, Any]]:
    """The YAML documents of one pinned file (the cache must hold it, verified)."""
    parsed = cache_dir / "parsed" / f"{entry.sha256}.json"
    if parsed.is_file():
        docs: list[dict[str, Any]] = json.loads(parsed.read_text(encoding="utf-8"))
        return docs
    path = cached_path(entry, cache_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"{entry.family}@{entry.tag} {entry.path} is not in the schema cache {cache_dir}; "
            "run `make schemas` first"
        )
    with path.open(encoding="utf-8") as stream:
        docs = [d for d in yaml.load_all(stream, Loader=_loader()) if d]
    parsed.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parsed.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(docs, out, separators=(",", ":"))
    os.replace(tmp, parsed)
    return docs


def _loader() -> type[yaml.SafeLoader]:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def load_crds(entries: list[LockEntry], cache_dir: Path) -> list[CrdInfo]:
    """Every CRD of every pinned file, parsed (schemas are parsed later, on demand)."""
    crds: list[CrdInfo] = []
    for entry in entries:
        for doc in load_documents(entry, cache_dir):
            crds.append(
                parse_crd(
                    doc,
                    family=entry.family,
                    release=entry.tag,
                    source_path=f"{entry.repo}@{entry.tag}:{entry.path}",
                    sha256=entry.sha256,
                )
            )
    return crds
