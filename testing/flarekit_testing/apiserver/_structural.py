"""Admission of custom resources against a CRD version's ``openAPIV3Schema``.

``FakeCluster`` runs every write through :func:`admit`, which does what the Kubernetes API
server (``apiextensions-apiserver``) does to a custom resource before storing it, in the
same order:

1. **prune** fields the structural schema does not know (never ``apiVersion``, ``kind`` or
   ``metadata`` at the root or inside ``x-kubernetes-embedded-resource`` objects; nothing
   under ``x-kubernetes-preserve-unknown-fields`` except where properties are declared),
   drop non-nullable ``null`` values that have no default, and drop unknown ``metadata``
   fields the way decoding into ``ObjectMeta`` does;
2. **default**: apply ``default`` where a field is absent (or a non-nullable ``null``),
   deep-copied, inside objects, array items and ``additionalProperties`` values; defaults
   of fields whose parent object is absent are not applied;
3. **validate**: ``metadata.name`` / ``generateName`` / labels / annotations, then the
   OpenAPI value validations (type, nullable, required, enum, pattern, format, numeric
   bounds, lengths, item and property counts, uniqueItems, allOf/anyOf/oneOf/not,
   ``x-kubernetes-int-or-string``), then embedded resources (apiVersion/kind/metadata),
   then the uniqueness of ``x-kubernetes-list-type: set`` items and ``map`` keys.

The three steps live in ``_pruning`` (prune, default), ``_validation`` and ``_schema`` (the
compiled schema). Violations come back as ``_errors.Cause`` entries worded like the API server's
``Status.details.causes`` (``field.Error`` types such as ``FieldValueRequired`` and the
kube-openapi messages such as ``spec.replicas in body must be of type integer: "string"``).
Behaviour follows upstream even where upstream is lax or odd: unknown formats are ignored,
``maxLength`` violations read "Too long: value is too long", and a number outside its
``int32`` or ``float`` format's range is refused in a cause whose field is ``<nil>`` (the
place is in its message), as kube-openapi words it.

Not implemented: ``x-kubernetes-validations`` (CEL rules) are **not evaluated**; validation
ratcheting on update; ``isbn``/``creditcard`` formats (accepted as is). Patterns use Python's
``re`` after translating the RE2 constructs the pinned CRDs use (scoped ``(?i)``, ``$``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._names import dns1123_subdomain_errors
from flarekit_testing.apiserver._pruning import _default, _Pruner
from flarekit_testing.apiserver._schema import Schema, compiled
from flarekit_testing.apiserver._validation import _ROOT, _object_meta_causes, _Validator

__all__ = ["AdmissionResult", "Schema", "admit", "compiled"]


@dataclass
class AdmissionResult:
    """The object as the API server would store it, and what is wrong with it."""

    obj: dict[str, Any]
    causes: list[Cause] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.causes


def admit(
    obj: Mapping[str, Any],
    schema: Mapping[str, Any],
    names: Callable[[str], list[str]] = dns1123_subdomain_errors,
    spec_replicas_path: str | None = None,
) -> AdmissionResult:
    """Prune, default and validate ``obj`` against a CRD version's ``openAPIV3Schema``.

    ``obj`` is never modified; ``AdmissionResult.obj`` is the object as the API server would
    persist it (if ``causes`` is empty) and ``unknown_fields`` lists what pruning dropped,
    sorted, e.g. ``["spec.foo"]`` for the ``unknown field "spec.foo"`` warning.
    ``spec_replicas_path``: the kind's scale subresource's, whose value must be an integer.
    """
    root = compiled(schema)
    result = copy_json(dict(obj))
    pruner = _Pruner()
    pruner.prune(result, root, "", embedded=True)

    metadata = result.get("metadata")
    result_meta = metadata if isinstance(metadata, dict) else None
    if result_meta is not None:
        result.pop("metadata")
    _default(result, root)
    if result_meta is not None:
        result["metadata"] = result_meta

    validator = _Validator()
    causes = _object_meta_causes(result_meta or {}, "metadata", embedded=False, names=names)
    validator.validate(result, root, _ROOT)
    causes.extend(validator.causes)
    causes.extend(validator.embedded_causes)
    causes.extend(validator.list_causes)
    causes.extend(scale_replicas_causes(spec_replicas_path, result))
    return AdmissionResult(result, causes, sorted(pruner.unknown))


def scale_replicas_causes(path: str | None, obj: Mapping[str, Any]) -> list[Cause]:
    """A kind with a scale subresource: kube-apiserver reads its spec replicas as an int64
    (unstructured's NestedInt64), so a float there, even an integral one such as 7.0, which
    the schema's ``type: integer`` takes, is refused, in its words."""
    if path is None:
        return []
    node: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(node, Mapping) or part not in node:
            return []
        node = node[part]
    if not isinstance(node, float):
        return []
    shown = int(node) if node.is_integer() else node
    message = f"{path} accessor error: {shown} is of the type float64, expected int64"
    return [Cause("FieldValueInvalid", f"Invalid value: 0: {message}", path)]
