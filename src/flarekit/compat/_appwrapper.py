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

from collections.abc import Mapping
from typing import Any

from flarekit.compat._engine import Context, build, load
from flarekit.compat._pod_templates import at_path, inferred_pod_sets, pod_resources, same_quantity
from flarekit_models._base import KubeModel, KubeResource

__all__ = ["MCAD", "V1BETA2", "appwrapper_v1beta1_to_v1beta2", "appwrapper_v1beta2_to_v1beta1"]

MCAD = ("workload.codeflare.dev/v1beta1", "AppWrapper")
V1BETA2 = ("workload.codeflare.dev/v1beta2", "AppWrapper")

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


def _refuse_status(data: Mapping[str, Any], ctx: Context) -> None:
    if data.get("status"):
        ctx.refuse("status", "the two versions report progress differently; convert without status")


def _unknown_or_refuse(
    left: Mapping[str, Any], where: str, schema_prefix: str, ctx: Context
) -> dict[str, Any]:
    """The unknown extras of `left` (carried); a declared field is refused."""
    out: dict[str, Any] = {}
    for key, value in left.items():
        if ctx.source.has(f"{schema_prefix}{key}"):
            why = _WHY_V1BETA1.get(f"{where}.{key}") or _WHY_V1BETA1.get(key)
            ctx.refuse(f"{where}.{key}", why or f"{ctx.target.name} has no counterpart")
        out[key] = value
    return out


# -- v1beta1 -> v1beta2 -------------------------------------------------------------------------


def appwrapper_v1beta1_to_v1beta2(obj: KubeModel | Mapping[str, Any]) -> KubeResource:
    """An MCAD AppWrapper as an AppWrapper v1beta2."""
    ctx = Context.of(MCAD, V1BETA2)
    data = load(obj, ctx)
    _refuse_status(data, ctx)
    data.pop("status", None)
    spec = dict(data.pop("spec", None) or {})
    resources = dict(spec.pop("resources", None) or {})
    items = resources.pop("GenericItems", None) or []
    if resources.get("Items"):
        ctx.refuse("spec.resources.Items", _WHY_V1BETA1["spec.resources.Items"])
    resources.pop("Items", None)
    extra = _unknown_or_refuse(resources, "spec.resources", "spec.resources.", ctx)
    if extra:
        ctx.refuse(f"spec.resources.{sorted(extra)[0]}", "v1beta2 has no spec.resources")
    out_spec = _unknown_or_refuse(spec, "spec", "spec.", ctx)
    out_spec["components"] = [_component(item, i, ctx) for i, item in enumerate(items)]
    return build({**data, "spec": out_spec}, ctx)


def _component(item: Mapping[str, Any], index: int, ctx: Context) -> dict[str, Any]:
    where = f"spec.resources.GenericItems[{index}]"
    item = dict(item)
    replicas = item.pop("replicas", 1)
    if replicas != 1:
        ctx.refuse(
            f"{where}.replicas",
            f"is {replicas!r}; a v1beta2 component is one copy of its object (only 1 converts)",
        )
    template = item.pop("generictemplate", None)
    if not isinstance(template, Mapping):
        ctx.refuse(f"{where}.generictemplate", "required: the object to wrap")
    custom = item.pop("custompodresources", None) or []
    component = _unknown_or_refuse(item, where, "spec.resources.GenericItems[].", ctx)
    component["template"] = dict(template)
    if custom:
        component["podSets"] = _pod_sets(component, custom, where, ctx)
    return component


