"""AppWrapper between MCAD's ``workload.codeflare.dev/v1beta1`` and ``v1beta2``.

Both wrap a list of Kubernetes objects; MCAD (multi-cluster-app-dispatcher, v1.40 and
earlier) also schedules them itself, while v1beta2 leaves queueing to Kueue. What converts:

* ``spec.resources.GenericItems[i].generictemplate`` <-> ``spec.components[i].template``;
  an item's ``replicas`` must be 1 (one copy of the object, as a component is).
* ``custompodresources[j]`` (replicas, requests, limits of a pod set) <-> ``podSets[j]``
  (replicas and the path of the pod template inside the component), the paths being those
  AppWrapper infers for the wrapped kind (Pod, Job, Deployment, StatefulSet, ReplicaSet,
  RayCluster, PyTorchJob, JobSet). v1beta2 reads a pod set's resources from its template, so
  going to v1beta2 each declared request and limit must equal the template's (absent counts
  as zero); going back they are read from the template, and only pod sets at the paths
  AppWrapper infers, in its order, convert (MCAD's entries name no template). Without
  declared pod sets both versions work them out from the wrapped object.

Refused by path, because the target has no counterpart: v1beta1's ``spec.schedulingSpec``
(MCAD's gang size, requeuing and dispatch limits), ``spec.priority``/``priorityslope``
(Kueue uses priority classes), ``spec.service``, ``spec.selector``, the deprecated
``spec.resources.Items``, the items' ``completionstatus``, ``minavailable``, ``allocated``
and priorities, and custom pod resources of kinds without a known pod template; v1beta2's
``spec.suspend: true`` and ``spec.managedBy`` (MCAD dispatches, nothing else manages it),
components' ``annotations`` and ``podSetInfos``, and pod sets' ``annotations``; and a
``status`` either way (the two report progress differently). Fields neither version declares
are carried where their parent exists.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from functools import partial
from typing import TypeVar

from flarekit._json import JsonValue
from flarekit.compat._engine import Context, carry, load_model, made, unhandled
from flarekit.compat._head import head_of
from flarekit.compat._pod_templates import (
    Which,
    at_path,
    inferred_pod_sets,
    pod_resources,
    same_quantity,
)
from flarekit_models import KubeModel
from flarekit_models.appwrapper import v1beta1 as mcad
from flarekit_models.appwrapper import v1beta2

__all__ = ["MCAD", "V1BETA2", "appwrapper_v1beta1_to_v1beta2", "appwrapper_v1beta2_to_v1beta1"]

MCAD = ("workload.codeflare.dev/v1beta1", "AppWrapper")
V1BETA2 = ("workload.codeflare.dev/v1beta2", "AppWrapper")
_WHICH: tuple[Which, ...] = ("requests", "limits")
T = TypeVar("T", mcad.AppWrapper, v1beta2.AppWrapper)

_KUEUE = "AppWrapper v1beta2 is queued by Kueue"
_WHY_V1BETA1 = {
    "spec.schedulingSpec": f"{_KUEUE}; MCAD's gang size, requeuing and dispatch limits have "
    "no counterpart (Kueue admits the whole AppWrapper)",
    "spec.priority": f"{_KUEUE}: give it a WorkloadPriorityClass (label "
    "kueue.x-k8s.io/priority-class) instead",
    "spec.priorityslope": "MCAD's priority aging has no counterpart",
    "spec.service": "wrap the Service as a component of its own",
    "spec.selector": "v1beta2 has no selector",
    "spec.resources.Items": "the deprecated Items list has no counterpart; use GenericItems",
    "completionstatus": "v1beta2 decides completion from the wrapped objects' own status",
    "minavailable": "v1beta2 takes the gang size from the pod sets",
    "allocated": "MCAD bookkeeping with no counterpart",
    "priority": f"{_KUEUE}; priorities are per AppWrapper there",
    "priorityslope": "MCAD's priority aging has no counterpart",
}


def _refuse_status(status: KubeModel | None, ctx: Context) -> None:
    if status is not None and status.to_dict():
        ctx.refuse("status", "the two versions report progress differently; convert without status")


def _unknown_or_refuse(
    part: KubeModel, handled: Collection[str], where: str, schema_prefix: str, ctx: Context
) -> dict[str, JsonValue]:
    """The fields of `part` (by JSON name) the conversion does not handle itself: unknown
    extras are carried, a field the source version declares is refused."""
    out: dict[str, JsonValue] = {}
    for key, value in part.to_dict().items():
        if key in handled:
            continue
        if ctx.source.has(f"{schema_prefix}{key}"):
            path = f"{where}.{key}"
            why = _WHY_V1BETA1.get(path) or _WHY_V1BETA1.get(key)
            ctx.refuse(path, why or f"{ctx.target.name} has no counterpart")
        out[key] = value
    return out


def _finish(target: T, source: mcad.AppWrapper | v1beta2.AppWrapper) -> T:
    """`target` with the source's metadata and unknown top-level fields (copies)."""
    if source.metadata is not None:
        target.metadata = source.metadata.model_copy(deep=True)
    return carry(target, copy.deepcopy(source.model_extra or {}))


