"""One real Kubernetes node on the test control plane: containerd + runc, the kubelet, the
bridge CNI, kube-proxy and CoreDNS, as kind runs them in a container, here in namespaces that
the control plane makes itself (see `_nodenet`) and a control group of its own (`_cgroups`).

The node's programs:

- containerd and runc are Debian's (`make real-node` installs them), as are the CNI plugins;
- the kubelet and kube-proxy are built from the same `k8s.io/kubernetes` release as the API
  server, CoreDNS from its Go module (`controlplane/node/`, `make real-node`);
- the images are built here from Debian packages and PyPI wheels (`controlplane/images.py`)
  into an image store in the cache, which each start copies with hard links.

`RealNode(host, folder, assets).start()` returns once the node is Ready and its DNS answers;
`stop()` kills every process of the node's control group (containers, shims, containerd, the
kubelet...) and removes the group: with them go the node's namespaces and every mount made
in them. Its folder is the caller's to remove.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

import flarekit.cluster
from flarekit_testing.controlplane import _node_config as config
from flarekit_testing.controlplane._cgroups import NodeCgroup
from flarekit_testing.controlplane._nodenet import NodeNetwork, launcher_argv
from flarekit_testing.controlplane._pki import Authority, KeyPair
from flarekit_testing.controlplane._process import Component, ComponentFailed

JSON = dict[str, Any]

NODE_NAME = "flarekit-node"
#: The node's own address, in its namespace only (kind's nodes get theirs from a 172.18/16
#: network); the pods get 10.244.0.0/24 of the cluster's 10.244.0.0/16.
NODE_ADDRESS = "172.18.0.2"
NODE_PREFIX = 24
POD_SUBNET = "10.244.0.0/24"
POD_GATEWAY = "10.244.0.1"
#: The folders the node's namespace mounts over: the node's folder must not be under them.
_MOUNTED_OVER = (Path("/run"), Path("/var/run"), Path("/var/log"), Path("/var/lib"))


class NodeNotReady(RuntimeError):
    """The real node cannot run here, or is not built (the message says what to do)."""


class NodeHost(Protocol):
    """What the node needs of the control plane it joins."""

    @property
    def port(self) -> int: ...

    @property
    def authority(self) -> Authority: ...

    def start_component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component: ...

    def request(self, method: str, path: str, body: Any = None) -> Any: ...

    def wait_for(self, ready: Callable[[], bool], what: str, timeout: float) -> None: ...


@dataclass(frozen=True)
class NodeAssets:
    """The node's programs and its image store."""

    kubelet: Path
    kube_proxy: Path
    coredns: Path
    containerd: Path
    cni_bin_dir: Path
    image_store: Path  # a folder with `root/`: containerd's content and snapshots
    sandbox_image: str
    python_image: str  # the image with Python, Ray and PyTorch, by its name in the store
    ray_version: str  # the Ray release in it


