"""The operations of a JSON patch (RFC 6902), read as models.

Why: a JSON patch is a list of ``{"op": ..., "path": ..., "value": ...}`` objects given by the
caller, and three parts of the client read it: the argument check, the AppWrapper component
check and the pruned-field check after the write. Each reads the same three members, so they
are read once, here, by attribute. The patch is the caller's input: a member of the wrong
type is kept as given (``op``, ``value``) or reads as absent (``path``), and each reader
decides what that means.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["PatchOperation"]


class PatchOperation(BaseModel):
    """One operation: `op` as given (checked by the client), `path` (a JSON pointer, empty
    when absent or not a string) and `value` (None when absent: see `has_value`)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    op: object = None
    path: str = ""
    value: object = None

    @field_validator("path", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return value if isinstance(value, str) else ""

    @property
    def has_value(self) -> bool:
        """Whether the operation has a ``value`` member (``null`` is a value)."""
        return "value" in self.model_fields_set
