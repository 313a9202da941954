"""The real Kubernetes control plane as a test backend: `ControlPlane` runs etcd,
kube-apiserver, kube-controller-manager, kube-scheduler and KWOK's fake nodes (and, on request,
the real operators) as local processes on 127.0.0.1, shaped like `FakeCluster`.

The programs are built from the Go modules in the repository's `controlplane/` folder into the
user's cache (`make control-plane`); see docs/operators.md.
"""

from flarekit_testing.controlplane._assets import AssetsNotFound
from flarekit_testing.controlplane._node import NodeNotReady, find_node_assets
from flarekit_testing.controlplane._operators import OperatorNotBuilt
from flarekit_testing.controlplane._plane import ControlPlane, NodePool, NotSupportedByRealServer
from flarekit_testing.controlplane._process import ComponentFailed

__all__ = [
    "AssetsNotFound",
    "ComponentFailed",
    "ControlPlane",
    "NodeNotReady",
    "NodePool",
    "NotSupportedByRealServer",
    "OperatorNotBuilt",
    "find_node_assets",
]
