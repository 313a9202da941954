"""What every Kueue admin object description shares: validated on construction, rendered
offline into the models of either Kueue version, as dicts or YAML.

Why: an admin writes a ResourceFlavor, ClusterQueue, LocalQueue or WorkloadPriorityClass in a
few Python arguments; every mistake is reported at once, naming the argument, before anything
reaches a cluster, and the same description renders for Kueue ``v1beta2`` or ``v1beta1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from flarekit._json import JsonObject, JsonValue
from flarekit._validation import ValidationReport
from flarekit._yaml import to_yaml
from flarekit.client import KUEUE_GROUP, KUEUE_VERSIONS, KueueVersion
from flarekit.kueue._models import kueue_model

if TYPE_CHECKING:
    from flarekit_models import KubeResource

__all__ = ["KueueObjectSpec", "check_version", "drop_none"]


def check_version(version: object) -> KueueVersion:
    """A Kueue API version flarekit renders, or a clear error."""
    if version not in KUEUE_VERSIONS:
        allowed = ", ".join(repr(v) for v in KUEUE_VERSIONS)
        raise ValueError(f"version must be one of {allowed}; got {version!r}")
    return "v1beta2" if version == "v1beta2" else "v1beta1"


class KueueObjectSpec:
    """Base of the admin descriptions: subclasses are dataclasses with `name` (and
    `namespace` when namespaced) that define `kind`, `_check` and `_content`."""

    kind: ClassVar[str]
    name: str

    def __post_init__(self) -> None:
        self.validate().raise_if_problems()

    def validate(self) -> ValidationReport:
        """Every problem of this description (empty when valid)."""
        report = ValidationReport(f"{self.kind} {getattr(self, 'name', '')!r}".strip())
        self._check(report)
        return report

    def _check(self, report: ValidationReport) -> None:
        raise NotImplementedError

    def _content(self, version: KueueVersion) -> JsonObject:
        """The object's JSON without apiVersion, kind and metadata."""
        raise NotImplementedError

    def _metadata(self) -> JsonObject:
        return {"name": self.name}

    def to_dict(self, version: KueueVersion = "v1beta2") -> JsonObject:
        """Kubernetes JSON of this object in Kueue API `version`."""
        chosen = check_version(version)
        body: JsonObject = {
            "apiVersion": f"{KUEUE_GROUP}/{chosen}",
            "kind": self.kind,
            "metadata": self._metadata(),
        }
        body.update(self._content(chosen))
        return body

    def render(self, version: KueueVersion = "v1beta2") -> KubeResource:
        """The typed model (``flarekit_models.kueue.<version>.<Kind>``) of this object."""
        chosen = check_version(version)
        model: KubeResource = kueue_model(chosen, self.kind).model_validate(self.to_dict(chosen))
        return model

    def to_yaml(self, version: KueueVersion = "v1beta2") -> str:
        """Block YAML of this object, for review or ``kubectl apply -f``."""
        return to_yaml(self.render(version))


def drop_none(values: Mapping[str, JsonValue]) -> JsonObject:
    """The entries that are set."""
    return {k: v for k, v in values.items() if v is not None}
