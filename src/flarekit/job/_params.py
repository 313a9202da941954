"""Checks of the parameters that several kinds of job take alike: a command as a list of
strings, environment variables, and torchrun's ``-j`` and mount specifications."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from flarekit._json import JsonValue
from flarekit._validation import ValidationReport, check_dns1123_subdomain
from flarekit_models.core import v1 as core_v1

__all__ = ["check_env", "check_strings", "check_working_dir", "parse_j", "parse_mount"]

_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_J = re.compile(r"(?P<nodes>-?[0-9]+)x(?P<procs>-?[0-9]+)|(?P<single>-?[0-9]+)")


def check_strings(report: ValidationReport, field: str, value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        report.add(field, value, "expected a list of strings", "e.g. ['python', 'train.py']")
        return []
    bad = [i for i, v in enumerate(value) if not isinstance(v, str)]
    for i in bad:
        report.add(f"{field}[{i}]", value[i], "expected a string", "a string")
    return [] if bad else list(value)


def check_env(report: ValidationReport, field: str, value: object) -> dict[str, str]:
    """Environment variables as {name: value}, both strings."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        report.add(field, value, "expected a dict", "a dict of variable names to string values")
        return {}
    for key, item in value.items():
        where = f"{field}[{key!r}]"
        if not isinstance(key, str) or not _ENV_NAME.fullmatch(key):
            report.add(where, key, "not a variable name", "letters, digits, '_', '-', '.'")
        if not isinstance(item, str):
            report.add(
                where, item, f"expected a string, got {type(item).__name__}", f"{str(item)!r}"
            )
    return {str(k): str(v) for k, v in value.items()}


def parse_j(report: ValidationReport, value: object) -> tuple[int, int]:
    """TorchX's ``j``: ``"NxM"`` (nodes x processes per node) or ``"M"`` (one node)."""
    expected = "'NxM' with N nodes and M processes per node, both >= 1 (e.g. '2x8'), or 'M'"
    match = _J.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        report.add("j", value, "not of the form NxM", expected)
        return 1, 1
    nodes = int(match["nodes"] or 1)
    procs = int(match["procs"] or match["single"])
    if nodes < 1 or procs < 1:
        report.add("j", value, "nodes and processes per node must be at least 1", expected)
        return 1, 1
    return nodes, procs


def parse_mount(
    report: ValidationReport, field: str, value: object
) -> tuple[core_v1.Volume, core_v1.VolumeMount] | None:
    """A (volume, volumeMount) pair from ``"type=volume,src=pvc,dst=/data[,readonly]"`` or
    ``{"type": "bind", "src": "/host", "dst": "/data", "readonly": True}``."""
    expected = (
        "'type=volume,src=<pvc>,dst=<path>' or 'type=bind,src=<host path>,dst=<path>' "
        "(optionally ',readonly'), or a dict with type, src, dst, readonly"
    )
    if isinstance(value, str):
        parts: dict[str, JsonValue] = {}
        for item in value.split(","):
            key, sep, text = item.strip().partition("=")
            parts[key] = text if sep else True
    elif isinstance(value, Mapping):
        parts = {str(k): v for k, v in value.items()}
    else:
        report.add(field, value, "not a mount", expected)
        return None
    kind, src, dst = parts.get("type"), parts.get("src"), parts.get("dst")
    unknown = set(parts) - {"type", "src", "dst", "readonly"}
    if kind not in ("volume", "bind") or not src or not isinstance(dst, str) or unknown:
        why = f"unknown keys {sorted(unknown)}" if unknown else "needs type volume|bind, src, dst"
        report.add(field, value, why, expected)
        return None
    if not dst.startswith("/"):
        report.add(field, value, "dst is not an absolute path", "a dst such as '/data'")
        return None

    name = "mount-" + re.sub(r"[^a-z0-9]+", "-", str(src).lower()).strip("-")[:50]
    volume = core_v1.Volume(name=name)
    if kind == "volume":
        if not check_dns1123_subdomain(report, f"{field}.src", src):
            return None
        volume.persistent_volume_claim = core_v1.PersistentVolumeClaimVolumeSource(
            claim_name=str(src)
        )
    else:
        if not str(src).startswith("/"):
            report.add(
                field, value, "a bind src must be an absolute host path", "e.g. src=/mnt/data"
            )
            return None
        volume.host_path = core_v1.HostPathVolumeSource(path=str(src))
    mount = core_v1.VolumeMount(name=name, mount_path=dst)
    if parts.get("readonly") in (True, "true", "True", "1"):
        mount.read_only = True
    return volume, mount


def check_working_dir(report: ValidationReport, value: object, script: str | None) -> str | None:
    """The local folder to ship as the job's working directory, absolute; a relative `script`
    must be in it, so that a wrong folder is found here rather than on the cluster."""
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike):
        report.add("working_dir", value, "expected a path", "a local folder, e.g. '.'")
        return None
    folder = Path(value)
    if not folder.is_dir():
        what = "a file, not a folder" if folder.exists() else "no such folder"
        report.add("working_dir", str(value), what, "a local folder, e.g. '.'")
        return None
    relative = isinstance(script, str) and script.strip() and not Path(script).is_absolute()
    if relative and not (folder / str(script)).is_file():
        report.add(
            "script", script, f"not found in working_dir {str(value)!r}",
            "a path relative to working_dir, or an absolute path on the cluster",
        )  # fmt: skip
    return str(folder.resolve())
