"""Pods of simulated operators: created as the real operators label them, run, logging, ended.

Users read a job's output from the pods its operator made, found by the operator's labels.
Simulated controllers use `PodRunner` to give each job such pods: created `Pending`, then
`Running` with their log lines written one per controller tick (so a follower sees them
arrive), and at the end the remaining lines, then `Succeeded` or `Failed`. Lines come from the
test (`logs=lambda owner, pod: [...]`, called once per pod as it starts, with the owning object
and the pod) or from the controller's defaults. They go to the pod's first container.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError
from flarekit_testing.apiserver import pods as _pods

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster
    from flarekit_testing.local import LocalKubelet

JSON = dict[str, Any]
#: What a pod prints: called with the owning object (RayJob, TrainJob, ...) and the pod.
LogSource = Callable[[JSON, JSON], Iterable[str]]
PodKey = tuple[str, str]  # namespace, name


def synthetic_uid(*parts: str) -> str:
    """A stable UUID-shaped id for objects the fake does not serve (batch Jobs, JobSets)."""
    raw = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


def job_labels(job_name: str, job_uid: str) -> dict[str, str]:
    """The labels the Job controller puts on every pod of a batch Job."""
    return {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": job_name,
        "controller-uid": job_uid,
        "job-name": job_name,
    }


def job_owner(job_name: str, job_uid: str) -> JSON:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": job_name,
        "uid": job_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_from_template(
    namespace: str,
    name: str,
    template: Mapping[str, Any],
    labels: Mapping[str, str],
    owner: Mapping[str, Any],
    default_image: str = _pods.DEFAULT_IMAGE,
) -> JSON:
    """A pod from a pod template: the template's labels plus the operator's, its spec, and an
    image for containers that name none (a real operator would fail to create those)."""
    meta = template.get("metadata") or {}
    spec = dict(template.get("spec") or {})
    containers = [dict(c) for c in spec.get("containers") or []] or [{"name": "main"}]
    for container in containers:
        container.setdefault("image", default_image)
    spec["containers"] = containers
    return _pods.manifest(
        namespace,
        name,
        (),
        {**(meta.get("labels") or {}), **labels},
        annotations=meta.get("annotations"),
        owner=owner,
        spec=spec,
    )


def matching(cluster: FakeCluster, namespace: str, labels: Mapping[str, str]) -> list[JSON]:
    """Pods in `namespace` carrying all of `labels`."""
    return [
        p
        for p in cluster.objects("pods", namespace)
        if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())
    ]


class PodRunner:
    """Creates, starts, feeds and ends the pods of one simulated controller. With a
    `LocalKubelet` (local execution), a started pod runs its container as a local process,
    which writes its log and ends it; nothing is printed for it."""

    def __init__(
        self, logs: LogSource | None, default: LogSource, local: LocalKubelet | None = None
    ) -> None:
        self.local = local
        self._source = logs if logs is not None else default
        self._pending: dict[PodKey, list[str]] = {}
        self._created: set[PodKey] = set()  # only these are ever deleted (by owner, not label)

    def ensure(self, cluster: FakeCluster, pods: Iterable[JSON]) -> list[JSON]:
        """Create the pods that do not exist yet; returns the current state of all of them."""
        out = []
        for pod in pods:
            meta = pod["metadata"]
            found = cluster.get("pods", meta["name"], meta["namespace"])
            if found is None:
                self._created.add((meta["namespace"], meta["name"]))
                try:
                    found = cluster.create(pod)
                except ApiError as exc:
                    if exc.code != 409:
                        raise
                    found = cluster.get("pods", meta["name"], meta["namespace"])
            if found is not None:
                out.append(found)
        return out

    @staticmethod
    def unscheduled(pods: Iterable[JSON]) -> list[JSON]:
        """The pods no simulated node can take (their node selector or affinity matches none):
        they stay Pending, as the scheduler leaves them, and their job does not progress."""
        return [
            p
            for p in pods
            if not (p.get("spec") or {}).get("nodeName")
            and _pods.unschedulable_message(p) is not None
        ]

    def start(self, cluster: FakeCluster, owner: JSON, pod: JSON) -> None:
        """Run a pending pod and line up what it will print (a pod no node takes stays
        Pending)."""
        meta = pod["metadata"]
        if _pods.phase(pod) != "Pending" or self.unscheduled([pod]):
            return
        try:
            running = cluster.start_pod(meta["namespace"], meta["name"])
        except ValueError:
            return  # garbage-collected with its owner meanwhile
        if self.local is not None:
            self.local.run(cluster, running)
            return
        self._pending[(meta["namespace"], meta["name"])] = [
            str(line) for line in self._source(owner, running)
        ]

    def write(self, cluster: FakeCluster, namespace: str, name: str, lines: Iterable[str]) -> None:
        """Queue more lines for a running pod (after those already queued)."""
        self._pending.setdefault((namespace, name), []).extend(str(x) for x in lines)

    def tick(self, cluster: FakeCluster) -> None:
        """Write the next line of every running pod that has lines left."""
        for (namespace, name), lines in list(self._pending.items()):
            if lines:
                self._emit(cluster, namespace, name, [lines.pop(0)])

    def finish(
        self,
        cluster: FakeCluster,
        pod: JSON,
        phase: str = "Succeeded",
        lines: Iterable[str] = (),
        exit_code: int | None = None,
    ) -> None:
        """Write what is left to print (then `lines`) and end the pod."""
        meta = pod["metadata"]
        if _pods.is_finished(pod) or self.unscheduled([pod]):
            return
        key = (meta["namespace"], meta["name"])
        rest = [*self._pending.pop(key, []), *lines]
        try:
            self._emit(cluster, *key, rest)
            cluster.finish_pod(meta["namespace"], meta["name"], phase, exit_code)
        except ValueError:
            return  # garbage-collected with its owner meanwhile

    def owned(self, cluster: FakeCluster, namespace: str, labels: Mapping[str, str]) -> list[JSON]:
        """Pods this runner created that carry `labels` (pods a test added are left alone, as
        garbage collection follows ownerReferences, not labels)."""
        return [
            p
            for p in matching(cluster, namespace, labels)
            if (namespace, p["metadata"]["name"]) in self._created
        ]

    def delete(self, cluster: FakeCluster, namespace: str, labels: Mapping[str, str]) -> None:
        """Delete the pods this runner created that carry `labels`."""
        for pod in self.owned(cluster, namespace, labels):
            self.delete_pod(cluster, namespace, pod["metadata"]["name"])

    def delete_pod(self, cluster: FakeCluster, namespace: str, name: str) -> None:
        if self.local is not None:
            self.local.kill(namespace, name)
        self._pending.pop((namespace, name), None)
        self._created.discard((namespace, name))
        try:
            cluster.delete("pods", name, namespace)
        except ApiError as exc:
            if exc.code != 404:
                raise

    def _emit(self, cluster: FakeCluster, namespace: str, name: str, lines: list[str]) -> None:
        pod = cluster.get("pods", name, namespace)
        if pod is None:
            self._pending.pop((namespace, name), None)
            return
        if lines:
            first = _pods.container_names(pod)[0]
            try:
                cluster.append_log(namespace, name, "".join(f"{line}\n" for line in lines), first)
            except ValueError:  # garbage-collected with its owner since it was read
                self._pending.pop((namespace, name), None)
