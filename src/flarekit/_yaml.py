"""Kubernetes objects as YAML for people: block style, no anchors, written by libyaml.

Stable text for reviews, diffs and ``kubectl apply -f``; every `to_yaml` of the facade
(clusters, jobs, queues) and the command line's YAML output write through here. The emitter is
libyaml's C one where PyYAML has it (as PyYAML's own wheels do): PyYAML's pure-Python emitter
takes about a minute per ten megabytes of YAML, libyaml a second or two, for the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import flarekit_models

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit_models import KubeModel

__all__ = ["dump_yaml", "to_yaml"]

_DUMPER: Any = None


def _dumper() -> Any:
    """A safe dumper (libyaml's emitter when present) that never writes anchors or aliases:
    a value that appears twice is written out twice, as Kubernetes tools expect."""
    global _DUMPER
    if _DUMPER is None:
        import yaml

        base = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper

        class Dumper(base):  # type: ignore[valid-type,misc]
            def ignore_aliases(self, data: object) -> bool:
                return True

        _DUMPER = Dumper
    return _DUMPER


def dump_yaml(data: JsonValue, *, sort_keys: bool) -> str:
    """JSON data as block-style YAML, keys sorted or in their order."""
    import yaml

    text: str = yaml.dump(
        data, Dumper=_dumper(), default_flow_style=False, sort_keys=sort_keys, allow_unicode=True
    )
    return text


def to_yaml(obj: KubeModel | Mapping[str, JsonValue]) -> str:
    """A model (its JSON form: JSON names, only the fields set) or JSON data as YAML, keys
    sorted."""
    data = obj.to_dict() if isinstance(obj, flarekit_models.KubeModel) else dict(obj)
    return dump_yaml(data, sort_keys=True)