def _cache_root() -> Path:
    explicit = os.environ.get("FLAREKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "flarekit"


def _built(module: str, program: str) -> Path | None:
    pointer = _cache_root() / "go" / f"{module}.current"
    if not pointer.is_file():
        return None
    path = Path(pointer.read_text().strip()) / program
    return path if path.is_file() and os.access(path, os.X_OK) else None


def find_node_assets() -> NodeAssets:
    """The node's programs and images, or `NodeNotReady` saying what is missing."""
    missing: list[str] = []
    if os.geteuid() != 0:
        raise NodeNotReady("a real node needs root (containerd, runc, network namespaces)")
    built = {p: _built(m, p) for m, p in (("kubelet", "kubelet"), ("kubelet", "kube-proxy"))}
    built["coredns"] = _built("coredns", "coredns")
    missing += [f"{name} (`make real-node`)" for name, path in built.items() if path is None]
    tools = {t: shutil.which(t) for t in ("containerd", "runc", "nsenter", "unshare", "ip")}
    tools["iptables"] = shutil.which("iptables")
    missing += [f"{name} (`make real-node` installs it)" for name, p in tools.items() if p is None]
    cni = next(
        (d for d in (Path("/usr/lib/cni"), Path("/opt/cni/bin")) if (d / "bridge").exists()), None
    )
    if cni is None:
        missing.append("the CNI plugins (`make real-node` installs containernetworking-plugins)")
    pointer = _cache_root() / "node" / "images.current"
    store = Path(pointer.read_text().strip()) if pointer.is_file() else None
    if store is None or not (store / ".complete").exists():
        missing.append("the node's images (`make real-node`)")
    if missing:
        raise NodeNotReady("the real node cannot start; missing: " + ", ".join(missing))
    assert store is not None and cni is not None and tools["containerd"] is not None
    images = _images(store)
    return NodeAssets(
        kubelet=built["kubelet"],  # type: ignore[arg-type]
        kube_proxy=built["kube-proxy"],  # type: ignore[arg-type]
        coredns=built["coredns"],  # type: ignore[arg-type]
        containerd=Path(tools["containerd"]),
        cni_bin_dir=cni,
        image_store=store,
        sandbox_image=images["pause"],
        python_image=images["python"],
        ray_version=images["ray_version"],
    )


def _images(store: Path) -> dict[str, str]:
    import json

    try:
        found = json.loads((store / "images.json").read_text())
        return {key: str(found[key]) for key in ("pause", "python", "ray_version")}
    except (OSError, ValueError, KeyError) as exc:
        raise NodeNotReady(
            f"the node's image store {store} says nothing of its images ({exc}): rebuild it "
            "with `make real-node`"
        ) from None


def _copy_store(source: Path, target: Path) -> None:
    """containerd's root from the cache: every file hard-linked (content blobs and unpacked
    layers are never written in place), except the metadata databases, which are copied."""
    subprocess.run(["cp", "-a", "--link", str(source), str(target)], check=True)
    for database in target.rglob("*.db"):
        data = database.read_bytes()
        database.unlink()
        database.write_bytes(data)
        database.chmod(0o600)


def _kubeconfig(path: Path, server: str, ca: Path, pair: KeyPair) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "local", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [
            {
                "name": "node",
                "user": {"client-certificate": str(pair.cert), "client-key": str(pair.key)},
            }
        ],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "node"}}],
        "current-context": "local",
    }
    path.write_text(yaml.safe_dump(document))
    path.chmod(0o600)
    return path


class PlaneHost:
    """A ControlPlane as the node's host (its CA, its direct access, its components)."""

    def __init__(self, plane: Any) -> None:
        self._plane = plane

    @property
    def port(self) -> int:
        return int(self._plane.port)

    @property
    def authority(self) -> Authority:
        authority = self._plane._ca
        assert isinstance(authority, Authority)
        return authority

    def start_component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component:
        component: Component = self._plane.start_component(name, argv, env)
        return component

    def request(self, method: str, path: str, body: Any = None) -> Any:
        return self._plane.rest.request(method, path, body)

    def wait_for(self, ready: Callable[[], bool], what: str, timeout: float) -> None:
        self._plane._wait(ready, what, timeout=timeout)