def _kind_of(template: Mapping[str, JsonValue]) -> str:
    head = head_of(template)
    return f"{head.api_version} {head.kind}"


# -- v1beta1 -> v1beta2 -------------------------------------------------------------------------


def appwrapper_v1beta1_to_v1beta2(obj: KubeModel | Mapping[str, JsonValue]) -> v1beta2.AppWrapper:
    """An MCAD AppWrapper as an AppWrapper v1beta2."""
    ctx = Context.of(MCAD, V1BETA2)
    source = load_model(obj, mcad.AppWrapper, ctx)
    _refuse_status(source.status, ctx)
    resources = source.spec.resources
    left = _unknown_or_refuse(resources, {"GenericItems"}, "spec.resources", "spec.resources.", ctx)
    for key, value in sorted(left.items()):
        if key == "Items" and not value:
            continue  # MCAD's deprecated list, empty: nothing to carry
        path = f"spec.resources.{key}"
        ctx.refuse(path, _WHY_V1BETA1.get(path) or "v1beta2 has no spec.resources")
    extra = _unknown_or_refuse(source.spec, {"resources"}, "spec", "spec.", ctx)
    components = [_component(item, i, ctx) for i, item in enumerate(resources.generic_items or [])]
    spec = made(lambda: v1beta2.AppWrapperSpec(components=components), "spec", ctx)
    return _finish(v1beta2.AppWrapper(spec=carry(spec, extra)), source)


def _component(item: mcad.GenericItem, index: int, ctx: Context) -> v1beta2.Component:
    where = f"spec.resources.GenericItems[{index}]"
    replicas = 1 if item.replicas is None else item.replicas
    if replicas != 1:
        ctx.refuse(
            f"{where}.replicas",
            f"is {replicas!r}; a v1beta2 component is one copy of its object (only 1 converts)",
        )
    template = item.generictemplate
    if template is None:
        ctx.refuse(f"{where}.generictemplate", "required: the object to wrap")
    handled = {"replicas", "generictemplate", "custompodresources"}
    extra = _unknown_or_refuse(item, handled, where, "spec.resources.GenericItems[].", ctx)
    wrapped = dict(template)
    component = carry(made(lambda: v1beta2.Component(template=wrapped), where, ctx), extra)
    if item.custompodresources:
        component.pod_sets = _pod_sets(template, item.custompodresources, where, ctx)
    return component


def _pod_sets(
    template: Mapping[str, JsonValue],
    custom: list[mcad.Custompodresource],
    where: str,
    ctx: Context,
) -> list[v1beta2.PodSet]:
    inferred = inferred_pod_sets(template)
    kind = _kind_of(template)
    if inferred is None:
        ctx.refuse(
            f"{where}.custompodresources",
            f"flarekit does not know where the pod templates of a {kind} are, so the pod sets "
            "cannot be named",
        )
    if len(custom) != len(inferred):
        paths = ", ".join(p for p, _ in inferred)
        ctx.refuse(
            f"{where}.custompodresources",
            f"lists {len(custom)} pod sets; this {kind} has {len(inferred)} pod templates "
            f"({paths})",
        )
    component: dict[str, JsonValue] = {"template": dict(template)}
    out = []
    for j, (resources, (path, _)) in enumerate(zip(custom, inferred, strict=True)):
        cwhere = f"{where}.custompodresources[{j}]"
        pod = at_path(component, path)
        for which in _WHICH:
            declared = (resources.requests if which == "requests" else resources.limits) or {}
            actual = pod_resources(pod, which)
            for name in sorted(set(declared) | set(actual)):
                if name in declared and not same_quantity(declared[name], actual.get(name)):
                    ctx.refuse(
                        f"{cwhere}.{which}[{name}]",
                        f"MCAD accounts {declared[name]!r} but the pod template at {path} "
                        f"{'requests' if which == 'requests' else 'limits it to'} "
                        f"{actual.get(name, 0)!r}; v1beta2 reads resources from the template",
                    )
        handled = {"requests", "limits", "replicas"}
        prefix = "spec.resources.GenericItems[].custompodresources[]."
        extra = _unknown_or_refuse(resources, handled, cwhere, prefix, ctx)
        replicas = resources.replicas
        pod_set = made(partial(v1beta2.PodSet, path=path, replicas=replicas), cwhere, ctx)
        out.append(carry(pod_set, extra))
    return out


