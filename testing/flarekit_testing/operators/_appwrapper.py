"""A simulated AppWrapper (workload.codeflare.dev/v1beta2) controller.

AppWrapper moves through phases: a new AppWrapper gets its finalizer and `componentStatus`
and becomes `Suspended`; once `spec.suspend` is false (Kueue admitted it) it is `Resuming`
(conditions `QuotaReserved`, `ResourcesDeployed` True, `PodsReady`, `Unhealthy` False), creates
its components, owned by it and labelled `workload.codeflare.dev/appwrapper`, and is `Running`.
`ready_after` seconds later `PodsReady` turns True; `succeed_after` / `fail_after` end it
`Succeeded` or `Failed`; so does the end of its components (a wrapped PyTorchJob or RayJob
that succeeds or fails), as the real controller's count of its pods ends it. Suspending a running AppWrapper deletes its components (`Suspending`
then `Suspended`); deleting it deletes them before its finalizer goes. Components whose kind
the FakeCluster does not serve (pods, batch Jobs, ...) are counted as deployed but not stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flarekit_testing.operators import _podsets as podsets
from flarekit_testing.operators._base import (
    Clock,
    SimController,
    check_delay,
    delete_quietly,
    is_suspended,
    owner_reference,
    set_condition,
)
from flarekit_testing.operators._kueue import finished
from flarekit_testing.operators._webhooks import AppWrapperWebhook

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster, ResourceType

JSON = dict[str, Any]

FINALIZER = "workload.codeflare.dev/finalizer"
LABEL = "workload.codeflare.dev/appwrapper"
RESOURCE = "appwrappers.workload.codeflare.dev"


class AppWrapperController(SimController):
    """Deploys AppWrappers when unsuspended; pods are ready `ready_after` seconds later.

    `succeed_after` or `fail_after` (seconds after deployment) end the AppWrapper; with
    neither it keeps running.
    """

    resource = RESOURCE
    #: AppWrapper's admission webhook (who created it; `_webhooks`)
    webhooks = (AppWrapperWebhook(),)

    def __init__(
        self,
        ready_after: float = 0.0,
        *,
        succeed_after: float | None = None,
        fail_after: float | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock)
        for name, value in (
            ("ready_after", ready_after),
            ("succeed_after", succeed_after),
            ("fail_after", fail_after),
        ):
            check_delay(name, value)
        self.ready_after = ready_after
        self.succeed_after = succeed_after
        self.fail_after = fail_after

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        phase = (obj.get("status") or {}).get("phase") or ""
        if phase in ("Succeeded", "Failed"):
            return
        if phase == "":
            self._initialize(cluster, obj)
        elif phase == "Suspended" and not is_suspended(obj):
            message = "Suspend is false"
            self._transition(
                cluster,
                obj,
                "Resuming",
                [
                    ("QuotaReserved", True, "Resuming", message),
                    ("ResourcesDeployed", True, "Resuming", message),
                    ("PodsReady", False, "Resuming", message),
                    ("Unhealthy", False, "Resuming", message),
                ],
            )
        elif phase in ("Resuming", "Running") and is_suspended(obj):
            self._transition(cluster, obj, "Suspending", [])
        elif phase == "Suspending":
            self._delete_components(cluster, obj)
            message = "Suspend is true"
            self._transition(
                cluster,
                obj,
                "Suspended",
                [
                    ("ResourcesDeployed", False, "Suspended", message),
                    ("QuotaReserved", False, "Suspended", message),
                    ("PodsReady", False, "Suspended", ""),
                    ("Unhealthy", False, "Suspended", ""),
                ],
            )
        elif phase == "Resuming":
            self._create_components(cluster, obj)
            self.restart_schedule(obj)
            self._transition(cluster, obj, "Running", [], deployed=True)
        elif phase == "Running":
            self._run(cluster, obj, since)

    def _run(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        pods = sum(count for _, count, _ in podsets.appwrapper(obj))
        ended = self._components_ended(cluster, obj)
        if (ended is not None and not ended) or (
            self.fail_after is not None and since >= self.fail_after
        ):
            self._transition(
                cluster,
                obj,
                "Failed",
                [("Unhealthy", True, "FoundFailedPods", "")],
            )
        elif ended or (self.succeed_after is not None and since >= self.succeed_after):
            message = f"{pods} pods succeeded and no running, pending, or failed pods"
            self._transition(
                cluster,
                obj,
                "Succeeded",
                [
                    ("QuotaReserved", False, "Succeeded", message),
                    ("ResourcesDeployed", True, "Succeeded", message),
                ],
            )
        elif since >= self.ready_after:
            message = f"{pods} pods running; 0 pods succeeded"
            self._transition(
                cluster, obj, "Running", [("PodsReady", True, "SufficientPodsReady", message)]
            )

    # -- status ---------------------------------------------------------------------------------

    def _initialize(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if FINALIZER not in finalizers:
            obj = cluster.patch(
                RESOURCE,
                meta["name"],
                {"metadata": {"finalizers": [*finalizers, FINALIZER]}},
                meta.get("namespace"),
            )
        self._transition(cluster, obj, "Suspended", [])

    def _transition(
        self,
        cluster: FakeCluster,
        obj: JSON,
        phase: str,
        changes: list[tuple[str, bool, str, str]],
        deployed: bool = False,
    ) -> None:
        generation = obj["metadata"].get("generation")
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        for type_, value, reason, message in changes:
            conditions = set_condition(conditions, type_, value, reason, message, generation)
        status: JSON = {"phase": phase, "conditions": conditions}
        if phase == "Suspended" or deployed:
            status["componentStatus"] = self._component_status(obj, deployed)
        self.write_status(cluster, obj, status)

    def _component_status(self, obj: JSON, deployed: bool) -> list[JSON]:
        out = []
        for component in (obj.get("spec") or {}).get("components") or []:
            template = component.get("template") or {}
            entry: JSON = {
                "name": (template.get("metadata") or {}).get("name", ""),
                "kind": template.get("kind", ""),
                "apiVersion": template.get("apiVersion", ""),
                "podSets": [
                    {"path": path, "replicas": count}
                    for path, count in podsets.component_pod_sets(component)
                ],
            }
            if deployed:
                entry["conditions"] = set_condition(
                    [], "ResourcesDeployed", True, "ComponentCreated", ""
                )
            out.append(entry)
        return out

    # -- components -----------------------------------------------------------------------------

    def _served(self, cluster: FakeCluster, template: JSON) -> ResourceType | None:
        group = str(template.get("apiVersion", "")).rpartition("/")[0]
        return cluster.registry.by_kind(group, str(template.get("kind", "")))

    def _components_ended(self, cluster: FakeCluster, obj: JSON) -> bool | None:
        """True when every stored component has succeeded, False when one has failed, None
        while they run (or when none is stored here)."""
        outcomes = []
        for component in (obj.get("spec") or {}).get("components") or []:
            template = component.get("template") or {}
            rt = self._served(cluster, template)
            if rt is None:
                continue
            name = (template.get("metadata") or {}).get("name", "")
            child = cluster.get(f"{rt.plural}.{rt.group}", name, obj["metadata"].get("namespace"))
            done = None if child is None else finished(rt.kind, child)
            if done is None:
                return None
            outcomes.append(done[0])
        return all(outcomes) if outcomes else None

    def _create_components(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        for component in (obj.get("spec") or {}).get("components") or []:
            template = dict(component.get("template") or {})
            rt = self._served(cluster, template)
            if rt is None:
                continue
            child_meta = dict(template.get("metadata") or {})
            if cluster.get(
                f"{rt.plural}.{rt.group}", child_meta.get("name", ""), meta.get("namespace")
            ):
                continue
            child_meta["namespace"] = meta.get("namespace")
            child_meta["labels"] = {**(child_meta.get("labels") or {}), LABEL: meta["name"]}
            child_meta["ownerReferences"] = [owner_reference(obj)]
            cluster.create({**template, "metadata": child_meta})

    def _delete_components(self, cluster: FakeCluster, obj: JSON) -> None:
        for component in (obj.get("spec") or {}).get("components") or []:
            template = component.get("template") or {}
            rt = self._served(cluster, template)
            if rt is None:
                continue
            child = {
                "metadata": {
                    "name": (template.get("metadata") or {}).get("name", ""),
                    "namespace": obj["metadata"].get("namespace"),
                }
            }
            delete_quietly(cluster, f"{rt.plural}.{rt.group}", child)

    def finalize(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if FINALIZER not in finalizers:
            return
        self._delete_components(cluster, obj)
        remaining = [f for f in finalizers if f != FINALIZER]
        cluster.patch(
            RESOURCE, meta["name"], {"metadata": {"finalizers": remaining}}, meta.get("namespace")
        )
