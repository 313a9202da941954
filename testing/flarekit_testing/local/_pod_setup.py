"""What a local pod's process gets: its folder with the pod's volumes, its environment, its
command line, with what names a place inside a cluster rewritten to the place on this machine.

- **Volumes**: ``configMap``, ``secret``, ``projected`` (the service account token is the
  cluster's own token) and ``emptyDir`` volumes are written under the pod's own folder at
  their mount paths; other volume kinds cannot be mounted by a process and make the pod fail,
  saying so.
- **Environment**: this process's, then what the kubelet sets (``HOSTNAME``, the API server in
  ``KUBERNETES_SERVICE_HOST`` / ``_PORT``), then the container's ``env``: literal values with
  ``$(VAR)`` references expanded as the kubelet expands them, and ``valueFrom`` (the downward
  API's ``fieldRef``, ConfigMap and Secret keys).
- **Command**: ``command`` + ``args`` expanded the same way; ``python`` is this interpreter,
  ``torchrun`` and ``ray`` run by it, others are looked up on ``PATH``.
- **Places**: a path under a mount or the working dir points into the pod's folder; the name
  of a pod this machine runs (``<hostname>.<subdomain>...``, a training-operator replica's
  ``<job>-master-0``) is ``127.0.0.1``; a local Ray cluster's head Service and its ports are
  the local head's (`LocalRay.translate`); and a job's rendezvous port (``MASTER_PORT``,
  ``PET_MASTER_PORT`` beside a local master address) is a free local port shared by every
  pod of that job, since here all ranks share one address.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flarekit_testing.local._ray import LocalRay, free_port

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["LocalRunError", "PodSetup"]

JSON = dict[str, Any]
_REFERENCE = re.compile(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)|\$\$")
_ADDRESS = re.compile(r"(?<![\w.-])([a-z0-9]([-a-z0-9.]*[a-z0-9])?):(\d{1,5})(?!\d)")
_PYTHONS = ("python", "python3")
_RUN_BY_PYTHON = {"torchrun": ["-m", "torch.distributed.run"], "ray": ["-m", "ray.scripts.scripts"]}
#: (address variable, port variable) pairs a distributed job's pods share.
_MASTERS = (("PET_MASTER_ADDR", "PET_MASTER_PORT"), ("MASTER_ADDR", "MASTER_PORT"))


class LocalRunError(RuntimeError):
    """A pod cannot run as a local process; the message says why (it goes to its log)."""


def expand(value: str, env: Mapping[str, str]) -> str:
    """``$(VAR)`` as the kubelet expands it (unknown references stay, ``$$`` is ``$``)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _REFERENCE.sub(one, value)


