"""Kueue's quota arithmetic and flavor assignment: whether a Workload fits a ClusterQueue now,
later, or never, in which flavors, and Kueue's own words when it does not.

Why one module of plain data: the simulated Kueue admits by these rules, and a will-it-fit
preview can ask the same question of objects read from any cluster. Everything here takes the
Kubernetes JSON of ClusterQueues, Cohorts, ResourceFlavors and Workloads and returns plain
values; nothing reads or writes a cluster.

What Kueue v0.19's scheduler does, and this does too:

- **Quota tree.** Each ClusterQueue has a nominal quota per (flavor, resource), optionally a
  ``borrowingLimit`` and a ``lendingLimit``; ClusterQueues naming the same cohort
  (``spec.cohortName``, ``spec.cohort`` in v1beta1) share what they lend, and Cohort objects
  add quota of their own and a parent. A node's subtree quota is its own nominal quota plus
  what its children lend (their quota minus what the lending limit keeps local); usage past a
  child's local quota counts in its parent. ``available`` and ``potential_available`` are
  Kueue's formulas: what is free now, and the most the queue could ever get (its own quota
  plus what it may borrow when the rest of the cohort is idle).
- **Requests.** A pod set asks for its pod's requests (a container's limits stand in for
  requests it does not set; the largest init container counts when it asks for more than the
  containers together; ``overhead`` is added) times its count, plus ``pods`` when the queue
  covers it.
- **Flavors in order.** For each requested resource, the resource group that covers it
  (``coveredResources``) is searched flavor by flavor. A flavor is skipped when a pod taint
  is not tolerated (``untolerated taint k=v:Effect in flavor f``) or the pod's node selector
  or required node affinity, restricted to the keys of the flavor's ``nodeLabels``, does not
  match them (``flavor f doesn't match node affinity``). Then every resource of the group is
  checked against the quota, counting what earlier pod sets of the same Workload took: more
  than the most the queue could ever get is "insufficient quota ... > maximum capacity" (no
  fit), more than what is free now is "insufficient unused quota ..., N more needed" (the
  Workload waits: preemption is not simulated, so nothing is freed for it). The first flavor
  that fits is taken, unless it needs borrowing and the queue's ``flavorFungibility`` says to
  try the next flavor first (``whenCanBorrow: TryNextFlavor``).
- **Messages.** A pod set that gets no flavor is reported as Kueue reports it:
  ``couldn't assign flavors to pod set <name>: <reasons, sorted, comma-separated>``; a
  resource no group covers is ``resource <name> unavailable in ClusterQueue``. Amounts are
  spelt as Kueue's resource formatter spells them (CPU in cores or milli-cores, memory in
  binary suffixes).

Not modelled: preemption and fair sharing (a Workload that would need them waits),
topology-aware scheduling, partial admission, admission checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flarekit_testing.apiserver import quantity
from flarekit_testing.apiserver.pods import node_selector_matches

__all__ = [
    "Assignment",
    "PodSetAssignment",
    "QuotaTree",
    "assign_flavors",
    "format_amount",
    "pod_set_requests",
]

JSON = dict[str, Any]
FlavorResource = tuple[str, str]  # (flavor, resource)

#: How Kueue ranks what a flavor offers a pod set, worst first.
NO_FIT, WAIT, FIT = 0, 1, 2


@dataclass
class _Quota:
    nominal: Fraction
    borrowing_limit: Fraction | None = None
    lending_limit: Fraction | None = None


@dataclass
class _Node:
    """A ClusterQueue or a Cohort in the quota tree."""

    name: str
    cohort: bool = False
    parent: _Node | None = None
    quotas: dict[FlavorResource, _Quota] = field(default_factory=dict)
    subtree: dict[FlavorResource, Fraction] = field(default_factory=dict)
    usage: dict[FlavorResource, Fraction] = field(default_factory=dict)
    children: list[_Node] = field(default_factory=list)

    def local_quota(self, fr: FlavorResource) -> Fraction:
        """What this node keeps to itself: its quota past the lending limit."""
        quota = self.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return Fraction(0)
        return max(Fraction(0), self.subtree.get(fr, Fraction(0)) - quota.lending_limit)

    def local_available(self, fr: FlavorResource) -> Fraction:
        return max(Fraction(0), self.local_quota(fr) - self.usage.get(fr, Fraction(0)))


def _amount(value: Any) -> Fraction:
    return quantity.parse(value)


def _quotas(resource_groups: Iterable[Mapping[str, Any]]) -> dict[FlavorResource, _Quota]:
    out: dict[FlavorResource, _Quota] = {}
    for group in resource_groups:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                borrowing, lending = resource.get("borrowingLimit"), resource.get("lendingLimit")
                out[(str(flavor.get("name")), str(resource.get("name")))] = _Quota(
                    _amount(resource.get("nominalQuota", 0)),
                    None if borrowing is None else _amount(borrowing),
                    None if lending is None else _amount(lending),
                )
    return out


def cohort_of(cq: Mapping[str, Any]) -> str | None:
    """The cohort a ClusterQueue belongs to (v1beta2 ``cohortName``, v1beta1 ``cohort``)."""
    spec = cq.get("spec") or {}
    return spec.get("cohortName") or spec.get("cohort") or None


class QuotaTree:
    """ClusterQueues and Cohorts with their quota and the usage of admitted Workloads."""

    def __init__(
        self,
        cluster_queues: Iterable[Mapping[str, Any]],
        cohorts: Iterable[Mapping[str, Any]] = (),
        admitted: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        self.cluster_queues: dict[str, JSON] = {}
        self._queues: dict[str, _Node] = {}
        self._cohorts: dict[str, _Node] = {}
        for cohort in cohorts:
            name = str(cohort["metadata"]["name"])
            node = self._cohort(name)
            spec = cohort.get("spec") or {}
            node.quotas = _quotas(spec.get("resourceGroups") or [])
            parent = spec.get("parentName") or spec.get("parent")
            if parent:
                self._link(node, self._cohort(str(parent)))
        for cq in cluster_queues:
            name = str(cq["metadata"]["name"])
            self.cluster_queues[name] = dict(cq)
            node = _Node(name, quotas=_quotas((cq.get("spec") or {}).get("resourceGroups") or []))
            self._queues[name] = node
            cohort_name = cohort_of(cq)
            if cohort_name:
                self._link(node, self._cohort(cohort_name))
        for root in [n for n in self._cohorts.values() if n.parent is None]:
            self._sum_subtree(root, set())
        for node in self._queues.values():
            if node.parent is None:
                node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
        for workload in admitted:
            self.add_workload(workload)

    def _cohort(self, name: str) -> _Node:
        return self._cohorts.setdefault(name, _Node(name, cohort=True))

    @staticmethod
    def _link(child: _Node, parent: _Node) -> None:
        child.parent = parent
        parent.children.append(child)

    def _sum_subtree(self, node: _Node, seen: set[str]) -> None:
        if node.name in seen:  # a cycle of Cohorts: Kueue refuses to admit there too
            return
        seen.add(node.name)
        node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
        for child in node.children:
            if child.cohort:
                self._sum_subtree(child, seen)
            else:
                child.subtree = {fr: q.nominal for fr, q in child.quotas.items()}
            for fr, amount in child.subtree.items():
                lent = amount - child.local_quota(fr)
                node.subtree[fr] = node.subtree.get(fr, Fraction(0)) + lent

    # -- usage ----------------------------------------------------------------------------------

    def add_usage(self, cluster_queue: str, usage: Mapping[FlavorResource, Fraction]) -> None:
        node = self._queues.get(cluster_queue)
        if node is None:
            return
        for fr, amount in usage.items():
            self._add(node, fr, amount)

    def _add(self, node: _Node, fr: FlavorResource, amount: Fraction) -> None:
        local = node.local_available(fr)
        node.usage[fr] = node.usage.get(fr, Fraction(0)) + amount
        if node.parent is not None and amount > local:
            self._add(node.parent, fr, amount - local)

    def add_workload(self, workload: Mapping[str, Any]) -> None:
        """Count an admitted Workload's ``status.admission`` against its ClusterQueue."""
        admission = (workload.get("status") or {}).get("admission") or {}
        self.add_usage(str(admission.get("clusterQueue") or ""), admission_usage(admission))

    def usage(self, cluster_queue: str) -> dict[FlavorResource, Fraction]:
        node = self._queues.get(cluster_queue)
        return dict(node.usage) if node is not None else {}

    # -- Kueue's formulas -----------------------------------------------------------------------

    def quota(self, cluster_queue: str, fr: FlavorResource) -> Fraction | None:
        """The nominal quota of (flavor, resource), None when the queue has none."""
        node = self._queues.get(cluster_queue)
        found = node.quotas.get(fr) if node is not None else None
        return found.nominal if found is not None else None

    def available(self, cluster_queue: str, fr: FlavorResource) -> Fraction:
        return _available(self._queues[cluster_queue], fr)

    def potential_available(self, cluster_queue: str, fr: FlavorResource) -> Fraction:
        return _potential(self._queues[cluster_queue], fr)

    def borrowing_level(self, cluster_queue: str, fr: FlavorResource, value: Fraction) -> int:
        """0 when `value` (usage included) fits the queue's own quota; else how many levels up
        the tree the quota comes from."""
        node: _Node | None = self._queues[cluster_queue]
        level, remaining = 0, value
        while node is not None:
            if remaining <= node.subtree.get(fr, Fraction(0)) or node.parent is None:
                return level
            remaining -= node.local_available(fr)
            node, level = node.parent, level + 1
        return level


