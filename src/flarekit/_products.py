"""What flarekit knows about the software it drives: API groups, product names, and the
labels those products read or write. One place, so that a rename upstream is one edit.

Plain constants: importing this costs nothing.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "APPWRAPPER_GROUP",
    "CREATED_FROM",
    "JOBSET_GROUP",
    "JOBSET_LABEL",
    "KUBEFLOW_GROUP",
    "KUBERAY_GROUP",
    "KUEUE_GROUP",
    "KUEUE_VERSIONS",
    "PRIORITY_LABEL",
    "PRODUCTS",
    "QUEUE_LABEL",
    "REPLICATED_JOB_LABEL",
    "SUBMITTER_JOB_LABEL",
    "TRAINER_GROUP",
    "KueueVersion",
    "product_of",
]

KUEUE_GROUP = "kueue.x-k8s.io"
KUBERAY_GROUP = "ray.io"
TRAINER_GROUP = "trainer.kubeflow.org"
KUBEFLOW_GROUP = "kubeflow.org"
APPWRAPPER_GROUP = "workload.codeflare.dev"
JOBSET_GROUP = "jobset.x-k8s.io"

KueueVersion = Literal["v1beta2", "v1beta1"]
#: The Kueue versions flarekit speaks, most preferred first.
KUEUE_VERSIONS: tuple[KueueVersion, ...] = ("v1beta2", "v1beta1")

#: What users call the software behind each API group, for "X is not installed" messages.
PRODUCTS = {
    KUEUE_GROUP: "Kueue",
    KUBERAY_GROUP: "KubeRay",
    TRAINER_GROUP: "Kubeflow Trainer",
    KUBEFLOW_GROUP: "The Kubeflow Training Operator",
    APPWRAPPER_GROUP: "The AppWrapper controller",
    JOBSET_GROUP: "JobSet",
    "route.openshift.io": "OpenShift routing",
    "gateway.networking.k8s.io": "The Gateway API",
}

#: Kueue reads the LocalQueue of a workload from this label of the top-level object.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: Kueue reads the WorkloadPriorityClass of a workload from this label.
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
#: KubeRay's submitter Job is named after the RayJob; the Job controller labels its pods so.
SUBMITTER_JOB_LABEL = "job-name"
#: JobSet labels every pod of a TrainJob with its JobSet (named after the TrainJob) ...
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
#: ... and with the replicated job the pod belongs to.
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
#: The annotation an object created by flarekit's client carries: the digest of what its
#: create sent (see `flarekit.client._fingerprint`).
CREATED_FROM = "flarekit.dev/created-from"


def product_of(group: str) -> str | None:
    """The software behind an API group, when flarekit knows it."""
    return PRODUCTS.get(group)
