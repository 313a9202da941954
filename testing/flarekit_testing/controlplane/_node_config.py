"""The real node's configuration files: containerd, the bridge CNI network, the kubelet,
kube-proxy and CoreDNS, and the objects the cluster holds for them (CoreDNS's RBAC, the
`kube-dns` Service and its endpoints).

What differs from a kubeadm or kind node, and why:

- containerd keeps its root, state, socket, the pods' network namespaces and runc's state in
  the node's folder; its sandbox ("pause") image is the one built here; it never pulls.
- the kubelet's `cgroupRoot` is the node's own control group (see `_cgroups`), so that two
  nodes on one machine never share one and the stop finds every container; image garbage
  collection and disk-pressure eviction are off (the disk is the machine's, shared with
  everything else: a full disk elsewhere must not evict the tests' pods), as kind does;
  the node keeps the machine's CPU and memory as its capacity.
- kube-proxy touches no global sysctl (conntrack's table size is the machine's).
- CoreDNS runs as a program of the node, not as a pod: it serves the cluster's zone from the
  API server and answers nothing else (nothing is routed beyond the node to forward to).
  The `kube-dns` Service points at it through an EndpointSlice written here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

JSON = dict[str, Any]

CLUSTER_DOMAIN = "cluster.local"
#: The `kube-dns` Service's address (kubeadm's choice in 10.96.0.0/12: the tenth address).
DNS_SERVICE_IP = "10.96.0.10"
#: What the node manages its Service endpoints as.
MANAGED_BY = "flarekit-node"
COREDNS_USER = "system:coredns"
KUBE_PROXY_USER = "system:kube-proxy"


@dataclass(frozen=True)
class NodeLayout:
    """Where the node keeps everything, under its folder, and its addresses."""

    folder: Path
    name: str
    address: str  # the node's InternalIP (its dummy interface in its namespace)
    prefix_length: int
    pod_subnet: str  # this node's share of the cluster's pod range
    pod_gateway: str
    cluster_cidr: str
    cgroup_root: str

    @property
    def containerd_root(self) -> Path:
        return self.folder / "containerd" / "root"

    @property
    def containerd_state(self) -> Path:
        return self.folder / "containerd" / "state"

    @property
    def containerd_socket(self) -> Path:
        return self.folder / "containerd" / "containerd.sock"

    @property
    def cni_conf_dir(self) -> Path:
        return self.folder / "cni" / "net.d"

    @property
    def kubelet_dir(self) -> Path:
        return self.folder / "kubelet"

    @property
    def pod_logs(self) -> Path:
        return self.folder / "pod-logs"

    def folders(self) -> list[Path]:
        return [
            self.containerd_root.parent,
            self.containerd_state,
            self.cni_conf_dir,
            self.folder / "cni" / "ipam",
            self.kubelet_dir,
            self.pod_logs,
        ]


def _can_lower_oom_score() -> bool:
    """Whether this process has CAP_SYS_RESOURCE (bit 24 of its effective capabilities)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 24 & 1)
    except (OSError, ValueError):
        pass
    return False


def containerd_config(layout: NodeLayout, cni_bin_dir: Path, sandbox_image: str) -> str:
    runc_root = layout.containerd_state / "runc"
    lines = [
        "version = 2",
        f'root = "{layout.containerd_root}"',
        f'state = "{layout.containerd_state}"',
        "[grpc]",
        f'  address = "{layout.containerd_socket}"',
        '[plugins."io.containerd.grpc.v1.cri"]',
        f'  sandbox_image = "{sandbox_image}"',
        "  netns_mounts_under_state_dir = true",
        "  tolerate_missing_hugetlb_controller = true",
        # Without CAP_SYS_RESOURCE (test machines and CI containers often lack it) no process
        # may lower its OOM score below its parent's; the kubelet asks for -998 for the pods'
        # sandboxes. containerd then keeps each score at least the node's own, as kind does
        # in rootless mode.
        f"  restrict_oom_score_adj = {'false' if _can_lower_oom_score() else 'true'}",
        '  stream_server_address = "127.0.0.1"',
        '[plugins."io.containerd.grpc.v1.cri".cni]',
        f'  bin_dir = "{cni_bin_dir}"',
        f'  conf_dir = "{layout.cni_conf_dir}"',
        '[plugins."io.containerd.grpc.v1.cri".containerd]',
        '  snapshotter = "overlayfs"',
        '  default_runtime_name = "runc"',
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '  runtime_type = "io.containerd.runc.v2"',
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        "  SystemdCgroup = false",
        f'  Root = "{runc_root}"',
    ]
    return "\n".join(lines) + "\n"