def _pod_sets(
    component: Mapping[str, Any], custom: list[Any], where: str, ctx: Context
) -> list[dict[str, Any]]:
    template = component["template"]
    inferred = inferred_pod_sets(template)
    kind = f"{template.get('apiVersion')} {template.get('kind')}"
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
    out = []
    for j, (resources, (path, _)) in enumerate(zip(custom, inferred, strict=True)):
        cwhere = f"{where}.custompodresources[{j}]"
        resources = dict(resources)
        pod = at_path(component, path)
        for which in ("requests", "limits"):
            declared = resources.pop(which, None) or {}
            actual = pod_resources(pod, which)
            for name in sorted(set(declared) | set(actual)):
                if name in declared and not same_quantity(declared[name], actual.get(name)):
                    ctx.refuse(
                        f"{cwhere}.{which}[{name}]",
                        f"MCAD accounts {declared[name]!r} but the pod template at {path} "
                        f"{'requests' if which == 'requests' else 'limits it to'} "
                        f"{actual.get(name, 0)!r}; v1beta2 reads resources from the template",
                    )
        pod_set: dict[str, Any] = {"path": path}
        if "replicas" in resources:
            pod_set["replicas"] = resources.pop("replicas")
        pod_set.update(
            _unknown_or_refuse(
                resources, cwhere, "spec.resources.GenericItems[].custompodresources[].", ctx
            )
        )
        out.append(pod_set)
    return out


# -- v1beta2 -> v1beta1 -------------------------------------------------------------------------


def appwrapper_v1beta2_to_v1beta1(obj: KubeModel | Mapping[str, Any]) -> KubeResource:
    """An AppWrapper v1beta2 as an MCAD AppWrapper (for clusters that run MCAD v1.40)."""
    ctx = Context.of(V1BETA2, MCAD)
    data = load(obj, ctx)
    _refuse_status(data, ctx)
    data.pop("status", None)
    spec = dict(data.pop("spec", None) or {})
    components = spec.pop("components", None) or []
    if spec.get("suspend"):
        ctx.refuse("spec.suspend", "an MCAD AppWrapper cannot be suspended (MCAD dispatches it)")
    spec.pop("suspend", None)
    if "managedBy" in spec:
        ctx.refuse("spec.managedBy", "MCAD manages every v1beta1 AppWrapper itself")
    out_spec = _unknown_or_refuse(spec, "spec", "spec.", ctx)
    items = [_generic_item(c, i, ctx) for i, c in enumerate(components)]
    out_spec["resources"] = {"GenericItems": items}
    return build({**data, "spec": out_spec}, ctx)


def _generic_item(component: Mapping[str, Any], index: int, ctx: Context) -> dict[str, Any]:
    where = f"spec.components[{index}]"
    component = dict(component)
    template = component.pop("template", None)
    if not isinstance(template, Mapping):
        ctx.refuse(f"{where}.template", "required: the object to wrap")
    for key, why in (
        ("annotations", "MCAD does not annotate the objects it creates"),
        ("podSetInfos", "MCAD cannot inject labels, node selectors or tolerations into pods"),
    ):
        if component.pop(key, None):
            ctx.refuse(f"{where}.{key}", why)
    declared = component.pop("podSets", None)
    item = _unknown_or_refuse(component, where, "spec.components[].", ctx)
    out: dict[str, Any] = {"replicas": 1}
    if declared:
        out["custompodresources"] = _custom_resources({"template": template}, declared, where, ctx)
    out["generictemplate"] = dict(template)
    out.update(item)
    return out


def _custom_resources(
    component: Mapping[str, Any], declared: list[Any], where: str, ctx: Context
) -> list[dict[str, Any]]:
    """MCAD's list of pod resources for declared pod sets. MCAD's entries have no path, so
    only the pod sets AppWrapper infers for the kind, in its order, convert (and come back)."""
    template = component["template"]
    inferred = [path for path, _ in inferred_pod_sets(template) or []]
    paths = [str(pod_set.get("path", "")) for pod_set in declared]
    if paths != inferred:
        kind = f"{template.get('apiVersion')} {template.get('kind')}"
        known = ", ".join(inferred) if inferred else "none known to flarekit"
        ctx.refuse(
            f"{where}.podSets",
            f"MCAD's custompodresources name no pod template, so only the pod sets of a {kind} "
            f"in their usual order convert ({known}); these are {', '.join(paths)}",
        )
    out = []
    for j, pod_set in enumerate(declared):
        if pod_set.get("annotations"):
            ctx.refuse(f"{where}.podSets[{j}].annotations", "MCAD does not annotate the pods")
        entry: dict[str, Any] = {"replicas": pod_set.get("replicas", 1)}
        pod = at_path(component, paths[j])
        for which in ("limits", "requests"):
            values = pod_resources(pod, which)
            if values:
                entry[which] = values
        out.append(entry)
    return out
