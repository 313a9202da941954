"""Base classes of every generated model.

Why lazy: creating a pydantic class costs about half a millisecond, and one
kind embeds hundreds of types, so every cross-file type reference in the
generated code is imported only for type checkers (``if TYPE_CHECKING``) and
listed in the module's ``_LAZY_NAMES``. The first time a model's schema is
needed, :func:`resolve_lazy_names` imports those names into the module, for
that module and (through the same hook on every model) for each one it uses.

Every import in a generated package is relative (``_LAZY_NAMES`` holds relative module
names too), so the same code works under whatever name the package is generated as.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, model_validator
from pydantic_core import CoreSchema

if TYPE_CHECKING:
    from ._registry import ResourceInfo

__all__ = ["KubeModel", "KubeResource", "resolve_lazy_names"]

_resolved: set[str] = set()
_lock = threading.RLock()


def resolve_lazy_names(module_name: str) -> None:
    """Bind the names a generated module imports only for type checking."""
    if module_name in _resolved:
        return
    with _lock:
        if module_name in _resolved:
            return
        module = sys.modules[module_name]
        lazy: dict[str, str] = getattr(module, "_LAZY_NAMES", {})
        for name, source in lazy.items():
            if name not in module.__dict__:
                imported = importlib.import_module(source, module.__package__)
                setattr(module, name, getattr(imported, name))
        _resolved.add(module_name)


class KubeModel(BaseModel):
    """A Kubernetes object or part of one.

    Unknown fields are kept and written back (``extra="allow"``), attributes are
    snake_case with the JSON names as aliases (both accepted on input), dumps use
    the JSON names, and nothing is added on dump that was not set.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        defer_build=True,
        protected_namespaces=(),
    )

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        resolve_lazy_names(cls.__module__)
        return super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=0,
            _types_namespace=_types_namespace,
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        resolve_lazy_names(cls.__module__)
        return handler(source)

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate Kubernetes JSON: keys are JSON names only, so an unknown key that
        happens to look like an attribute (``min_replicas``) is kept as written."""
        return super().model_validate(
            obj,
            strict=strict,
            from_attributes=from_attributes,
            context=context,
            by_alias=by_alias,
            by_name=False if by_name is None else by_name,
            **({} if extra is None else {"extra": extra}),
        )

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: Any = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Like :meth:`model_validate`, from JSON text."""
        return super().model_validate_json(
            json_data,
            strict=strict,
            context=context,
            by_alias=by_alias,
            by_name=False if by_name is None else by_name,
            **({} if extra is None else {"extra": extra}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The object as Kubernetes JSON: JSON names, only the fields that were set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def to_json(self) -> str:
        """Like :meth:`to_dict`, serialised."""
        return self.model_dump_json(by_alias=True, exclude_unset=True)


class KubeResource(KubeModel):
    """A top-level resource: ``apiVersion`` and ``kind`` are always written."""

    @classmethod
    def resource_info(cls) -> ResourceInfo:
        """Group, version, plural, scope and subresources of this kind."""
        from ._registry import lookup

        return lookup(cls.model_fields["api_version"].default, cls.model_fields["kind"].default)

    @model_validator(mode="after")
    def _mark_type_fields_set(self) -> KubeResource:
        # apiVersion and kind identify the object; a dump must always carry them,
        # even when the caller relied on the defaults.
        self.__pydantic_fields_set__.update(("api_version", "kind"))
        return self
