"""LocalQueue: the queue users name; it sends a namespace's jobs to a ClusterQueue."""

from __future__ import annotations

from dataclasses import dataclass

from flarekit._json import JsonObject
from flarekit._validation import ValidationReport, check_dns1123_label, check_dns1123_subdomain
from flarekit.client import KueueVersion
from flarekit.kueue._queues import DEFAULT_QUEUE_ANNOTATION, check_queue_name
from flarekit.kueue._spec import KueueObjectSpec

__all__ = ["LocalQueueSpec"]


@dataclass
class LocalQueueSpec(KueueObjectSpec):
    """LocalQueue `name` in `namespace`, feeding ClusterQueue `cluster_queue`. With
    `default=True` it is also marked as the namespace's default queue (the annotation the
    CodeFlare SDK reads); naming it ``default`` does the same for Kueue's own defaulting."""

    kind = "LocalQueue"

    name: str
    namespace: str
    cluster_queue: str
    default: bool = False

    def _check(self, report: ValidationReport) -> None:
        check_queue_name(report, "name", self.name)
        check_dns1123_label(report, "namespace", self.namespace)
        check_dns1123_subdomain(report, "cluster_queue", self.cluster_queue)
        if not isinstance(self.default, bool):
            report.add("default", self.default, "expected True or False", "a bool")

    def _metadata(self) -> JsonObject:
        meta: JsonObject = {"name": self.name, "namespace": self.namespace}
        if self.default:
            meta["annotations"] = {DEFAULT_QUEUE_ANNOTATION: "true"}
        return meta

    def _content(self, version: KueueVersion) -> JsonObject:
        return {"spec": {"clusterQueue": self.cluster_queue}}
