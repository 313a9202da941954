"""The parts of a CustomResourceDefinition that negotiation reads, as models.

Why: negotiation reads a CRD's group, kind, scope and each version's flags and schema;
reading them through models keeps that code in attributes
(an upstream rename is a type error, not a silent ``None``). Kubernetes defines these types
in Go (``apiextensionsv1.CustomResourceDefinition``) with no CRD
to generate them from, so the few fields used are written here. Every other field is kept as
an unknown field (as every model keeps them), so a schema dumped back is the schema read.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field

from flarekit.compat._json_field import JsonField

__all__ = [
    "CrdNames",
    "CrdSpec",
    "CrdValidation",
    "CrdVersion",
    "CustomResourceDefinition",
    "ObjectName",
    "SchemaProps",
]


class _Schema(BaseModel):
    """A base that keeps unknown keys as given, without the checks the models run on objects
    sent to a server: a CRD's schema is read (up to megabytes, once per distinct content),
    never written."""

    model_config = ConfigDict(
        extra="allow", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )


class SchemaProps(_Schema):
    """One node of an OpenAPI v3 schema (``JSONSchemaProps``): the keys that name fields
    (``properties``, ``items``, ``additionalProperties``); the rest is kept as is, but for
    the ``description``, which is read and never dumped: release wording changes it where
    nothing else changes, so the schema that identifies a release is dumped without it (a
    structural schema has descriptions only in such nodes)."""

    description: JsonField = Field(None, exclude=True)
    properties: dict[str, SchemaProps] = Field(default_factory=dict)
    items: SchemaProps | list[SchemaProps] | None = None
    additional_properties: SchemaProps | bool | None = Field(None, alias="additionalProperties")

    def field_paths(self, path: str = "") -> Iterator[str]:
        """Every field path below this node (``[]`` a list item, ``{}`` a map value, as in
        the generated field table), parents before their children."""
        for name, child in self.properties.items():
            sub = f"{path}.{name}" if path else name
            yield sub
            yield from child.field_paths(sub)
        if isinstance(self.items, SchemaProps):
            yield from self.items.field_paths(f"{path}[]")
        if isinstance(self.additional_properties, SchemaProps):
            yield from self.additional_properties.field_paths(f"{path}{{}}")


class CrdValidation(_Schema):
    """A version's ``schema``."""

    open_api_v3_schema: SchemaProps | None = Field(None, alias="openAPIV3Schema")


class CrdVersion(_Schema):
    """One version of a CRD: its flags and its schema."""

    name: str = ""
    served: bool = False
    storage: bool = False
    deprecated: bool = False
    deprecation_warning: str | None = Field(None, alias="deprecationWarning")
    schema_: CrdValidation | None = Field(None, alias="schema")


class CrdNames(_Schema):
    kind: str = ""


class CrdSpec(_Schema):
    group: str = ""
    names: CrdNames = Field(default_factory=CrdNames)
    scope: str | None = None
    versions: list[CrdVersion] = Field(default_factory=list)


class ObjectName(_Schema):
    """The part of ``metadata`` negotiation reads."""

    name: str = ""


class CustomResourceDefinition(_Schema):
    metadata: ObjectName = Field(default_factory=ObjectName)
    spec: CrdSpec = Field(default_factory=CrdSpec)

    @property
    def kind(self) -> str:
        return self.spec.names.kind

    def serves(self, versions: set[str]) -> bool:
        """Whether one of `versions` is served."""
        return any(v.served and v.name in versions for v in self.spec.versions)