def cni_config(layout: NodeLayout) -> str:
    """One bridge `cni0` with the node's pod subnet: the pods' gateway is the node."""
    network = {
        "cniVersion": "1.0.0",
        "name": "flarekit-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": layout.pod_subnet, "gateway": layout.pod_gateway}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(layout.folder / "cni" / "ipam"),
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }
    return json.dumps(network, indent=1)


def kubelet_config(layout: NodeLayout, ca_file: Path, serving_cert: Path, serving_key: Path) -> str:
    config: JSON = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": layout.cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "address": layout.address,
        "port": 10250,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        "tlsCertFile": str(serving_cert),
        "tlsPrivateKeyFile": str(serving_key),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "clusterDomain": CLUSTER_DOMAIN,
        "clusterDNS": [DNS_SERVICE_IP],
        "resolvConf": str(layout.folder / "resolv-upstream.conf"),
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "podLogsDir": str(layout.pod_logs),
        "volumePluginDir": str(layout.kubelet_dir / "volume-plugins"),
        "staticPodPath": "",
        "imageGCHighThresholdPercent": 100,
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "0%",
            "nodefs.inodesFree": "0%",
            "imagefs.available": "0%",
        },
        "serializeImagePulls": False,
        "rotateCertificates": False,
        "serverTLSBootstrap": False,
        "registerNode": True,
        "nodeStatusUpdateFrequency": "4s",
        "syncFrequency": "10s",
        "fileCheckFrequency": "60s",
        "maxPods": 110,
        "logging": {"format": "text"},
    }
    return yaml.safe_dump(config, sort_keys=False)


def kube_proxy_config(layout: NodeLayout, kubeconfig: Path) -> str:
    config: JSON = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "hostnameOverride": layout.name,
        "clusterCIDR": layout.cluster_cidr,
        "bindAddress": layout.address,
        "healthzBindAddress": "127.0.0.1:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        "iptables": {"minSyncPeriod": "0s", "syncPeriod": "30s"},
        # Its own OOM score stays as it is (lowering it needs CAP_SYS_RESOURCE).
        "oomScoreAdj": 0,
        # conntrack's table size and timeouts are the machine's, not this node's.
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
    }
    return yaml.safe_dump(config, sort_keys=False)


def corefile(kubeconfig: Path) -> str:
    return (
        f".:53 {{\n"
        f"    errors\n"
        f"    health :8080\n"
        f"    ready :8181\n"
        f"    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{\n"
        f"        kubeconfig {kubeconfig}\n"
        f"        pods insecure\n"
        f"        ttl 5\n"
        f"    }}\n"
        f"    cache 5\n"
        f"}}\n"
    )


def node_resolv_conf(layout: NodeLayout) -> str:
    """The node's own /etc/resolv.conf: the cluster DNS (its programs, and the node's HTTP
    proxy, resolve Service names)."""
    return (
        f"nameserver {layout.address}\n"
        f"search svc.{CLUSTER_DOMAIN} {CLUSTER_DOMAIN}\n"
        "options ndots:5\n"
    )


def upstream_resolv_conf() -> str:
    """What the kubelet gives pods as their upstream DNS besides the cluster's: nothing
    beyond the node is reachable, so no name server (only options)."""
    return "options ndots:5\n"


def cluster_objects(layout: NodeLayout) -> list[JSON]:
    """CoreDNS's rights (what it reads to answer), the `kube-dns` Service and its endpoint."""
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        {
            "apiVersion": rbac,
            "kind": "ClusterRole",
            "metadata": {
                "name": "system:coredns",
                "labels": {"app.kubernetes.io/managed-by": MANAGED_BY},
            },
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"],
                },
                {
                    "apiGroups": ["discovery.k8s.io"],
                    "resources": ["endpointslices"],
                    "verbs": ["list", "watch"],
                },
            ],
        },
        {
            "apiVersion": rbac,
            "kind": "ClusterRoleBinding",
            "metadata": {
                "name": "system:coredns",
                "labels": {"app.kubernetes.io/managed-by": MANAGED_BY},
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "system:coredns",
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": COREDNS_USER}
            ],
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "kube-dns",
                "namespace": "kube-system",
                "labels": {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"},
            },
            "spec": {
                "clusterIP": DNS_SERVICE_IP,
                "ports": [
                    {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                    {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                ],
            },
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": "kube-dns-node",
                "namespace": "kube-system",
                "labels": {
                    "kubernetes.io/service-name": "kube-dns",
                    "endpointslice.kubernetes.io/managed-by": MANAGED_BY,
                },
            },
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": [layout.address],
                    "conditions": {"ready": True},
                    "nodeName": layout.name,
                }
            ],
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP"},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
            ],
        },
    ]
