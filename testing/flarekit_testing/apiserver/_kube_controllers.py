"""What kube-controller-manager does that code under test relies on, done as changes commit.

- **Garbage collector**: when an object is deleted, the objects whose `ownerReferences`
  name its uid are deleted too (background propagation, the default). `propagationPolicy:
  Foreground` keeps the owner, marked deleting with the `foregroundDeletion` finalizer, until
  its dependents are gone; `Orphan` (the `orphan` finalizer) removes the owner reference from
  the dependents and then lets the owner go.
- **Service account controller** and **root CA publisher**: every namespace gets the
  `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap (the cluster's CA, once the
  FakeCluster has started and made one).
- **Scheduler**: a new pod for the default scheduler is bound to one of the simulated nodes
  (`spec.nodeName`, the `PodScheduled` condition) and gets the scheduler's `Scheduled`
  Event. Nothing runs it: its status stays `Pending` until a test or simulated operator
  starts it.

They run inside the write that triggers them (a real controller manager acts a moment
later): tests see the outcome at once and need no waiting. Objects are found through an
index of owner uids, so a deletion costs what it deletes, not the size of the store.
"""

from __future__ import annotations

import datetime
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from flarekit_testing.apiserver import _meta
from flarekit_testing.apiserver._store import Event, Key, Store
from flarekit_testing.apiserver.pods import node_selector_matches, unschedulable_message

JSON = dict[str, Any]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


def _owners(obj: JSON | None) -> set[str]:
    refs = ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
    return {str(r.get("uid")) for r in refs if isinstance(r, dict) and r.get("uid")}


def _finalizers(obj: JSON) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


class GarbageCollector:
    """Deletes dependents of deleted owners; drives foreground and orphan deletion."""

    def __init__(self, store: Store, finalize_namespace: Callable[[Store, str], None]) -> None:
        self.store = store
        self.finalize_namespace = finalize_namespace
        self.dependents: dict[str, set[Key]] = {}  # owner uid -> keys of dependents
        self.uids: dict[Key, str] = {}
        self.keys: dict[str, Key] = {}  # uid -> key

    def on_commit(self, event: Event) -> None:
        before, after = _owners(event.prev), _owners(event.obj if event.type != "DELETED" else None)
        for uid in before - after:
            found = self.dependents.get(uid)
            if found is not None:
                found.discard(event.key)
                if not found:
                    del self.dependents[uid]
        for uid in after - before:
            self.dependents.setdefault(uid, set()).add(event.key)
        uid = str((event.obj.get("metadata") or {}).get("uid") or "")
        if event.type == "DELETED":
            self.uids.pop(event.key, None)
            self.keys.pop(uid, None)
            self._owner_gone(uid)
            for owner in before:
                self._check_owner(owner)
        else:
            self.uids[event.key] = uid
            self.keys[uid] = event.key
            finalizers = _finalizers(event.obj)
            deleting = bool((event.obj.get("metadata") or {}).get("deletionTimestamp"))
            if deleting and FOREGROUND in finalizers:
                self._foreground(event.key, uid)
            elif deleting and ORPHAN in finalizers:
                self._orphan(event.key, uid)

    # -- the three policies --------------------------------------------------------------

    def _owner_gone(self, uid: str) -> None:
        for key in sorted(self.dependents.get(uid, ())):
            self._delete(key)

    def _foreground(self, key: Key, uid: str) -> None:
        waiting = sorted(self.dependents.get(uid, ()))
        for dependent in waiting:
            self._delete(dependent)
        if not self.dependents.get(uid):
            self._drop_finalizer(key, FOREGROUND)

    def _orphan(self, key: Key, uid: str) -> None:
        for dependent in sorted(self.dependents.get(uid, ())):
            obj = self.store.get(dependent)
            if obj is None:
                continue
            meta = obj["metadata"]
            meta["ownerReferences"] = [
                r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid
            ]
            if not meta["ownerReferences"]:
                del meta["ownerReferences"]
            self.store.commit(dependent, obj)
        self._drop_finalizer(key, ORPHAN)

    def _check_owner(self, uid: str) -> None:
        """A dependent went away: an owner waiting in foreground may now go too."""
        if self.dependents.get(uid):
            return
        key = self.keys.get(uid)
        if key is None:
            return
        obj = self.store.get(key)
        deleting = obj is not None and (obj.get("metadata") or {}).get("deletionTimestamp")
        if obj is not None and deleting and FOREGROUND in _finalizers(obj):
            self._drop_finalizer(key, FOREGROUND)

    # -- store operations ------------------------------------------------------------------

    def _delete(self, key: Key) -> None:
        obj = self.store.get(key)
        if obj is None:
            return
        meta = obj["metadata"]
        if meta.get("finalizers"):
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = _meta.timestamp()
                meta["deletionGracePeriodSeconds"] = 0
                if meta.get("generation"):
                    meta["generation"] = int(meta["generation"]) + 1
                self.store.commit(key, obj)
            return
        self.store.commit(key, None)
        if key[2]:
            self.finalize_namespace(self.store, key[2])

    def _drop_finalizer(self, key: Key, finalizer: str) -> None:
        obj = self.store.get(key)
        if obj is None:
            return
        left = [f for f in _finalizers(obj) if f != finalizer]
        if left:
            obj["metadata"]["finalizers"] = left
            self.store.commit(key, obj)
            return
        obj["metadata"].pop("finalizers", None)
        self.store.commit(key, None, last=obj)
        if key[2]:
            self.finalize_namespace(self.store, key[2])


