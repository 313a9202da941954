"""The etcd keys of a control plane that has just installed its CRDs, saved for the next start.

Installing the CRDs is most of a ControlPlane's start-up: kube-apiserver decodes, checks and
converts every schema, tracks its managed fields and writes its status conditions, megabytes
of work for the Ray and Kueue CRDs. A later ControlPlane with the same programs and the same
CRDs starts instead from a copy of the keys etcd held at that point, which is what a restarted
kube-apiserver finds in a real cluster: the CRDs are read from storage and served as they
were. Nothing is simulated; the cache only skips repeating the installation.

The copy is taken and put back through etcd's own JSON gateway (`/v3/kv/range`,
`/v3/kv/txn`), so no extra program is needed. Keys that belong to one run are left out:
leases (API server identity, node heartbeats), events, and the `kube-root-ca.crt`
ConfigMaps, which carry that run's certificate authority and which the controller-manager
publishes again for the new one.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flarekit_testing.controlplane._assets import cache_root

#: Raised with every change to what is saved or how, so that old copies are not read.
FORMAT = 1

_PER_RUN_PREFIXES = (b"/registry/leases/", b"/registry/events/", b"/registry/masterleases/")
_PER_RUN_SUFFIXES = (b"/kube-root-ca.crt",)

#: etcd refuses requests above 1.5 MiB by default; puts are grouped below that.
_BATCH_BYTES = 1_000_000
_BATCH_OPS = 100


def state_path(programs: Sequence[Path], crds: Iterable[Mapping[str, Any]]) -> Path:
    """Where the saved keys of this set of programs and CRDs live in the cache.

    The key covers each program's identity (path, size, modification time: a rebuilt
    kube-apiserver may store objects differently) and the exact CRDs in a canonical form.
    """
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    for program in programs:
        stat = program.resolve().stat()
        digest.update(f"{program.resolve()} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    canonical = sorted(json.dumps(crd, sort_keys=True, separators=(",", ":")) for crd in crds)
    for text in canonical:
        digest.update(text.encode())
        digest.update(b"\n")
    return cache_root() / "controlplane-state" / f"{digest.hexdigest()[:24]}.json"


def _call(etcd_url: str, path: str, body: Mapping[str, Any], timeout: float) -> Any:
    request = urllib.request.Request(
        f"{etcd_url}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read())


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _kept(key: bytes) -> bool:
    return not (key.startswith(_PER_RUN_PREFIXES) or key.endswith(_PER_RUN_SUFFIXES))


def save(etcd_url: str, path: Path, timeout: float = 30.0) -> int:
    """Copy every key of the running etcd except the per-run ones into ``path``.

    Written to a temporary file first and renamed, so a reader never sees half a copy and
    two control planes saving the same state at once do no harm. Returns the number of keys.
    """
    answer = _call(
        etcd_url, "/v3/kv/range", {"key": _b64(b"\0"), "range_end": _b64(b"\0")}, timeout
    )
    pairs = [
        {"key": kv["key"], "value": kv.get("value", "")}
        for kv in answer.get("kvs", [])
        if _kept(base64.b64decode(kv["key"]))
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".saving-", suffix=".json")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump({"format": FORMAT, "kvs": pairs}, out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return len(pairs)


def load(etcd_url: str, path: Path, timeout: float = 30.0) -> int | None:
    """Put the keys saved in ``path`` into an empty etcd; ``None`` when there is no usable
    copy (missing, unreadable, or of another format). Returns the number of keys."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        return None
    pairs = saved.get("kvs")
    if not isinstance(pairs, list) or not all(
        isinstance(p, dict) and isinstance(p.get("key"), str) and isinstance(p.get("value"), str)
        for p in pairs
    ):
        return None
    batch: list[dict[str, Any]] = []
    size = 0
    for pair in pairs:
        put = {"request_put": {"key": pair["key"], "value": pair["value"]}}
        weight = len(pair["key"]) + len(pair["value"])
        if batch and (size + weight > _BATCH_BYTES or len(batch) >= _BATCH_OPS):
            _call(etcd_url, "/v3/kv/txn", {"success": batch}, timeout)
            batch, size = [], 0
        batch.append(put)
        size += weight
    if batch:
        _call(etcd_url, "/v3/kv/txn", {"success": batch}, timeout)
    return len(pairs)
