"""The error a version conversion raises instead of dropping data.

A conversion between two API versions (or two kinds, for the training jobs) either carries
every field of the object over or stops: a value the target version cannot express is
reported with its field path and both versions, so the caller can change the object or pick
another version instead of finding out later that the server never stored it.
"""

from __future__ import annotations

__all__ = ["ConversionError", "NoConversion"]


class ConversionError(ValueError):
    """``path`` of an object in ``source`` cannot be expressed in ``target``.

    ``source`` and ``target`` are ``"apiVersion Kind"`` strings; ``path`` is a JSON field
    path such as ``spec.flavorFungibility.whenCanBorrow`` or
    ``spec.resources.GenericItems[0].custompodresources[1].requests[cpu]``.
    """

    def __init__(self, path: str, source: str, target: str, reason: str) -> None:
        self.path = path
        self.source = source
        self.target = target
        self.reason = reason
        super().__init__(f"cannot convert {source} to {target}: {path}: {reason}")


class NoConversion(LookupError):
    """No conversion is registered from one apiVersion/kind to the requested apiVersion."""
