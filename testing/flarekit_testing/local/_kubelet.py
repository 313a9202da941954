"""Local execution: the pods of a simulated operator run as processes on this machine.

Why: a data scientist wants to see `TrainJob(func=train)` train for real on a laptop, through
the same Kubernetes objects it would create on a cluster (so the code that submits, waits,
reads logs and events is the code that will run there), as the Kubeflow SDK's local backend
does but without leaving the Kubernetes API. A simulated operator given ``local=True`` makes
its pods as the real one would, and this kubelet runs each pod's first container:

- the argv is the container's ``command`` + ``args`` with ``$(VAR)`` references expanded as
  the kubelet expands them; ``python`` / ``python3`` is this interpreter (`sys.executable`),
  other programs are looked up on ``PATH``. A container without a command would run its
  image's entrypoint, which a local process cannot: such a pod fails, saying so.
- the environment is this process's, then what the kubelet sets (``HOSTNAME``, the API
  server's address in ``KUBERNETES_SERVICE_HOST`` / ``_PORT``), then the container's ``env``
  (literal values, and the downward API's ``fieldRef``: name, namespace, uid, node name,
  pod IP, service account, labels and annotations); secret and ConfigMap key references are
  read from the cluster.
- the pod has a root directory of its own (a temporary directory); volumes (``configMap``,
  ``secret``, ``emptyDir``) are written under it at their mount paths, the ``workingDir`` is
  made there too, and every argv element and variable that names a mounted path or the
  working dir is rewritten to the local directory (a process cannot see ``/opt/...``
  otherwise). Host names of pods this kubelet runs (``<hostname>.<subdomain>...``) are
  rewritten to ``127.0.0.1``.
- stdout and stderr become the container's log, line by line as they are written; the exit
  code becomes the pod's phase (0: ``Succeeded``, else ``Failed``, with the exit code).
- deleting the pod (or its owner) kills the process group.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

JSON = dict[str, Any]
PodKey = tuple[str, str]

__all__ = ["LocalKubelet"]

_REFERENCE = re.compile(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)|\$\$")
_PYTHONS = ("python", "python3")


class LocalKubelet:
    """Runs pods as local processes (see the module notes); one per simulated operator."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self._root = Path(root) if root is not None else None
        self._made_root: Path | None = None
        self._processes: dict[PodKey, subprocess.Popen[bytes]] = {}
        self._hosts: set[str] = set()
        self._lock = threading.Lock()

    # -- running --------------------------------------------------------------------------------

    def run(self, cluster: FakeCluster, pod: JSON) -> None:
        """Start the pod's first container as a process; its end finishes the pod."""
        meta = pod["metadata"]
        key = (str(meta["namespace"]), str(meta["name"]))
        with self._lock:
            if key in self._processes:
                return
        spec = pod.get("spec") or {}
        containers = spec.get("containers") or []
        container = containers[0] if containers else {}
        name = str(container.get("name") or "main")
        self._remember_host(pod)
        try:
            root = self._pod_root(key)
            mounts = self._mount_volumes(cluster, pod, container, root)
            workdir = self._local_path(str(container.get("workingDir") or "/"), root, mounts)
            workdir.mkdir(parents=True, exist_ok=True)
            env = self._environment(cluster, pod, container, root, mounts)
            argv = self._argv(container, env, root, mounts)
        except LocalRunError as exc:
            cluster.append_log(*key, f"local execution: {exc}\n", name)
            cluster.finish_pod(*key, "Failed", 128)
            return
        process = subprocess.Popen(  # the pod's own command, run on purpose
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with self._lock:
            self._processes[key] = process
        threading.Thread(
            target=self._pump, args=(cluster, key, name, process), daemon=True,
            name=f"local-pod-{key[1]}",
        ).start()  # fmt: skip

    def _pump(
        self, cluster: FakeCluster, key: PodKey, container: str, process: subprocess.Popen[bytes]
    ) -> None:
        """Copy the process's output into the pod's log, then end the pod with its code."""
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            try:
                cluster.append_log(*key, raw.decode("utf-8", "replace"), container)
            except ValueError:
                break  # the pod is gone
        code = process.wait()
        with self._lock:
            killed = self._processes.pop(key, None) is None
        if killed:
            return
        try:
            cluster.finish_pod(*key, "Succeeded" if code == 0 else "Failed", code)
        except ValueError:
            return  # deleted meanwhile

    def kill(self, namespace: str, name: str) -> None:
        """End the pod's process group (the pod was deleted); its root directory goes too."""
        with self._lock:
            process = self._processes.pop((namespace, name), None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if self._made_root is not None:
            shutil.rmtree(self._made_root / namespace / name, ignore_errors=True)

    def running(self) -> list[PodKey]:
        with self._lock:
            return sorted(k for k, p in self._processes.items() if p.poll() is None)

    def close(self) -> None:
        """Kill every process still running and remove the directories made here."""
        for key in list(self._processes):
            self.kill(*key)
        if self._made_root is not None:
            shutil.rmtree(self._made_root, ignore_errors=True)
            self._made_root = None

    # -- the pieces of a pod --------------------------------------------------------------------

    def _pod_root(self, key: PodKey) -> Path:
        if self._root is None and self._made_root is None:
            self._made_root = Path(tempfile.mkdtemp(prefix="flarekit-local-pods-"))
        base = self._root if self._root is not None else self._made_root
        assert base is not None
        root = base / key[0] / key[1]
        root.mkdir(parents=True, exist_ok=True)
        return root

    def _remember_host(self, pod: JSON) -> None:
        spec = pod.get("spec") or {}
        hostname, subdomain = spec.get("hostname"), spec.get("subdomain")
        if hostname and subdomain:
            namespace = pod["metadata"]["namespace"]
            base = f"{hostname}.{subdomain}"
            with self._lock:
                self._hosts |= {
                    base, f"{base}.{namespace}", f"{base}.{namespace}.svc",
                    f"{base}.{namespace}.svc.cluster.local",
                }  # fmt: skip

    def _mount_volumes(
        self, cluster: FakeCluster, pod: JSON, container: Mapping[str, Any], root: Path
    ) -> dict[str, Path]:
        """Write the container's volumes under `root`; {mount path: local directory}."""
        namespace = pod["metadata"]["namespace"]
        volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
        mounts: dict[str, Path] = {}
        for mount in container.get("volumeMounts") or []:
            path = str(mount.get("mountPath") or "")
            volume = volumes.get(mount.get("name"))
            if not path.startswith("/") or volume is None:
                continue
            local = root / path.lstrip("/")
            local.mkdir(parents=True, exist_ok=True)
            if "configMap" in volume or "secret" in volume:
                self._write_keys(cluster, namespace, volume, local)
            elif "projected" in volume:
                self._write_projected(cluster, pod, volume["projected"] or {}, local)
            elif "emptyDir" not in volume:
                kinds = ", ".join(k for k in volume if k != "name")
                raise LocalRunError(
                    f"volume {volume.get('name')!r} ({kinds}) cannot be mounted by a local "
                    "process; configMap, secret, projected and emptyDir volumes can"
                )
            mounts[path.rstrip("/") or "/"] = local
        return mounts

    def _write_projected(
        self, cluster: FakeCluster, pod: JSON, projected: Mapping[str, Any], local: Path
    ) -> None:
        """A projected volume (the service account volume every pod gets): its ConfigMaps,
        Secrets and downward API items, and as the token the cluster's own token (this
        cluster's API accepts it; a kubelet would ask for one bound to the pod)."""
        namespace = pod["metadata"]["namespace"]
        for source in projected.get("sources") or []:
            if "configMap" in source or "secret" in source:
                self._write_keys(cluster, namespace, source, local)
            elif "serviceAccountToken" in source:
                path = str((source["serviceAccountToken"] or {}).get("path") or "token")
                (local / path).write_text(cluster.token)
            elif "downwardAPI" in source:
                for item in (source["downwardAPI"] or {}).get("items") or []:
                    value = self._value_from(cluster, pod, item, str(item.get("path")))
                    (local / str(item.get("path"))).write_text(value or "")

    def _write_keys(
        self, cluster: FakeCluster, namespace: str, volume: Mapping[str, Any], local: Path
    ) -> None:
        import base64

        if "configMap" in volume:
            source, resource, name_key = volume["configMap"] or {}, "configmaps", "name"
        else:
            source, resource, name_key = volume["secret"] or {}, "secrets", "secretName"
        obj = cluster.get(resource, str(source.get(name_key)), namespace)
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

    def _local_path(self, path: str, root: Path, mounts: Mapping[str, Path]) -> Path:
        for mounted in sorted(mounts, key=len, reverse=True):
            if path == mounted or path.startswith(mounted.rstrip("/") + "/"):
                return mounts[mounted] / path[len(mounted) :].lstrip("/")
        return root / path.lstrip("/")

    def _translate(self, value: str, root: Path, mounts: Mapping[str, Path], workdir: str) -> str:
        """A value as the local process must see it: mounted paths and the working dir
        under the pod's root, host names of local pods as 127.0.0.1."""
        with self._lock:
            hosts = set(self._hosts)
        if value in hosts:
            return "127.0.0.1"
        out = []
        for part in value.split(os.pathsep) if os.pathsep in value else [value]:
            prefixes = [*mounts, *([workdir] if workdir not in ("", "/") else [])]
            hit = next(
                (p for p in sorted(prefixes, key=len, reverse=True)
                 if part == p or part.startswith(p.rstrip("/") + "/")),
                None,
            )  # fmt: skip
            out.append(str(self._local_path(part, root, mounts)) if hit is not None else part)
        return os.pathsep.join(out)

    def _environment(
        self,
        cluster: FakeCluster,
        pod: JSON,
        container: Mapping[str, Any],
        root: Path,
        mounts: Mapping[str, Path],
    ) -> dict[str, str]:
        meta = pod["metadata"]
        host, _, port = cluster.url.partition("://")[2].partition(":")
        env = dict(os.environ)
        env.update(
            HOSTNAME=str(meta["name"]),
            KUBERNETES_SERVICE_HOST=host,
            KUBERNETES_SERVICE_PORT=port.rstrip("/"),
        )
        workdir = str(container.get("workingDir") or "")
        for item in container.get("env") or []:
            name = str(item.get("name"))
            value: str | None
            if "value" in item:
                value = _expand(str(item.get("value") or ""), env)
            else:
                value = self._value_from(cluster, pod, item.get("valueFrom") or {}, name)
            if value is not None:
                env[name] = self._translate(value, root, mounts, workdir)
        return env

    def _value_from(
        self, cluster: FakeCluster, pod: JSON, source: Mapping[str, Any], name: str
    ) -> str | None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
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
            obj = cluster.get(resource, str(ref.get("name")), meta["namespace"]) or {}
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
                import base64

                value = base64.b64decode(value).decode("utf-8", "replace")
            return value
        if "resourceFieldRef" in source:
            return None  # limits: the local machine has no such bound
        raise LocalRunError(f"env {name}: valueFrom {sorted(source)} is not supported locally")

    def _argv(
        self,
        container: Mapping[str, Any],
        env: Mapping[str, str],
        root: Path,
        mounts: Mapping[str, Path],
    ) -> list[str]:
        command = [str(c) for c in container.get("command") or []]
        if not command:
            raise LocalRunError(
                f"container {container.get('name')!r} has no command: it would run the "
                f"entrypoint of image {container.get('image')!r}, which cannot run as a local "
                "process; give the job a command (or a function)"
            )
        workdir = str(container.get("workingDir") or "")
        argv = [
            self._translate(_expand(str(a), env), root, mounts, workdir)
            for a in [*command, *(container.get("args") or [])]
        ]
        if argv[0] in _PYTHONS:
            argv[0] = sys.executable
        elif shutil.which(argv[0], path=env.get("PATH")) is None:
            raise LocalRunError(f"{argv[0]!r} is not installed on this machine (not on PATH)")
        return argv


class LocalRunError(RuntimeError):
    """A pod cannot run as a local process; the message says why (it goes to its log)."""


def _expand(value: str, env: Mapping[str, str]) -> str:
    """``$(VAR)`` as the kubelet expands it (unknown references stay, ``$$`` is ``$``)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _REFERENCE.sub(one, value)