class RealNode:
    """One real node joined to `host` (see the module's docstring)."""

    NAME = NODE_NAME
    ADDRESS = NODE_ADDRESS

    def __init__(self, host: NodeHost, folder: Path, assets: NodeAssets) -> None:
        resolved = folder.resolve()
        for mounted in _MOUNTED_OVER:
            if resolved.is_relative_to(mounted.resolve()):
                raise NodeNotReady(
                    f"the node's folder {folder} is under {mounted}, which the node's namespace "
                    "mounts over: give the control plane a temporary directory elsewhere (TMPDIR)"
                )
        self.host = host
        self.assets = assets
        self.layout = config.NodeLayout(
            folder=folder,
            name=NODE_NAME,
            address=NODE_ADDRESS,
            prefix_length=NODE_PREFIX,
            pod_subnet=POD_SUBNET,
            pod_gateway=POD_GATEWAY,
            cluster_cidr="10.244.0.0/16",
            cgroup_root=f"/flarekit-node-{uuid.uuid4().hex[:10]}",
        )
        self.cgroup = NodeCgroup(self.layout.cgroup_root.lstrip("/"))
        self.network = NodeNetwork(
            directory=str(folder),
            apiserver_port=host.port,
            node_address=NODE_ADDRESS,
            prefix_length=NODE_PREFIX,
        )
        self._holder_pid: int | None = None
        self.startup_seconds: float | None = None

    @property
    def name(self) -> str:
        return self.layout.name

    @property
    def address(self) -> str:
        return self.layout.address

    @property
    def tunnel_socket(self) -> Path:
        """The HTTP CONNECT proxy into the node's network (the API server's egress)."""
        return self.network.tunnel_socket

    # -- start ----------------------------------------------------------------------------------

    def start(self, image_names: Sequence[str] = (), http_proxy_port: int = 0) -> None:
        """Start the node, its Python image also named `image_names` (what the manifests
        render), with a plain-HTTP proxy into its network on the host's `http_proxy_port` for
        operators that call into the cluster (none when 0). A failure leaves the cleanup to
        `stop()`, which the caller runs."""
        started = time.monotonic()
        layout = self.layout
        for folder in [layout.folder, *layout.folders()]:
            folder.mkdir(parents=True, exist_ok=True)
        self.cgroup.create()
        (layout.folder / "resolv.conf").write_text(config.node_resolv_conf(layout))
        (layout.folder / "resolv-upstream.conf").write_text(config.upstream_resolv_conf())
        if http_proxy_port:
            self.network = NodeNetwork(
                **{**self.network.__dict__, "http_proxy_port": http_proxy_port}
            )
        spec = layout.folder / "network.json"
        self.network.write(spec)
        holder = self._start("node-namespaces", launcher_argv(spec), join_namespaces=False)
        self.host.wait_for(lambda: self._holder_ready(holder), "the node's namespaces", timeout=30)
        self._start_containerd()
        self._name_images(image_names)
        self._create_cluster_objects()
        self._start_kubelet()
        self._start_kube_proxy()
        self._start_coredns()
        self.host.wait_for(self._node_ready, f"node {layout.name} to become Ready", timeout=120)
        self.host.wait_for(self._dns_ready, "the cluster DNS (CoreDNS) to answer", timeout=60)
        self.startup_seconds = time.monotonic() - started

    def _holder_ready(self, holder: Component) -> bool:
        holder.check()
        pid_file = self.network.holder_pid_file
        if not pid_file.exists():
            return False
        text = pid_file.read_text().strip()
        if not text:
            return False
        self._holder_pid = int(text)
        return True

    def _start(self, name: str, argv: list[str], *, join_namespaces: bool = True) -> Component:
        """A program of the node: in the node's control group and, unless it makes them, in
        its namespaces."""
        enter = ""
        if join_namespaces:
            assert self._holder_pid is not None
            enter = f"nsenter --target {self._holder_pid} --net --mount -- "
        script = f'{self.cgroup.join_command()}; exec {enter}"$@"'
        return self.host.start_component(name, ["/bin/sh", "-c", script, "sh", *argv])

    def _start_containerd(self) -> None:
        layout = self.layout
        shutil.rmtree(layout.containerd_root, ignore_errors=True)
        _copy_store(self.assets.image_store / "root", layout.containerd_root)
        toml = layout.folder / "containerd.toml"
        toml.write_text(
            config.containerd_config(layout, self.assets.cni_bin_dir, self.assets.sandbox_image)
        )
        (layout.cni_conf_dir / "10-flarekit-node.conflist").write_text(config.cni_config(layout))
        containerd = self._start("containerd", [str(self.assets.containerd), "--config", str(toml)])

        def listening() -> bool:
            containerd.check()
            return layout.containerd_socket.exists()

        self.host.wait_for(listening, "containerd to listen", timeout=30)

    def ctr(self, *args: str, timeout: float = 60.0) -> str:
        """Run `ctr` against the node's containerd (Kubernetes' namespace); its output."""
        out = subprocess.run(
            [
                "ctr",
                "--address",
                str(self.layout.containerd_socket),
                "--namespace",
                "k8s.io",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            raise ComponentFailed(f"ctr {' '.join(args)} failed: {out.stderr.strip()}")
        return out.stdout

    def _name_images(self, names: Sequence[str]) -> None:
        for name in names:
            self.ctr("images", "tag", "--force", self.assets.python_image, _qualified(name))

    def _certificate(self, stem: str, user: str, groups: tuple[str, ...] = ()) -> Path:
        pair = self.host.authority.client(f"node-{stem}", user, groups)
        return _kubeconfig(
            self.layout.folder / f"{stem}.kubeconfig",
            f"https://127.0.0.1:{self.host.port}",
            self.host.authority.ca_cert,
            pair,
        )

    def _create_cluster_objects(self) -> None:
        for obj in config.cluster_objects(self.layout):
            self.host.request("POST", _collection(obj), obj)

    def _start_kubelet(self) -> None:
        layout = self.layout
        kubeconfig = self._certificate("kubelet", f"system:node:{layout.name}", ("system:nodes",))
        serving = self.host.authority.serving(
            "node-kubelet-serving", (layout.name,), (layout.address,)
        )
        path = layout.folder / "kubelet.yaml"
        path.write_text(
            config.kubelet_config(layout, self.host.authority.ca_cert, serving.cert, serving.key)
        )
        self._start(
            "kubelet",
            [
                str(self.assets.kubelet),
                f"--config={path}",
                f"--kubeconfig={kubeconfig}",
                f"--root-dir={layout.kubelet_dir}",
                f"--cert-dir={layout.kubelet_dir / 'pki'}",
                f"--hostname-override={layout.name}",
                f"--node-ip={layout.address}",
                "--v=1",
            ],
        )

    def _start_kube_proxy(self) -> None:
        kubeconfig = self._certificate("kube-proxy", config.KUBE_PROXY_USER)
        path = self.layout.folder / "kube-proxy.yaml"
        path.write_text(config.kube_proxy_config(self.layout, kubeconfig))
        self._start("kube-proxy", [str(self.assets.kube_proxy), f"--config={path}", "--v=1"])

    def _start_coredns(self) -> None:
        kubeconfig = self._certificate("coredns", config.COREDNS_USER)
        path = self.layout.folder / "Corefile"
        path.write_text(config.corefile(kubeconfig))
        self._start("coredns", [str(self.assets.coredns), "-conf", str(path)])

    # -- readiness ------------------------------------------------------------------------------

    def _node_ready(self) -> bool:
        try:
            node = self.host.request("GET", f"/api/v1/nodes/{self.layout.name}")
        except Exception:
            return False
        return any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (node.get("status") or {}).get("conditions") or []
        )

    def _dns_ready(self) -> bool:
        try:
            status, _body = self.http_get(self.layout.address, 8181, "/ready")
        except OSError:
            return False
        return status == 200

    def http_get(self, host: str, port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
        """A plain HTTP GET to `host:port` inside the node's network, through its tunnel."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(self.tunnel_socket))
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\n\r\n".encode())
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("the node's tunnel closed")
                answer += chunk
            if b" 200 " not in answer.split(b"\r\n", 1)[0] + b" ":
                raise ConnectionError(answer.split(b"\r\n", 1)[0].decode(errors="replace"))
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: flarekit-node\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            data = answer.partition(b"\r\n\r\n")[2]
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), body

    # -- what runs ------------------------------------------------------------------------------

    def containers(self) -> list[str]:
        """The ids of the containers containerd holds for Kubernetes on this node (pods'
        sandboxes included)."""
        if self._holder_pid is None or not self.layout.containerd_socket.exists():
            return []
        return self.ctr("containers", "list", "--quiet").split()

    # -- stop -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Kill every process of the node (its programs, containerd's shims, the containers)
        and remove its control group; its namespaces and their mounts go with them."""
        with contextlib.suppress(ComponentFailed):
            self.cgroup.remove()


def _qualified(name: str) -> str:
    """An image reference as containerd stores it: `rayproject/ray:2.47.1` is
    `docker.io/rayproject/ray:2.47.1`, as the kubelet asks for it."""
    first = name.split("/", 1)[0]
    if "/" not in name:
        return f"docker.io/library/{name}"
    if "." in first or ":" in first or first == "localhost":
        return name
    return f"docker.io/{name}"


def _collection(obj: JSON) -> str:
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    plural = {
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Service": "services",
        "EndpointSlice": "endpointslices",
    }[kind]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    namespace = (obj.get("metadata") or {}).get("namespace")
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


def egress_selector_configuration(tunnel: Path) -> str:
    """The API server's egress to the cluster (kubelets, pods, Services) through the node's
    HTTP CONNECT tunnel: what konnectivity does for clusters whose nodes the control plane
    cannot route to."""
    return yaml.safe_dump(
        {
            "apiVersion": "apiserver.k8s.io/v1beta1",
            "kind": "EgressSelectorConfiguration",
            "egressSelections": [
                {
                    "name": "cluster",
                    "connection": {
                        "proxyProtocol": "HTTPConnect",
                        "transport": {"uds": {"udsName": str(tunnel)}},
                    },
                }
            ],
        }
    )


def image_names(trainer_install: Path | None) -> list[str]:
    """What the node's Python image is also called: the image flarekit renders by default
    for a Ray cluster (`rayproject/ray:<default Ray>`), and the PyTorch images of the Trainer
    runtimes in `trainer_install` (its rendered upstream manifests), when Trainer runs."""
    names = [flarekit.cluster.ClusterConfiguration("node-image").effective_image]
    if trainer_install is not None:
        for document in yaml.safe_load_all(trainer_install.read_text()):
            if not isinstance(document, dict) or not document.get("kind", "").endswith(
                "TrainingRuntime"
            ):
                continue
            for found in _images_in(document):
                if found.startswith("pytorch/pytorch:") and found not in names:
                    names.append(found)
    return names


def _images_in(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [str(value["image"])] if isinstance(value.get("image"), str) else []
        return found + [i for v in value.values() for i in _images_in(v)]
    if isinstance(value, list):
        return [i for v in value for i in _images_in(v)]
    return []