class PodSetup:
    """Builds one pod's folder, environment and command line."""

    def __init__(
        self, cluster: FakeCluster, pod: JSON, root: Path, ray: LocalRay, ports: dict[Any, int]
    ) -> None:
        self.cluster, self.pod, self.root, self.ray = cluster, pod, root, ray
        self.namespace = str(pod["metadata"]["namespace"])
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        self.container: Mapping[str, Any] = containers[0]
        self._ports = ports  # shared by the kubelet: (namespace, host, port) -> local port
        self.mounts: dict[str, Path] = {}

    # -- places ---------------------------------------------------------------------------------

    def local_host(self, host: str) -> bool:
        """Whether `host` names a pod of this namespace (its hostname and subdomain, or its
        name: a training-operator replica's Service is named like its pod)."""
        parts = host.split(".")
        if not parts[0] or (len(parts) > 2 and parts[2] != self.namespace):
            return False
        for pod in self.cluster.objects("pods", self.namespace):
            spec = pod.get("spec") or {}
            if len(parts) >= 2 and (spec.get("hostname"), spec.get("subdomain")) == tuple(
                parts[:2]
            ):
                return True
            if pod["metadata"]["name"] == parts[0] and (
                len(parts) == 1 or parts[1] == self.namespace
            ):
                return True
        return False

    def _address(self, host: str, port: int) -> tuple[str, int] | None:
        found = self.ray.translate(self.namespace, host, port)
        if found is not None:
            return found
        if self.local_host(host):
            return "127.0.0.1", self._ports.get((self.namespace, host, port), port)
        return None

    def _local_path(self, path: str) -> Path:
        for mounted in sorted(self.mounts, key=len, reverse=True):
            if path == mounted or path.startswith(mounted.rstrip("/") + "/"):
                return self.mounts[mounted] / path[len(mounted) :].lstrip("/")
        return self.root / path.lstrip("/")

    def translate(self, value: str) -> str:
        """A value as the local process must see it: mounted paths and the working dir in
        the pod's folder, local pods' names and local clusters' addresses on this machine."""
        if self.local_host(value):
            return "127.0.0.1"

        def address(match: re.Match[str]) -> str:
            found = self._address(match.group(1), int(match.group(3)))
            return f"{found[0]}:{found[1]}" if found is not None else match.group(0)

        value = _ADDRESS.sub(address, value)
        workdir = str(self.container.get("workingDir") or "")
        prefixes = [*self.mounts, *([workdir] if workdir not in ("", "/") else [])]
        out = []
        for part in value.split(os.pathsep) if os.pathsep in value else [value]:
            hit = next(
                (p for p in sorted(prefixes, key=len, reverse=True)
                 if part == p or part.startswith(p.rstrip("/") + "/")),
                None,
            )  # fmt: skip
            out.append(str(self._local_path(part)) if hit is not None else part)
        return os.pathsep.join(out)

    # -- volumes --------------------------------------------------------------------------------

    def mount_volumes(self) -> Path:
        """Write the container's volumes under the pod's folder; returns its working dir."""
        volumes = {v.get("name"): v for v in (self.pod.get("spec") or {}).get("volumes") or []}
        for mount in self.container.get("volumeMounts") or []:
            path = str(mount.get("mountPath") or "")
            volume = volumes.get(mount.get("name"))
            if not path.startswith("/") or volume is None:
                continue
            local = self.root / path.lstrip("/")
            local.mkdir(parents=True, exist_ok=True)
            if "configMap" in volume or "secret" in volume:
                self._write_keys(volume, local)
            elif "projected" in volume:
                self._write_projected(volume["projected"] or {}, local)
            elif "emptyDir" not in volume:
                kinds = ", ".join(k for k in volume if k != "name")
                raise LocalRunError(
                    f"volume {volume.get('name')!r} ({kinds}) cannot be mounted by a local "
                    "process; configMap, secret, projected and emptyDir volumes can"
                )
            self.mounts[path.rstrip("/") or "/"] = local
        workdir = self._local_path(str(self.container.get("workingDir") or "/"))
        workdir.mkdir(parents=True, exist_ok=True)
        return workdir

    def _write_projected(self, projected: Mapping[str, Any], local: Path) -> None:
        """A projected volume (the service account volume every pod gets): its ConfigMaps,
        Secrets and downward API items, and as the token the cluster's own token (this
        cluster's API accepts it; a kubelet would ask for one bound to the pod)."""
        for source in projected.get("sources") or []:
            if "configMap" in source or "secret" in source:
                self._write_keys(source, local)
            elif "serviceAccountToken" in source:
                path = str((source["serviceAccountToken"] or {}).get("path") or "token")
                (local / path).write_text(self.cluster.token)
            elif "downwardAPI" in source:
                for item in (source["downwardAPI"] or {}).get("items") or []:
                    value = self._value_from(item, str(item.get("path")))
                    (local / str(item.get("path"))).write_text(value or "")

    def _write_keys(self, volume: Mapping[str, Any], local: Path) -> None:
        if "configMap" in volume:
            source, resource, name_key = volume["configMap"] or {}, "configmaps", "name"
        else:
            source, resource, name_key = volume["secret"] or {}, "secrets", "secretName"
        obj = self.cluster.get(resource, str(source.get(name_key)), self.namespace)
        if obj is None:
            if source.get("optional"):
                return
            raise LocalRunError(f"{resource[:-1]} {source.get(name_key)!r} does not exist")
        data: dict[str, bytes] = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
        if resource == "secrets":
            data = {k: base64.b64decode(v) for k, v in data.items()}
        for key, value in (obj.get("binaryData") or {}).items():
            data[key] = base64.b64decode(value)
        items = source.get("items")
        chosen = [(i["key"], i.get("path") or i["key"]) for i in items] if items else None
        for key, path in chosen or [(k, k) for k in data]:
            if key in data:
                target = local / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data[key])

    # -- environment ----------------------------------------------------------------------------

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        meta = self.pod["metadata"]
        host, _, port = self.cluster.url.partition("://")[2].partition(":")
        # This machine's environment (PATH, HOME, ...) but not its terminal: a container
        # has none, and programs would colour their logs for it.
        env = {k: v for k, v in os.environ.items() if k not in ("TERM", "COLORTERM")}
        env.update(
            HOSTNAME=str(meta["name"]),
            KUBERNETES_SERVICE_HOST=host,
            KUBERNETES_SERVICE_PORT=port.rstrip("/"),
            **(extra or {}),
        )
        raw: dict[str, str] = {}
        for item in self.container.get("env") or []:
            name = str(item.get("name"))
            value: str | None
            if "value" in item:
                value = expand(str(item.get("value") or ""), {**env, **raw})
            else:
                value = self._value_from(item.get("valueFrom") or {}, name)
            if value is not None:
                raw[name] = value
        self._share_master_ports(raw)
        env.update({name: self.translate(value) for name, value in raw.items()})
        return env

    def _share_master_ports(self, raw: dict[str, str]) -> None:
        """One free local port per job rendezvous (address, port), the same for every rank:
        here all ranks share one address, so the port in the spec may be taken."""
        for addr_var, port_var in _MASTERS:
            addr, port = raw.get(addr_var), raw.get(port_var)
            if addr and port and port.isdigit() and self.local_host(addr):
                key = (self.namespace, addr, int(port))
                raw[port_var] = str(self._ports.setdefault(key, free_port()))

    def _value_from(self, source: Mapping[str, Any], name: str) -> str | None:
        meta, spec = self.pod["metadata"], self.pod.get("spec") or {}
        field = (source.get("fieldRef") or {}).get("fieldPath")
        if field is not None:
            known = {
                "metadata.name": meta.get("name"),
                "metadata.namespace": meta.get("namespace"),
                "metadata.uid": meta.get("uid"),
                "spec.nodeName": spec.get("nodeName"),
                "spec.serviceAccountName": spec.get("serviceAccountName"),
                "status.podIP": "127.0.0.1",
                "status.hostIP": "127.0.0.1",
                "status.podIPs": "127.0.0.1",
            }
            found = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", str(field))
            if found:
                return str((meta.get(found.group(1)) or {}).get(found.group(2), ""))
            if field in known:
                return str(known[field] or "")
            raise LocalRunError(f"env {name}: fieldRef {field!r} is not known to the kubelet")
        for kind, resource in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
            ref = source.get(kind)
            if ref is None:
                continue
            obj = self.cluster.get(resource, str(ref.get("name")), self.namespace) or {}
            data = obj.get("data") or {}
            if ref.get("key") not in data:
                if ref.get("optional"):
                    return None
                raise LocalRunError(
                    f"env {name}: key {ref.get('key')!r} of {resource[:-1]} "
                    f"{ref.get('name')!r} does not exist"
                )
            value = str(data[ref["key"]])
            if resource == "secrets":
                value = base64.b64decode(value).decode("utf-8", "replace")
            return value
        if "resourceFieldRef" in source:
            return None  # limits: see _limits for what this machine enforces
        raise LocalRunError(f"env {name}: valueFrom {sorted(source)} is not supported locally")

    # -- command --------------------------------------------------------------------------------

    def argv(self, env: Mapping[str, str], command: list[str] | None = None) -> list[str]:
        """The command line (the container's, or `command`), expanded and made local."""
        if command is None:
            command = [str(c) for c in self.container.get("command") or []]
            if not command:
                raise LocalRunError(
                    f"container {self.container.get('name')!r} has no command: it would run "
                    f"the entrypoint of image {self.container.get('image')!r}"
                )
            command += [str(a) for a in self.container.get("args") or []]
        argv = [self.translate(expand(str(a), env)) for a in command]
        if argv[0] in _PYTHONS:
            return [sys.executable, *argv[1:]]
        if argv[0] in _RUN_BY_PYTHON:
            return [sys.executable, *_RUN_BY_PYTHON[argv[0]], *argv[1:]]
        if shutil.which(argv[0], path=env.get("PATH")) is None:
            raise LocalRunError(f"{argv[0]!r} is not installed on this machine (not on PATH)")
        return argv
