"""The real node (`ControlPlane(kubelet=True)`): pods run in containers, find the API server
through the `kubernetes` Service and each other through the cluster DNS, their logs come
through the API server; and the control plane's stop leaves no process, mount, network
namespace, control group or temporary directory of the node, also after a start that failed
halfway."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarekit import Client, PortForwardError, from_kubeconfig
from flarekit_testing import ControlPlane
from flarekit_testing.controlplane import ComponentFailed
from flarekit_testing.controlplane._cgroups import hierarchies
from flarekit_testing.controlplane._node import RealNode, image_names

pytestmark = pytest.mark.timeout(600)

PROBE = r"""
import json, socket, ssl, sys, urllib.request
folder = "/var/run/secrets/kubernetes.io/serviceaccount/"
token = open(folder + "token").read()
context = ssl.create_default_context(cafile=folder + "ca.crt")
request = urllib.request.Request(
    "https://kubernetes.default.svc/version", headers={"Authorization": "Bearer " + token}
)
version = json.load(urllib.request.urlopen(request, context=context))
print("kubernetes.default.svc is", socket.gethostbyname("kubernetes.default.svc.cluster.local"))
print("the API server says", version["gitVersion"])
print("arguments", sys.argv[1:])
"""


@pytest.fixture(scope="module")
def plane(controlplane_binaries: Path, real_node_ready: None) -> Iterator[ControlPlane]:
    binaries = controlplane_binaries
    with ControlPlane(binaries=binaries, kubelet=True) as started:
        yield started


def _namespace(plane: ControlPlane, name: str) -> str:
    plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    plane._wait_service_account(name)
    return name


def _pod(name: str, command: list[str]) -> dict[str, object]:
    image = image_names(None)[0]
    container = {"name": "main", "image": image, "command": command}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [container]},
    }


def _wait_phase(plane: ControlPlane, namespace: str, name: str, phases: tuple[str, ...]) -> str:
    def reached() -> bool:
        pod = plane.get("pods", name, namespace) or {}
        return (pod.get("status") or {}).get("phase") in phases

    plane._wait(reached, f"pod {namespace}/{name} to reach {phases}", timeout=240)
    return str(((plane.get("pods", name, namespace) or {}).get("status") or {})["phase"])


def test_a_pod_runs_and_reaches_the_api_server_through_its_service(plane: ControlPlane) -> None:
    namespace = _namespace(plane, "probe")
    token = os.urandom(4).hex()
    pod = _pod("probe", ["python", "-c", PROBE, token])
    plane.create({**pod, "metadata": {"name": "probe", "namespace": namespace}})
    assert _wait_phase(plane, namespace, "probe", ("Succeeded", "Failed")) == "Succeeded"
    log = plane.rest.request(
        "GET", f"/api/v1/namespaces/{namespace}/pods/probe/log", expect_json=False
    )
    assert "kubernetes.default.svc is 10.96.0.1" in log
    assert "the API server says v1.36" in log
    assert f"arguments ['{token}']" in log
    node = plane.get("nodes", RealNode.NAME) or {}
    assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.36")
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")


def test_pods_find_each_other_through_a_service_and_the_cluster_dns(plane: ControlPlane) -> None:
    namespace = _namespace(plane, "dns")
    server = _pod("server", ["python", "-m", "http.server", "8000"])
    server["metadata"] = {"name": "server", "namespace": namespace, "labels": {"app": "server"}}
    plane.create(server)
    plane.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "files", "namespace": namespace},
            "spec": {"selector": {"app": "server"}, "ports": [{"port": 80, "targetPort": 8000}]},
        }
    )
    _wait_phase(plane, namespace, "server", ("Running",))
    fetch = "import urllib.request as u; print('fetched', len(u.urlopen('http://files/', timeout=10).read()) > 0)"
    client = _pod(
        "client",
        [
            "python",
            "-c",
            f"import time\nfor _ in range(30):\n try:\n  {fetch}; break\n except OSError: time.sleep(1)",
        ],
    )
    client["metadata"] = {"name": "client", "namespace": namespace}
    plane.create(client)
    assert _wait_phase(plane, namespace, "client", ("Succeeded", "Failed")) == "Succeeded"
    log = plane.rest.request(
        "GET", f"/api/v1/namespaces/{namespace}/pods/client/log", expect_json=False
    )
    assert "fetched True" in log
    # The API server reaches the pod too, through its proxy to the Service.
    listing = plane.rest.request(
        "GET", f"/api/v1/namespaces/{namespace}/services/files:80/proxy/", expect_json=False
    )
    assert "Directory listing" in listing


ECHO = r"""
import socket, threading
server = socket.create_server(("0.0.0.0", 7000))
print("listening", flush=True)
def echo(conn):
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)
while True:
    threading.Thread(target=echo, args=(server.accept()[0],), daemon=True).start()
"""


def _echoed(port: int, payload: bytes) -> tuple[bytes, float]:
    """What a TCP echo through 127.0.0.1:`port` sends back, and the seconds it took."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        sender = threading.Thread(target=conn.sendall, args=(payload,))
        sender.start()
        received = bytearray()
        while len(received) < len(payload):
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            received += chunk
        sender.join()
    return bytes(received), time.monotonic() - started


