"""Check job arguments before anything is sent, and build the submit request body.

Ray's job server accepts almost any JSON and reports mistakes as a Python traceback, after
the job may already be half set up. Checking here gives an error that names the argument and
what is accepted, and guarantees that a rejected call sends no request at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

from flarekit.ray._jobs_errors import RayJobValidationError
from flarekit.ray._jobs_models import SubmitRequest
from flarekit.ray._jobs_upload import check_local, is_local

if TYPE_CHECKING:
    from pydantic import JsonValue


T = TypeVar("T")

# Submission ids become a URL path segment, a log file name and part of an actor name on the
# cluster. Ray itself takes any string; this client accepts the safe subset (Ray's generated
# ids, ``raysubmit_<alnum>``, and Ray job ids, which are hex, both fit).
_SUBMISSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
SUBMISSION_ID_RULE = (
    "1-128 characters: letters, digits, '_', '.', '-', starting with a letter or digit"
)

# runtime_env keys whose values may be local paths, uploaded by the client (see _jobs_upload).
_UPLOADED_KEYS = ("working_dir", "py_modules")


def check_submission_id(value: object, field: str = "submission_id") -> str:
    """Return `value` if it is a usable submission (or job) id, else raise naming `field`."""
    if not isinstance(value, str):
        raise RayJobValidationError(
            field, f"must be a string ({SUBMISSION_ID_RULE}), got {_kind(value)}"
        )
    if not _SUBMISSION_ID.fullmatch(value):
        raise RayJobValidationError(field, f"{value!r} is not accepted; use {SUBMISSION_ID_RULE}")
    return value


def build_submit_request(
    entrypoint: object,
    *,
    submission_id: object = None,
    runtime_env: object = None,
    metadata: object = None,
    entrypoint_num_cpus: object = None,
    entrypoint_num_gpus: object = None,
    entrypoint_memory: object = None,
    entrypoint_resources: object = None,
    entrypoint_label_selector: object = None,
) -> SubmitRequest:
    """Validate every submit argument and return the request for ``POST /api/jobs/``.

    Arguments left as None are omitted, so servers that predate a field still accept the body.
    """
    if not isinstance(entrypoint, str) or not entrypoint.strip():
        raise RayJobValidationError(
            "entrypoint", f"must be a non-empty shell command string, got {_kind(entrypoint)}"
        )

    def given(value: object, check: Callable[[object], T]) -> T | None:
        return None if value is None else check(value)

    return SubmitRequest(
        entrypoint=entrypoint,
        submission_id=given(submission_id, check_submission_id),
        runtime_env=given(runtime_env, _runtime_env),
        metadata=given(metadata, lambda v: _string_map(v, "metadata")),
        entrypoint_num_cpus=given(
            entrypoint_num_cpus, lambda v: _quantity(v, "entrypoint_num_cpus")
        ),
        entrypoint_num_gpus=given(
            entrypoint_num_gpus, lambda v: _quantity(v, "entrypoint_num_gpus")
        ),
        entrypoint_memory=given(entrypoint_memory, _memory),
        entrypoint_resources=given(entrypoint_resources, _resources),
        entrypoint_label_selector=given(
            entrypoint_label_selector, lambda v: _string_map(v, "entrypoint_label_selector")
        ),
    )


def _runtime_env(value: object) -> dict[str, JsonValue]:
    field = "runtime_env"
    if not isinstance(value, Mapping):
        raise RayJobValidationError(
            field, f"must be a dict such as {{'env_vars': {{'A': '1'}}}}, got {_kind(value)}"
        )
    for key in value:
        if not isinstance(key, str):
            raise RayJobValidationError(field, f"keys must be strings, got key {key!r}")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RayJobValidationError(field, f"must be JSON-serialisable: {exc}") from None
    for key in _UPLOADED_KEYS:
        _check_uris(value.get(key), f"{field}[{key!r}]", module=key == "py_modules")
    excludes = value.get("excludes")
    if excludes is not None and (
        not isinstance(excludes, list) or not all(isinstance(e, str) for e in excludes)
    ):
        raise RayJobValidationError(
            f"{field}['excludes']", "must be a list of patterns such as ['data/', '*.ckpt']"
        )
    env: dict[str, JsonValue] = json.loads(text)  # as the server reads it (tuples as lists)
    return env


def _check_uris(value: object, field: str, *, module: bool) -> None:
    """Remote URIs pass as they are; local paths must exist (they are uploaded)."""
    if value is None:
        return
    if module and not isinstance(value, list):
        raise RayJobValidationError(field, f"must be a list of paths or URIs, got {_kind(value)}")
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        where = f"{field}[{index}]" if isinstance(value, list) else field
        if not isinstance(item, str) or not item:
            raise RayJobValidationError(where, f"must be a path or URI string, got {_kind(item)}")
        if is_local(item):
            check_local(item, where, module=module)


def _string_map(value: object, field: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise RayJobValidationError(
            field, f"must be a dict of strings to strings, got {_kind(value)}"
        )
    for key, item in value.items():
        if not isinstance(key, str):
            raise RayJobValidationError(field, f"keys must be strings, got key {key!r}")
        if not isinstance(item, str):
            raise RayJobValidationError(f"{field}[{key!r}]", f"must be a string, got {_kind(item)}")
    return dict(value)


def _quantity(value: object, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RayJobValidationError(field, f"must be a number >= 0, got {_kind(value)}")
    if not math.isfinite(value) or value < 0:
        raise RayJobValidationError(field, f"must be a finite number >= 0, got {value!r}")
    return value


def _memory(value: object) -> int:
    field = "entrypoint_memory"
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RayJobValidationError(field, f"must be a whole number of bytes >= 0, got {value!r}")
    return value


def _resources(value: object) -> dict[str, int | float]:
    field = "entrypoint_resources"
    if not isinstance(value, Mapping):
        raise RayJobValidationError(
            field, f"must be a dict of resource name to number >= 0, got {_kind(value)}"
        )
    result: dict[str, int | float] = {}
    for key, amount in value.items():
        if not isinstance(key, str) or not key:
            raise RayJobValidationError(
                field, f"resource names must be non-empty strings, got {key!r}"
            )
        result[key] = _quantity(amount, f"{field}[{key!r}]")
    return result


def _kind(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else "a string"
    return type(value).__name__
