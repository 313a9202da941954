"""ResourceFlavor: one kind of node (its labels and taints) that ClusterQueues hand out.

Why: quota is given per flavor ("8 GPUs on the A100 nodes"); Kueue then steers an admitted
job's pods onto that flavor's nodes by adding its node labels as a node selector and its
tolerations to the pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import flarekit_models
from flarekit._core_checks import check_taints, check_tolerations
from flarekit._json import JsonObject, JsonValue
from flarekit._validation import (
    ValidationReport,
    check_dns1123_subdomain,
    check_labels,
)
from flarekit.client import KueueVersion
from flarekit.kueue._spec import KueueObjectSpec, drop_none
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit_models.core.v1 import Taint, Toleration

__all__ = ["ResourceFlavorSpec"]

_MAX_TAINTS = 8  # Kueue's limit for nodeTaints and tolerations alike


def check_core_models(report: ValidationReport, field: str, items: object, kind: str) -> None:
    """A list whose items are `flarekit_models.core.v1.<kind>` models or their JSON dicts."""
    if not isinstance(items, (list, tuple)):
        report.add(field, items, "expected a list", f"a list of {kind} models or dicts")
        return
    if len(items) > _MAX_TAINTS:
        report.add(field, items, f"{len(items)} items", f"at most {_MAX_TAINTS} items")
    if not items:
        return
    from pydantic import ValidationError

    model = getattr(core_v1, kind)
    for i, item in enumerate(items):
        if isinstance(item, model):
            continue
        if not isinstance(item, Mapping):
            report.add(f"{field}[{i}]", item, "expected a dict or a model", f"a {kind} or a dict")
            continue
        try:
            model.model_validate(item)
        except ValidationError as exc:
            report.add_model_errors(
                f"{field}[{i}]", exc, f"a valid {kind} (Kubernetes JSON field names)"
            )


def dump_core_models(
    items: Sequence[flarekit_models.KubeModel | Mapping[str, JsonValue]],
) -> list[JsonObject] | None:
    """Kubernetes JSON of a validated list of core models or dicts (None when empty)."""
    if not items:
        return None
    return [
        item.to_dict() if isinstance(item, flarekit_models.KubeModel) else dict(item)
        for item in items
    ]


@dataclass
class ResourceFlavorSpec(KueueObjectSpec):
    """A ResourceFlavor named `name`: nodes carrying `node_labels`; `node_taints` that Kueue
    considers when assigning this flavor, and `tolerations` it adds to admitted pods (lists of
    ``flarekit_models.core.v1`` Taint/Toleration models or their JSON dicts)."""

    kind = "ResourceFlavor"

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: list[Taint | Mapping[str, JsonValue]] = field(default_factory=list)
    tolerations: list[Toleration | Mapping[str, JsonValue]] = field(default_factory=list)

    def _check(self, report: ValidationReport) -> None:
        check_dns1123_subdomain(report, "name", self.name)
        check_labels(report, "node_labels", self.node_labels)
        for field_name, items, kind, check_values in (
            ("node_taints", self.node_taints, "Taint", check_taints),
            ("tolerations", self.tolerations, "Toleration", check_tolerations),
        ):
            before = len(report)
            check_core_models(report, field_name, items, kind)
            if len(report) == before:  # values the models' plain strings do not restrict
                check_values(report, field_name, items)

    def _content(self, version: KueueVersion) -> JsonObject:
        spec = drop_none(
            {
                "nodeLabels": dict(self.node_labels) or None,
                "nodeTaints": dump_core_models(self.node_taints),
                "tolerations": dump_core_models(self.tolerations),
            }
        )
        return {"spec": spec}
