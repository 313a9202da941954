"""Check job arguments before anything is sent, and build the submit request body.

Ray's job server accepts almost any JSON and reports mistakes as a Python traceback, after
the job may already be half set up. Checking here gives an error that names the argument and
what is accepted, and guarantees that a rejected call sends no request at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from flarekit.ray._jobs_errors import RayJobValidationError

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


def build_submit_body(
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
) -> dict[str, Any]:
    """Validate every submit argument and return the JSON body for ``POST /api/jobs/``.

    Arguments left as None are omitted, so servers that predate a field still accept the body.
    """
    if not isinstance(entrypoint, str) or not entrypoint.strip():
        raise RayJobValidationError(
            "entrypoint", f"must be a non-empty shell command string, got {_kind(entrypoint)}"
        )
    body: dict[str, Any] = {"entrypoint": entrypoint}
    if submission_id is not None:
        body["submission_id"] = check_submission_id(submission_id)
    if runtime_env is not None:
        body["runtime_env"] = _runtime_env(runtime_env)
    if metadata is not None:
        body["metadata"] = _string_map(metadata, "metadata")
    if entrypoint_num_cpus is not None:
        body["entrypoint_num_cpus"] = _quantity(entrypoint_num_cpus, "entrypoint_num_cpus")
    if entrypoint_num_gpus is not None:
        body["entrypoint_num_gpus"] = _quantity(entrypoint_num_gpus, "entrypoint_num_gpus")
    if entrypoint_memory is not None:
        body["entrypoint_memory"] = _memory(entrypoint_memory)
    if entrypoint_resources is not None:
        body["entrypoint_resources"] = _resources(entrypoint_resources)
    if entrypoint_label_selector is not None:
        body["entrypoint_label_selector"] = _string_map(
            entrypoint_label_selector, "entrypoint_label_selector"
        )
    return body


def _runtime_env(value: object) -> dict[str, Any]:
    field = "runtime_env"
    if not isinstance(value, Mapping):
        raise RayJobValidationError(
            field, f"must be a dict such as {{'env_vars': {{'A': '1'}}}}, got {_kind(value)}"
        )
    for key in value:
        if not isinstance(key, str):
            raise RayJobValidationError(field, f"keys must be strings, got key {key!r}")
    try:
        json.dumps(value, allow_nan=False)
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
    return dict(value)


def _check_uris(value: object, field: str, *, module: bool) -> None:
    """Remote URIs pass as they are; local paths must exist (they are uploaded)."""
    from flarekit.ray._jobs_upload import check_local, is_local

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