def _available(node: _Node, fr: FlavorResource) -> Fraction:
    if node.parent is None:
        return node.subtree.get(fr, Fraction(0)) - node.usage.get(fr, Fraction(0))
    from_parent = _available(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        local = node.local_quota(fr)
        stored = node.subtree.get(fr, Fraction(0)) - local
        used = max(Fraction(0), node.usage.get(fr, Fraction(0)) - local)
        from_parent = min(stored - used + quota.borrowing_limit, from_parent)
    return node.local_available(fr) + from_parent


def _potential(node: _Node, fr: FlavorResource) -> Fraction:
    if node.parent is None:
        return node.subtree.get(fr, Fraction(0))
    most = node.local_quota(fr) + _potential(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        most = min(node.subtree.get(fr, Fraction(0)) + quota.borrowing_limit, most)
    return most


def admission_usage(admission: Mapping[str, Any]) -> dict[FlavorResource, Fraction]:
    """What an ``admission`` holds, per (flavor, resource)."""
    out: dict[FlavorResource, Fraction] = {}
    for assignment in admission.get("podSetAssignments") or []:
        flavors = assignment.get("flavors") or {}
        for resource, amount in (assignment.get("resourceUsage") or {}).items():
            key = (str(flavors.get(resource, "")), str(resource))
            out[key] = out.get(key, Fraction(0)) + _amount(amount)
    return out


# -- what a pod set asks for --------------------------------------------------------------------


def _container_requests(container: Mapping[str, Any]) -> dict[str, Fraction]:
    resources = container.get("resources") or {}
    wanted = dict(resources.get("limits") or {})  # limits stand in for unset requests
    wanted.update(resources.get("requests") or {})
    return {str(k): _amount(v) for k, v in wanted.items()}


def pod_requests(template: Mapping[str, Any]) -> dict[str, Fraction]:
    """One pod's effective requests: its containers together, or its largest init container
    where that asks for more, plus the pod's overhead."""
    spec = template.get("spec") or {}
    total: dict[str, Fraction] = {}
    for container in spec.get("containers") or []:
        quantity.add(total, _container_requests(container))
    for init in spec.get("initContainers") or []:
        for name, amount in _container_requests(init).items():
            total[name] = max(total.get(name, Fraction(0)), amount)
    quantity.add(total, {str(k): _amount(v) for k, v in (spec.get("overhead") or {}).items()})
    return total


def pod_set_requests(pod_set: Mapping[str, Any]) -> dict[str, Fraction]:
    """A Workload pod set's requests for all its pods."""
    count = int(pod_set.get("count") or 0)
    return {k: v * count for k, v in pod_requests(pod_set.get("template") or {}).items()}


def format_amount(resource: str, value: Fraction) -> str:
    """An amount as Kueue's resource formatter prints it (``resource.Quantity.String()``)."""
    return quantity.spell(resource, value)


# -- node selection -----------------------------------------------------------------------------


def _untolerated_taint(
    taints: Iterable[Mapping[str, Any]], tolerations: Iterable[Mapping[str, Any]]
) -> str | None:
    """The first NoSchedule / NoExecute taint no toleration tolerates, spelt ``k=v:Effect``."""
    tolerations = list(tolerations)
    for taint in taints:
        effect = taint.get("effect")
        if effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            value = taint.get("value")
            return (
                f"{taint.get('key')}={value}:{effect}" if value else f"{taint.get('key')}:{effect}"
            )
    return None


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return str(toleration.get("value") or "") == str(taint.get("value") or "")


# -- assignment ---------------------------------------------------------------------------------


@dataclass
class PodSetAssignment:
    """One pod set's flavors (resource -> flavor), its total usage, and why it did not fit."""

    name: str
    count: int
    flavors: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Fraction] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    mode: int = FIT
    borrows: bool = False

    def to_api(self) -> JSON:
        """The ``status.admission.podSetAssignments`` entry Kueue writes."""
        return {
            "name": self.name,
            "flavors": dict(self.flavors),
            "resourceUsage": {r: format_amount(r, v) for r, v in self.usage.items()},
            "count": self.count,
        }


@dataclass
class Assignment:
    """A Workload's flavor assignment in one ClusterQueue."""

    cluster_queue: str
    pod_sets: list[PodSetAssignment]

    @property
    def mode(self) -> int:
        return min((p.mode for p in self.pod_sets), default=NO_FIT)

    @property
    def fits(self) -> bool:
        return self.mode == FIT

    @property
    def borrows(self) -> bool:
        return any(p.borrows for p in self.pod_sets)

    def message(self) -> str:
        """Why it does not fit, in Kueue's words (empty when it fits)."""
        parts = []
        for pod_set in self.pod_sets:
            if pod_set.mode == FIT:
                continue
            reasons = ", ".join(sorted(pod_set.reasons))
            parts.append(f"couldn't assign flavors to pod set {pod_set.name}: {reasons}")
        return "; ".join(parts)

    def usage(self) -> dict[FlavorResource, Fraction]:
        out: dict[FlavorResource, Fraction] = {}
        for pod_set in self.pod_sets:
            for resource, amount in pod_set.usage.items():
                key = (pod_set.flavors[resource], resource)
                out[key] = out.get(key, Fraction(0)) + amount
        return out


def _groups(cq: Mapping[str, Any]) -> list[JSON]:
    return list((cq.get("spec") or {}).get("resourceGroups") or [])


def _group_for(cq: Mapping[str, Any], resource: str) -> JSON | None:
    return next((g for g in _groups(cq) if resource in (g.get("coveredResources") or [])), None)


def _flavor_refusal(
    name: str, flavor: Mapping[str, Any] | None, pod_spec: Mapping[str, Any]
) -> str | None:
    """Why a flavor cannot hold the pod set at all (taints, node labels), or None."""
    if flavor is None:
        return f"flavor {name} not found"
    spec = flavor.get("spec") or {}
    tolerations = [*(pod_spec.get("tolerations") or []), *(spec.get("tolerations") or [])]
    taint = _untolerated_taint(spec.get("nodeTaints") or [], tolerations)
    if taint is not None:
        return f"untolerated taint {taint} in flavor {name}"
    labels = {str(k): str(v) for k, v in (spec.get("nodeLabels") or {}).items()}
    if not node_selector_matches(pod_spec, labels, keys=labels):
        return f"flavor {name} doesn't match node affinity"
    return None


def _try_next_when_borrowing(cq: Mapping[str, Any]) -> bool:
    fungibility = (cq.get("spec") or {}).get("flavorFungibility") or {}
    return fungibility.get("whenCanBorrow") == "TryNextFlavor"


def assign_flavors(
    workload: Mapping[str, Any],
    cluster_queue: str,
    tree: QuotaTree,
    flavors: Mapping[str, Mapping[str, Any]],
) -> Assignment:
    """How Kueue would assign flavors to `workload` in `cluster_queue` now (`flavors`: the
    ResourceFlavors by name)."""
    cq = tree.cluster_queues[cluster_queue]
    covers_pods = _group_for(cq, "pods") is not None
    taken: dict[FlavorResource, Fraction] = {}  # by earlier pod sets of this Workload
    out = []
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        count = int(pod_set.get("count") or 0)
        requests = pod_set_requests(pod_set)
        if covers_pods:
            requests["pods"] = Fraction(count)
        result = PodSetAssignment(str(pod_set.get("name")), count, usage=dict(requests))
        pod_spec = (pod_set.get("template") or {}).get("spec") or {}
        _assign_pod_set(result, requests, pod_spec, cq, cluster_queue, tree, flavors, taken)
        if result.mode == FIT:
            for resource, amount in result.usage.items():
                key = (result.flavors[resource], resource)
                taken[key] = taken.get(key, Fraction(0)) + amount
        out.append(result)
    return Assignment(cluster_queue, out)


def _assign_pod_set(
    result: PodSetAssignment,
    requests: dict[str, Fraction],
    pod_spec: Mapping[str, Any],
    cq: Mapping[str, Any],
    cq_name: str,
    tree: QuotaTree,
    flavors: Mapping[str, Mapping[str, Any]],
    taken: Mapping[FlavorResource, Fraction],
) -> None:
    """Kueue's loop over a pod set's resources: a resource no group covers, or a group with
    no flavor that could ever hold it, ends the search with that reason alone; a group that
    must wait adds its reasons and the search goes on."""
    for resource in sorted(requests, key=lambda r: (_group_for(cq, r) is not None, r)):
        if resource in result.flavors:
            continue  # its group's flavor was chosen with an earlier resource
        group = _group_for(cq, resource)
        if group is None:
            if requests[resource] == 0:
                result.usage.pop(resource, None)
                continue
            result.flavors, result.mode = {}, NO_FIT
            result.reasons = [f"resource {resource} unavailable in ClusterQueue"]
            return
        covered = [r for r in requests if r in (group.get("coveredResources") or [])]
        chosen, mode, level, reasons = _pick_flavor(
            group, covered, requests, pod_spec, cq, cq_name, tree, flavors, taken
        )
        if chosen is None:
            result.flavors, result.mode, result.reasons = {}, NO_FIT, reasons
            return
        for name in covered:
            result.flavors[name] = chosen
        result.mode = min(result.mode, mode)
        result.reasons += reasons
        result.borrows = result.borrows or level > 0
    result.usage = {r: v for r, v in result.usage.items() if r in result.flavors}


def _pick_flavor(
    group: Mapping[str, Any],
    covered: list[str],
    requests: Mapping[str, Fraction],
    pod_spec: Mapping[str, Any],
    cq: Mapping[str, Any],
    cq_name: str,
    tree: QuotaTree,
    flavors: Mapping[str, Mapping[str, Any]],
    taken: Mapping[FlavorResource, Fraction],
) -> tuple[str | None, int, int, list[str]]:
    """Kueue's search of a resource group's flavors, in order: (the flavor chosen, or None when
    none could ever hold the pod set; FIT or WAIT; its borrowing level; the reasons the
    flavors tried gave, which count only when none fits now)."""
    reasons: list[str] = []
    best: tuple[str | None, int, int] = (None, NO_FIT, 2**31)
    for entry in group.get("flavors") or []:
        name = str(entry.get("name"))
        refusal = _flavor_refusal(name, flavors.get(name), pod_spec)
        if refusal is not None:
            reasons.append(refusal)
            continue
        mode, level = FIT, 0
        for resource in sorted(covered):  # every resource is checked, even after a no-fit
            fr = (name, resource)
            before = taken.get(fr, Fraction(0))
            value = before + requests[resource]
            most = tree.potential_available(cq_name, fr)
            if value > most:
                reasons.append(
                    f"insufficient quota for {resource} in flavor {name}, previously considered "
                    f"podsets requests ({format_amount(resource, before)}) + current podset "
                    f"request ({format_amount(resource, requests[resource])}) > maximum "
                    f"capacity ({format_amount(resource, most)})"
                )
                mode = NO_FIT
                continue
            free = tree.available(cq_name, fr)
            if value > free:
                reasons.append(
                    f"insufficient unused quota for {resource} in flavor {name}, "
                    f"{format_amount(resource, value - free)} more needed"
                )
                mode = min(mode, WAIT)
                continue
            level = max(level, tree.borrowing_level(cq_name, fr, value))
        if mode == FIT and (level == 0 or not _try_next_when_borrowing(cq)):
            return name, FIT, level, []
        if mode != NO_FIT and (mode, -level) > (best[1], -best[2]):
            best = (name, mode, level)
    if best[1] == FIT:
        return best[0], FIT, best[2], []
    return best[0], best[1], best[2], reasons