class NamespaceDefaults:
    """The `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap of every namespace."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ca_pem: str | None = None

    def on_commit(self, event: Event) -> None:
        if event.key[:2] != ("", "namespaces") or event.type != "ADDED":
            return
        self._fill(event.key[3])

    def started(self, ca_pem: str) -> None:
        """The cluster has a CA now: publish it in every namespace."""
        self.ca_pem = ca_pem
        for key in self.store.items("", "namespaces", None):
            self._fill(str(key["metadata"]["name"]))

    def _fill(self, namespace: str) -> None:
        ns = self.store.get(("", "namespaces", "", namespace))
        if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        account: Key = ("", "serviceaccounts", namespace, "default")
        if self.store.get(account) is None:
            self.store.commit(account, _object("ServiceAccount", namespace, "default", {}))
        root: Key = ("", "configmaps", namespace, "kube-root-ca.crt")
        if self.ca_pem is not None and self.store.get(root) is None:
            data = {"data": {"ca.crt": self.ca_pem}}
            meta = {"annotations": {"kubernetes.io/description": _CA_DESCRIPTION}}
            self.store.commit(root, _object("ConfigMap", namespace, "kube-root-ca.crt", data, meta))


_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


def _object(kind: str, namespace: str, name: str, body: JSON, meta: JSON | None = None) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": _meta.new_uid(),
            "creationTimestamp": _meta.timestamp(),
            **(meta or {}),
        },
        **body,
    }


class Scheduler:
    """Binds new pods to simulated nodes, as kube-scheduler does, with its Event. With the
    nodes' labels (`node_labels`, node name -> labels), a pod whose node selector or required
    node affinity matches none of them stays Pending, saying so; without them any pod fits."""

    def __init__(
        self,
        store: Store,
        nodes: tuple[str, ...],
        node_labels: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.store = store
        self.node_labels = {k: dict(v) for k, v in node_labels.items()} if node_labels else None
        self.nodes = tuple(self.node_labels) if self.node_labels else nodes

    def on_commit(self, event: Event) -> None:
        if event.type != "ADDED" or event.key[:2] != ("", "pods"):
            return
        pod = event.obj
        spec = pod.get("spec") or {}
        if spec.get("nodeName") or spec.get("schedulerName", "default-scheduler") != (
            "default-scheduler"
        ):
            return
        fitting = [
            n
            for n in self.nodes
            if self.node_labels is None or node_selector_matches(spec, self.node_labels[n])
        ]
        if not fitting:
            self._unschedulable(event.key, unschedulable_message(len(self.nodes)))
            return
        self.bind(event.key, self.node_for(pod, fitting))

    def _unschedulable(self, key: Key, message: str) -> None:
        """No node satisfies the pod's node selector: it stays Pending, saying why, as the
        scheduler's PodScheduled condition does."""
        pod = self.store.get(key)
        if pod is None:
            return
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": _meta.timestamp(),
            "reason": "Unschedulable",
            "message": message,
        }
        status["conditions"] = [condition, *conditions]
        self.store.commit(key, pod)

    def node_for(self, pod: JSON, nodes: tuple[str, ...] | list[str] | None = None) -> str:
        """A node for the pod, stable per pod (among `nodes`, by default all)."""
        choices = list(nodes or self.nodes)
        uid = str((pod.get("metadata") or {}).get("uid", ""))
        return choices[int(uid.replace("-", "")[:8] or "0", 16) % len(choices)]

    def bind(self, key: Key, node: str) -> None:
        pod = self.store.get(key)
        if pod is None or (pod.get("spec") or {}).get("nodeName"):
            return
        pod.setdefault("spec", {})["nodeName"] = node
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        now = _meta.timestamp()
        scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
        status["conditions"] = [{**scheduled, "lastTransitionTime": now}, *conditions]
        bound = self.store.commit(key, pod)
        self._event(bound, node)

    def _event(self, pod: JSON, node: str) -> None:
        meta = pod["metadata"]
        namespace, name = str(meta.get("namespace", "")), str(meta["name"])
        micro = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        event_name = f"{name}.{secrets.token_hex(8)}"
        body = {
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": name,
                "namespace": namespace,
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": "Scheduled",
            "message": f"Successfully assigned {namespace}/{name} to {node}",
            "type": "Normal",
            "eventTime": micro,
            "action": "Binding",
            "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler-flarekit",
        }
        key: Key = ("", "events", namespace, event_name)
        self.store.commit(key, _object("Event", namespace, event_name, body))
