"""The release sets the real-operator tests run on, and the control plane of each.

Every family at its oldest built release (``oldest``), at its newest (``newest``), and a
legacy CodeFlare cluster (``legacy``): the newest Kueue, KubeRay and training-operator, MCAD's
AppWrapper CRD (``workload.codeflare.dev/v1beta1``) instead of the AppWrapper controller's, and
neither Trainer nor JobSet, so that a distributed job is a PyTorchJob. MCAD's own controller
is not built (docs/operators.md): on ``legacy`` an AppWrapper waits in MCAD's queue, as it
would on a cluster whose MCAD has not dispatched it yet.

`release_plane` (in ``conftest.py``) is session-scoped and parametrized by set name
(``indirect=True``): pytest runs every test of one set before it starts the next set's plane,
and stops each plane once its tests are done, whichever module they are in.
"""

from __future__ import annotations

from flarekit_testing import NodePool
from flarekit_testing.controlplane._operators import FAMILIES, built_versions

#: Nodes with the instance type the release matrix's script selects (tainted for GPUs, as its
#: toleration expects), and one without.
SELECTOR = {"node.kubernetes.io/instance-type": "gpu-a100"}
NODES = (
    NodePool(count=1, name="cpu", cpu="16", memory="64Gi", gpus=0),
    NodePool(
        count=2,
        name="gpu",
        cpu="32",
        memory="128Gi",
        labels=dict(SELECTOR),
        taints=({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},),
    ),
)
#: MCAD's release, whose CRD the legacy set serves (no MCAD controller runs).
MCAD = ("appwrapper-mcad", "v1.40.0")


def release_sets() -> dict[str, tuple[dict[str, str], list[str]]]:
    """Set name -> (the releases whose CRDs it serves, the operators it runs); empty when an
    operator family has no build."""
    built = {family: built_versions(family) for family in FAMILIES}
    if not all(built.values()):
        return {}
    oldest = {family: versions[0] for family, versions in built.items()}
    newest = {family: versions[-1] for family, versions in built.items()}
    legacy_operators = ["kueue", "kuberay", "training-operator"]
    legacy = {family: newest[family] for family in legacy_operators}
    return {
        "oldest": (oldest, list(oldest)),
        "newest": (newest, list(newest)),
        "legacy": ({**legacy, MCAD[0]: MCAD[1]}, legacy_operators),
    }
