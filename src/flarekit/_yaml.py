"""Kubernetes objects as YAML for people: block style, sorted keys, no anchors.

Stable text for reviews, diffs and ``kubectl apply -f``; every `to_yaml` of the facade
(clusters, jobs, queues) writes through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from flarekit_models._base import KubeModel

if TYPE_CHECKING:
    from flarekit._json import JsonValue

__all__ = ["to_yaml"]


def to_yaml(obj: KubeModel | Mapping[str, JsonValue]) -> str:
    """A model (its JSON form: JSON names, only the fields set) or JSON data as YAML."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: object) -> bool:
            return True

    data = obj.to_dict() if isinstance(obj, KubeModel) else dict(obj)
    text: str = yaml.dump(
        data, Dumper=_Dumper, default_flow_style=False, sort_keys=True, allow_unicode=True
    )
    return text
