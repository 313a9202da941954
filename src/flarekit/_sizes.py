"""What the API server refuses for its size, checked before anything is rendered or sent.

Why: a parameter file can hold megabytes (a long environment, a file pasted into an
annotation). Rendering such an object to YAML takes minutes and hundreds of megabytes, and
then the API server refuses it anyway. These are its limits, as kube-apiserver and etcd
enforce them with their default settings (measured on the real server, see the tests):

* all annotations of one object together: 256 KiB (apimachinery's
  ``TotalAnnotationSizeLimitB``; the sum of the bytes of every key and value);
* a request body: 3 MiB (kube-apiserver answers 413 beyond it);
* a stored object: 1.5 MiB (etcd's ``--max-request-bytes``; beyond it the write fails with
  ``etcdserver: request is too large``, or beyond 2 MiB with a gRPC size error). The object
  as stored also carries what the server adds (managedFields, timestamps), so an object near
  the bound may still be refused; one beyond it certainly is.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from flarekit._validation import ConfigError, Problem, ValidationReport, check_labels

if TYPE_CHECKING:
    from flarekit_models import KubeModel

__all__ = [
    "MAX_ANNOTATION_BYTES",
    "MAX_OBJECT_BYTES",
    "MAX_REQUEST_BYTES",
    "check_annotation_size",
    "check_annotations",
    "check_object_size",
    "check_parameter_size",
]

KiB = 1024
MAX_ANNOTATION_BYTES = 256 * KiB
MAX_REQUEST_BYTES = 3 * KiB * KiB
MAX_OBJECT_BYTES = 1536 * KiB


def _mib(count: int) -> str:
    return f"{count / (KiB * KiB):.1f} MiB"


def annotation_bytes(annotations: Mapping[object, object]) -> int:
    """The size the API server counts: the UTF-8 bytes of every key and value."""
    return sum(
        len(str(key).encode("utf-8", "surrogatepass"))
        + len(str(value).encode("utf-8", "surrogatepass"))
        for key, value in annotations.items()
    )


def check_annotation_size(report: ValidationReport, field: str, annotations: object) -> None:
    """Annotations of one object that the API server refuses for their total size."""
    if not isinstance(annotations, Mapping):
        return  # the type is reported by the caller's own checks
    size = annotation_bytes(annotations)
    if size > MAX_ANNOTATION_BYTES:
        report.add(
            field,
            f"{size} bytes in {len(annotations)} annotation(s)",
            f"the API server allows {MAX_ANNOTATION_BYTES // KiB} KiB of annotations per "
            f"object (keys and values together), this is {size / KiB:.1f} KiB",
            "smaller annotations; large data belongs in a ConfigMap or a volume",
        )


def check_annotations(report: ValidationReport, field: str, annotations: object) -> bool:
    """Annotations as the API server checks them: qualified keys, string values, and their
    total size. True when nothing was reported."""
    before = len(report)
    check_labels(report, field, annotations, values_are_labels=False)
    check_annotation_size(report, field, annotations)
    return len(report) == before


def check_object_size(
    obj: KubeModel, subject: str, parameters: Iterable[tuple[str, object]] = ()
) -> None:
    """Refuse (`ConfigError`) an object the API server cannot store, naming the parameter
    (of `parameters`, name and value) that takes the most room in it."""
    size = len(json.dumps(obj.to_dict(), separators=(",", ":")))
    if size > MAX_OBJECT_BYTES:
        raise _too_large(type(obj).__name__, size, subject, parameters, at_least=False)


def check_parameter_size(kind: str, subject: str, copied: Iterable[tuple[str, object]]) -> None:
    """Refuse (`ConfigError`), before anything is rendered, parameters that alone make an
    object too large to store: `copied` are parameters whose every value is written into the
    object (an environment, annotations, volumes), so their size is a lower bound of its."""
    sizes = [(name, value, _json_size(value)) for name, value in copied]
    total = sum(size for _, _, size in sizes)
    if total > MAX_OBJECT_BYTES:
        named = [(name, value) for name, value, _ in sizes]
        raise _too_large(kind, total, subject, named, at_least=True)


def _too_large(
    kind: str,
    size: int,
    subject: str,
    parameters: Iterable[tuple[str, object]],
    *,
    at_least: bool,
) -> ConfigError:
    field, share = _largest(parameters)
    where = f", {_mib(share)} of it from {field}" if field and share else ""
    amount = f"more than {_mib(size)}" if at_least else _mib(size)
    return ConfigError(
        [
            Problem(
                field or "(the whole object)",
                f"{amount} of JSON",
                f"the API server stores objects of at most {_mib(MAX_OBJECT_BYTES)} (etcd's "
                f"request limit; a request may not exceed {_mib(MAX_REQUEST_BYTES)}): this "
                f"{kind} is {amount}{where}",
                "smaller values; large data belongs in a ConfigMap or a volume",
            )
        ],
        subject,
    )


def _plain(value: object) -> object:
    """JSON data for a parameter value that is a model or a dataclass (for sizing only)."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return str(value)


def _json_size(value: object) -> int:
    try:
        return len(json.dumps(value, default=_plain, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return 0


def _largest(parameters: Iterable[tuple[str, object]]) -> tuple[str, int]:
    best, most = "", 0
    for name, value in parameters:
        size = _json_size(value)
        if size > most:
            best, most = name, size
    return best, most
