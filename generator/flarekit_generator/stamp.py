"""Whether a generated package is already what the generator would write, without generating.

Why: ``make generate`` runs before every test, benchmark and walkthrough, and a regeneration
costs seconds of CPU even when nothing changed. The output is a function of a few inputs: the
lock file (which pins every CRD file by sha256), the generator's own code and templates, the
runtime modules copied into the package, the package name and family selection, and the
versions of the libraries that shape the text (jinja2 renders it, ruff formats it,
kubernetes-validate supplies the Kubernetes definitions, PyYAML reads the CRDs). The command
line writes a stamp into the package it generated (``.stamp``, a hidden file that imports
never see; wheels are generated afresh without one) with a digest of those inputs and a digest
of every other file written. A later run whose inputs have the same digest, and whose package
on disk still has the recorded files byte for byte, writes nothing.

This module imports only the standard library, so that the check itself costs a few
milliseconds rather than the generator's imports.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterable
from pathlib import Path

__all__ = ["STAMP_NAME", "input_digest", "is_current", "output_digest", "stamp_path", "write_stamp"]

#: Distributions whose version changes the generated text.
_SHAPING_DISTRIBUTIONS = ("jinja2", "kubernetes-validate", "ruff", "PyYAML")
_GENERATOR_DIR = Path(__file__).resolve().parent
_FORMAT = 1


#: The stamp's name inside the generated package.
STAMP_NAME = ".stamp"


def stamp_path(out_dir: Path, package: str) -> Path:
    """Where the stamp of ``package`` written below ``out_dir`` lives."""
    return out_dir.joinpath(*package.split(".")) / STAMP_NAME


def _versions() -> list[str]:
    from importlib import metadata

    found = []
    for name in _SHAPING_DISTRIBUTIONS:
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} missing")
    return found


def _tree_files(root: Path, suffixes: Collection[str] | None = None) -> Iterable[Path]:
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        if suffixes is None or path.suffix in suffixes:
            yield path


def input_digest(
    lock: Path, runtime_dir: Path, package: str, families: Collection[str] | None
) -> str:
    """A digest of everything the generated package is made from."""
    digest = hashlib.sha256(f"stamp format {_FORMAT}\n".encode())
    digest.update(f"package {package}\nfamilies {sorted(families or ['*'])}\n".encode())
    digest.update("\n".join(_versions()).encode())
    sources = [lock, *_tree_files(_GENERATOR_DIR, {".py", ".j2", ".tsv"})]
    sources += _tree_files(runtime_dir, {".py"})
    for path in sources:
        digest.update(f"\n{path.name}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def output_digest(package_dir: Path) -> str:
    """A digest of every file of a generated package (paths and contents)."""
    digest = hashlib.sha256()
    for path in _tree_files(package_dir):
        if path.name == STAMP_NAME and path.parent == package_dir:
            continue
        digest.update(f"{path.relative_to(package_dir).as_posix()}\n".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def is_current(stamp: Path, package_dir: Path, inputs: str) -> bool:
    """Whether the stamp records ``inputs`` and the package still holds what was written."""
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or recorded.get("inputs") != inputs:
        return False
    if not package_dir.is_dir():
        return False
    return bool(recorded.get("output") == output_digest(package_dir))


def write_stamp(stamp: Path, package_dir: Path, inputs: str) -> None:
    """Record ``inputs`` and the package as it is now (written atomically)."""
    record = {"inputs": inputs, "output": output_digest(package_dir)}
    stamp.parent.mkdir(parents=True, exist_ok=True)
    scratch = stamp.with_name(stamp.name + ".tmp")
    scratch.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(scratch, stamp)