def test_a_port_forward_through_the_api_server_reaches_a_pods_port(plane: ControlPlane) -> None:
    namespace = _namespace(plane, "forward")
    echo = _pod("echo", ["python", "-c", ECHO])
    plane.create({**echo, "metadata": {"name": "echo", "namespace": namespace}})
    _wait_phase(plane, namespace, "echo", ("Running",))
    log_path = f"/api/v1/namespaces/{namespace}/pods/echo/log"
    plane._wait(
        lambda: "listening" in plane.rest.request("GET", log_path, expect_json=False),
        "the echo server listens",
        timeout=60,
    )
    with Client(from_kubeconfig(plane.kubeconfig_path)) as client:
        with client.port_forward("echo", 7000, namespace=namespace) as forward:
            assert forward.setup_seconds is not None
            # Random bytes, two connections at once: each has its own stream.
            payloads = [os.urandom(4 << 20), os.urandom(1 << 16)]
            results: dict[int, tuple[bytes, float]] = {}

            def run(n: int) -> None:
                results[n] = _echoed(forward.local_port, payloads[n])

            threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
            assert [results[n][0] == payloads[n] for n in range(2)] == [True, True]
            assert forward.errors == []
        seconds = results[0][1]
        print(
            f"port-forward set up in {forward.setup_seconds * 1000:.0f} ms; 4 MiB echoed in "
            f"{seconds:.2f} s ({2 * 4 / seconds:.1f} MiB/s both ways)"
        )

        # A port nothing listens on: the node says so on the error channel.
        with client.port_forward("echo", 7001, namespace=namespace) as refused:
            with socket.create_connection(("127.0.0.1", refused.local_port), timeout=60) as conn:
                conn.sendall(b"anyone?")
                assert conn.recv(10) == b""
            plane._wait(lambda: bool(refused.errors), "the node's error", timeout=30)
        assert isinstance(refused.errors[0], PortForwardError)
        assert "7001" in str(refused.errors[0])
    assert [t for t in threading.enumerate() if t.name.startswith("flarekit-port-forward")] == []


def _leftovers(directory: Path, cgroup: str, netns: int | None) -> list[str]:
    found: list[str] = []
    if directory.exists():
        found.append(f"directory {directory}")
    with open("/proc/self/mounts") as mounts:
        found += [f"mount {line.split()[1]}" for line in mounts if str(directory) in line]
    found += [f"cgroup {h / cgroup}" for h in hierarchies() if (h / cgroup).exists()]
    if netns is not None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat(f"/proc/{pid}/ns/net").st_ino == netns:
                    found.append(f"process {pid} in the node's network namespace")
            except OSError:
                continue
    return found


def test_stop_leaves_nothing_of_the_node(
    controlplane_binaries: Path, real_node_ready: None
) -> None:
    binaries = controlplane_binaries
    plane = ControlPlane(binaries=binaries, kubelet=True).start()
    try:
        node = plane.node
        assert node is not None
        namespace = _namespace(plane, "stopped")
        pod = _pod("sleeper", ["sleep", "600"])
        plane.create({**pod, "metadata": {"name": "sleeper", "namespace": namespace}})
        _wait_phase(plane, namespace, "sleeper", ("Running",))
        holder = int(node.network.holder_pid_file.read_text())
        netns = os.stat(f"/proc/{holder}/ns/net").st_ino
        cgroup = node.cgroup.name
        assert node.cgroup.pids(), "the node's processes are in its control group"
        pids = set(node.cgroup.pids())
    finally:
        directory = plane.last_directory
        plane.stop()
    assert directory is not None
    assert _leftovers(directory, cgroup, netns) == []
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    assert alive == []


def test_a_failed_start_leaves_nothing_of_the_node(
    monkeypatch: pytest.MonkeyPatch, controlplane_binaries: Path, real_node_ready: None
) -> None:
    binaries = controlplane_binaries
    seen: dict[str, object] = {}
    real_start = RealNode._start_kube_proxy

    def fail_after_the_kubelet(node: RealNode) -> None:
        seen["cgroup"] = node.cgroup.name
        seen["netns"] = os.stat(f"/proc/{node._holder_pid}/ns/net").st_ino
        seen["pids"] = set(node.cgroup.pids())
        raise ComponentFailed("kube-proxy refused to start (provoked by the test)")

    monkeypatch.setattr(RealNode, "_start_kube_proxy", fail_after_the_kubelet)
    plane = ControlPlane(binaries=binaries, kubelet=True)
    with pytest.raises(ComponentFailed, match="provoked by the test"):
        plane.start()
    monkeypatch.setattr(RealNode, "_start_kube_proxy", real_start)
    assert plane.last_directory is not None
    assert seen["pids"], "containerd and the kubelet ran before the failure"
    assert _leftovers(plane.last_directory, str(seen["cgroup"]), int(str(seen["netns"]))) == []
    time.sleep(0.1)
    assert [p for p in seen["pids"] if Path(f"/proc/{p}").exists()] == []  # type: ignore[attr-defined]


def test_the_node_refuses_kwok_nodes_alongside() -> None:
    from flarekit_testing import NodePool

    with pytest.raises(ValueError, match="kubelet=True runs one real node"):
        ControlPlane(kubelet=True, nodes=[NodePool(count=1)])
