"""Pods of simulated operators: created as the real operators label them, run, logging, ended.

Users read a job's output from the pods its operator made, found by the operator's labels.
Simulated controllers use `PodRunner` to give each job such pods: created `Pending`, then
`Running` with their log lines written one per controller tick (so a follower sees them
arrive), and at the end the remaining lines, then `Succeeded` or `Failed`. Lines come from the
test (`logs=lambda owner, pod: [...]`, called once per pod as it starts, with the owning object
and the pod) or from the controller's defaults. They go to the pod's first container.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import flarekit_testing.local
from flarekit_testing.apiserver import ApiError
from flarekit_testing.apiserver import pods as _pods
from flarekit_testing.operators import _outcome as outcome

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster
    from flarekit_testing.local import LocalKubelet

JSON = dict[str, Any]
#: What a pod prints: called with the owning object (RayJob, TrainJob, ...) and the pod.
LogSource = Callable[[JSON, JSON], Iterable[str]]
PodKey = tuple[str, str]  # namespace, name


#: What every line a simulated operator writes into a pod's log starts with.
MARKER = "[simulated]"


def mark(line: str) -> str:
    """A line of simulated output, saying so."""
    text = str(line)
    return text if text.startswith(MARKER) else f"{MARKER} {text}" if text else MARKER


def marked(source: LogSource) -> LogSource:
    """A controller's own log lines, each marked as simulated."""

    def lines(owner: JSON, pod: JSON) -> list[str]:
        return [mark(line) for line in source(owner, pod)]

    return lines


def simulated_here_notes(reason: str, asked: bool) -> list[str]:
    """What a pod that local execution cannot run prints instead."""
    end = (
        "it ends as its container asks (FLAREKIT_SIMULATED_DURATION / "
        "FLAREKIT_SIMULATED_EXIT_CODE)"
        if asked
        else "it does not end by itself: stop or delete its job (or set "
        "FLAREKIT_SIMULATED_DURATION / FLAREKIT_SIMULATED_EXIT_CODE on its container)"
    )
    return [mark(f"this pod is simulated, nothing runs in it: {reason}"), mark(end)]


def kubelet_for(
    local: bool | flarekit_testing.local.LocalKubelet | None,
) -> flarekit_testing.local.LocalKubelet | None:
    """The kubelet of a controller: a shared one, a new one (`True`), or none."""
    if local is None or local is False:
        return None
    if local is True:
        return flarekit_testing.local.LocalKubelet()
    return local


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
    """Creates, starts, feeds and ends the pods of one simulated controller.

    Without local execution a started pod is simulated: it prints the controller's lines
    (marked as simulated), or the test's (`logs=`, written as given), and the controller ends
    it. With a `LocalKubelet`, a started pod runs its program as a local process, which
    writes its log and ends it, unless its program cannot run here (`cannot_run`): such a
    pod is simulated and says why; it ends only when its container asks for a simulated
    outcome (``FLAREKIT_SIMULATED_DURATION`` / ``FLAREKIT_SIMULATED_EXIT_CODE``), never by
    reporting work that did not happen."""

    def __init__(
        self, logs: LogSource | None, default: LogSource, local: LocalKubelet | None = None
    ) -> None:
        self.local = local
        self._source: LogSource = logs if logs is not None else marked(default)
        self._pending: dict[PodKey, list[str]] = {}
        self._created: set[PodKey] = set()  # only these are ever deleted (by owner, not label)
        #: Simulated pods under local execution: when they end, if they asked to (seconds
        #: since they started, exit code).
        self._simulated_here: dict[PodKey, tuple[float, float | None, int]] = {}

    def simulated_here(self, namespace: str, name: str) -> bool:
        """Whether local execution left this pod simulated (its program cannot run here)."""
        return (namespace, name) in self._simulated_here

    def ensure(self, cluster: FakeCluster, pods: Iterable[JSON]) -> list[JSON]:
        """Create the pods that do not exist yet; returns the current state of all of them."""
        out = []
        for pod in pods:
            meta = pod["metadata"]
            found = cluster.get("pods", meta["name"], meta["namespace"])
            if found is None:
                self._created.add((meta["namespace"], meta["name"]))
                try:
                    cluster.create(pod)
                except ApiError as exc:
                    if exc.code != 409:
                        raise
                # as stored now: the scheduler has bound it, or left it Pending
                found = cluster.get("pods", meta["name"], meta["namespace"])
            if found is not None:
                out.append(found)
        return out

    @staticmethod
    def unscheduled(pods: Iterable[JSON]) -> list[JSON]:
        """The pods the scheduler left Pending (no node matches their node selector): they
        do not start, and their job does not progress."""
        return [
            p
            for p in pods
            if not (p.get("spec") or {}).get("nodeName")
            and any(
                c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                for c in (p.get("status") or {}).get("conditions") or []
            )
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
        key = (meta["namespace"], meta["name"])
        if self.local is not None:
            reason = self.local.cannot_run(running)
            if reason is None:
                self.local.run(cluster, running)
                return
            asked = outcome.duration(running)
            code = outcome.exit_code(running)
            self._simulated_here[key] = (time.monotonic(), asked, code)
            self._pending[key] = simulated_here_notes(reason, asked is not None or code != 0)
            return
        self._pending[key] = [str(line) for line in self._source(owner, running)]

    def tick(self, cluster: FakeCluster) -> None:
        """Write the next line of every running pod that has lines left; end the simulated
        pods of local execution whose asked-for run is over; end the processes of local pods
        that were deleted."""
        if self.local is not None:
            self.local.reap(cluster)
        for (namespace, name), lines in list(self._pending.items()):
            if lines:
                self._emit(cluster, namespace, name, [lines.pop(0)])
        now = time.monotonic()
        for (namespace, name), (since, asked, code) in list(self._simulated_here.items()):
            if asked is None and code == 0:
                continue  # runs until its job is stopped or deleted
            if now - since < (asked or 0.0):
                continue
            pod = cluster.get("pods", name, namespace)
            del self._simulated_here[(namespace, name)]
            if pod is not None:
                phase = "Succeeded" if code == 0 else "Failed"
                done = f"ends {phase} (exit code {code}), as its container asked"
                self.finish(cluster, pod, phase, [done], code)

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
        if self.local is not None and key in self.local.pids():
            # A process of local execution is stopped, not declared finished.
            self.local.kill(*key)
            with contextlib.suppress(ValueError):
                cluster.finish_pod(*key, "Failed", 137)
            return
        rest = [*self._pending.pop(key, []), *(mark(line) for line in lines)]
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
        self._simulated_here.pop((namespace, name), None)
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