# -- v1beta2 -> v1beta1 -------------------------------------------------------------------------


def appwrapper_v1beta2_to_v1beta1(obj: KubeModel | Mapping[str, JsonValue]) -> mcad.AppWrapper:
    """An AppWrapper v1beta2 as an MCAD AppWrapper (for clusters that run MCAD v1.40)."""
    ctx = Context.of(V1BETA2, MCAD)
    source = load_model(obj, v1beta2.AppWrapper, ctx)
    _refuse_status(source.status, ctx)
    spec = source.spec or v1beta2.AppWrapperSpec(components=[])
    if spec.suspend:
        ctx.refuse("spec.suspend", "an MCAD AppWrapper cannot be suspended (MCAD dispatches it)")
    if spec.managed_by is not None:
        ctx.refuse("spec.managedBy", "MCAD manages every v1beta1 AppWrapper itself")
    handled = {"components", "suspend", "managedBy"}
    extra = _unknown_or_refuse(spec, handled, "spec", "spec.", ctx)
    items = [_generic_item(c, i, ctx) for i, c in enumerate(spec.components)]
    resources = mcad.AppWrapperResources(generic_items=items)
    out_spec = carry(mcad.AppWrapperSpec(resources=resources), extra)
    return _finish(mcad.AppWrapper(spec=out_spec), source)


def _generic_item(component: v1beta2.Component, index: int, ctx: Context) -> mcad.GenericItem:
    where = f"spec.components[{index}]"
    if component.annotations:
        ctx.refuse(f"{where}.annotations", "MCAD does not annotate the objects it creates")
    if component.pod_set_infos:
        ctx.refuse(
            f"{where}.podSetInfos",
            "MCAD cannot inject labels, node selectors or tolerations into pods",
        )
    handled = {"template", "annotations", "podSetInfos", "podSets"}
    extra = _unknown_or_refuse(component, handled, where, "spec.components[].", ctx)
    template = dict(component.template)
    item = carry(mcad.GenericItem(replicas=1, generictemplate=template), extra)
    if component.pod_sets:
        item.custompodresources = _custom_resources(template, component.pod_sets, where, ctx)
    return item


def _custom_resources(
    template: Mapping[str, JsonValue], declared: list[v1beta2.PodSet], where: str, ctx: Context
) -> list[mcad.Custompodresource]:
    """MCAD's list of pod resources for declared pod sets. MCAD's entries have no path, so
    only the pod sets AppWrapper infers for the kind, in its order, convert (and come back)."""
    inferred = [path for path, _ in inferred_pod_sets(template) or []]
    paths = [pod_set.path for pod_set in declared]
    if paths != inferred:
        known = ", ".join(inferred) if inferred else "none known to flarekit"
        ctx.refuse(
            f"{where}.podSets",
            f"MCAD's custompodresources name no pod template, so only the pod sets of a "
            f"{_kind_of(template)} in their usual order convert ({known}); these are "
            f"{', '.join(paths)}",
        )
    component: dict[str, JsonValue] = {"template": dict(template)}
    out = []
    for j, pod_set in enumerate(declared):
        cwhere = f"{where}.podSets[{j}]"
        if pod_set.annotations:
            ctx.refuse(f"{cwhere}.annotations", "MCAD does not annotate the pods")
        pod = at_path(component, paths[j])
        replicas = 1 if pod_set.replicas is None else pod_set.replicas
        requests, limits = pod_resources(pod, "requests"), pod_resources(pod, "limits")
        entry = made(
            partial(mcad.Custompodresource, replicas=replicas, requests=requests), cwhere, ctx
        )
        if limits:
            entry.limits = limits
        out.append(carry(entry, unhandled(pod_set, {"path", "replicas", "annotations"})))
    return out
