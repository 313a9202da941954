"""Collect every problem of a user's configuration, then raise them together.

Why: fixing one bad parameter per run is slow and frustrating. A :class:`ValidationReport`
gathers problems, each naming the parameter as the user wrote it (``worker_memory_requests``,
or a path such as ``worker_groups[1].memory_requests`` / ``volumes[0].configMap.name``), the
value given and what would be accepted; :class:`ConfigError` lists them one per line.

The ``check_*`` functions are the generic checks shared by the facades: Kubernetes names,
label keys and values, counts, quantities (requests and limits), extended resources and
the Ray version of a Ray image.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from flarekit._quantity import QUANTITY_EXAMPLES, QuantityError, parse_quantity

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "DEFAULT_EXTENDED_RESOURCES",
    "INT32_MAX",
    "QUANTITY_MAX",
    "ConfigError",
    "Problem",
    "ValidationReport",
    "check_count",
    "check_dns1035_label",
    "check_dns1123_label",
    "check_dns1123_subdomain",
    "check_extended_resources",
    "check_image",
    "check_label_value",
    "check_labels",
    "check_limit_not_below_request",
    "check_min_max",
    "check_qualified_name",
    "check_quantity",
    "check_ray_image_version",
    "ray_version_of_image",
]

#: Extended (device) resources Kubernetes device plugins advertise, and the Ray resource
#: each one becomes (https://docs.ray.io/en/latest/ray-core/scheduling/accelerators.html).
DEFAULT_EXTENDED_RESOURCES: dict[str, str] = {
    "nvidia.com/gpu": "GPU",
    "amd.com/gpu": "GPU",
    "intel.com/gpu": "GPU",
    "habana.ai/gaudi": "HPU",
    "google.com/tpu": "TPU",
    "aws.amazon.com/neuroncore": "neuron_cores",
    "aws.amazon.com/neuron": "neuron_cores",
    "huawei.com/Ascend910": "NPU",
    "huawei.com/Ascend310": "NPU",
}

_MAX_VALUE_REPR = 80
_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = _MAX_VALUE_REPR
_SHORT.maxdict = _SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = 8
#: The largest count Kubernetes' int32 fields (replicas, parallelism, ...) hold.
INT32_MAX = 2**31 - 1
#: The largest value a quantity can have in its base unit (bytes, cores) and stay exact.
QUANTITY_MAX = 2**63 - 1


@dataclass(frozen=True)
class Problem:
    """One thing wrong: where (``field``), what was given (``value``), why, and what is accepted."""

    field: str
    value: object
    message: str
    expected: str

    def __str__(self) -> str:
        return f"{self.field}={short_repr(self.value)}: {self.message}; expected {self.expected}"


def short_repr(value: object, limit: int = _MAX_VALUE_REPR) -> str:
    """``repr(value)`` cut to ``limit`` characters, without ever building the whole of it:
    a value read from a file may be huge, or an alias-shared structure whose full repr
    would be billions of characters."""
    shown = _SHORT.repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class ConfigError(ValueError):
    """A configuration has problems; ``problems`` lists every one, ``str()`` one per line."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...], subject: str = "") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.subject = subject
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''}" + (f" in {subject}" if subject else "")
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))

    @property
    def fields(self) -> list[str]:
        """The parameter names (or paths) with problems, in the order found."""
        return [p.field for p in self.problems]


class ValidationReport:
    """An ordered collection of :class:`Problem`; empty means valid."""

    def __init__(self, subject: str = "") -> None:
        self.subject = subject
        self.problems: list[Problem] = []

    def add(self, field: str, value: object, message: str, expected: str) -> None:
        """Record one problem."""
        self.problems.append(Problem(field, value, message, expected))

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def fields(self) -> list[str]:
        return [p.field for p in self.problems]

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def error(self) -> ConfigError:
        """All problems as one exception (call only when there are some)."""
        return ConfigError(self.problems, self.subject)

    def raise_if_problems(self) -> None:
        """Raise :class:`ConfigError` listing every problem, if there are any."""
        if self.problems:
            raise self.error()

    def add_model_errors(self, field: str, exc: ValidationError, expected: str) -> None:
        """Record each error of a model's validation at `field` and its path in the model
        (``field[0].name``; the path alone when `field` is empty)."""
        for error in exc.errors():
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            self.add((field + where) if field else where.lstrip("."), error.get("input"),
                     error["msg"], expected)  # fmt: skip


# --- names -------------------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _check_name(
    report: ValidationReport,
    field: str,
    value: object,
    pattern: re.Pattern[str],
    max_len: int,
    expected: str,
) -> bool:
    if not isinstance(value, str):
        report.add(field, value, f"expected a string, got {type(value).__name__}", expected)
        return False
    if not value:
        report.add(field, value, "must not be empty", expected)
        return False
    if len(value) > max_len:
        report.add(field, value, f"too long ({len(value)} characters, at most {max_len})", expected)
        return False
    if not pattern.fullmatch(value):
        report.add(field, value, "not a valid name", expected)
        return False
    return True


def check_dns1123_label(report: ValidationReport, field: str, value: object) -> bool:
    """A DNS-1123 label (namespaces, most names): ``my-name``, at most 63 characters."""
    return _check_name(
        report,
        field,
        value,
        _DNS1123_LABEL,
        63,
        "lower-case letters, digits and '-', starting and ending with a letter or digit, "
        "at most 63 characters (e.g. 'my-name')",
    )


def check_dns1035_label(report: ValidationReport, field: str, value: object) -> bool:
    """A DNS-1035 label (names that become Service names): like DNS-1123 but starts with a letter."""
    return _check_name(
        report,
        field,
        value,
        _DNS1035_LABEL,
        63,
        "lower-case letters, digits and '-', starting with a letter and ending with a letter "
        "or digit, at most 63 characters (e.g. 'my-cluster')",
    )


def check_dns1123_subdomain(report: ValidationReport, field: str, value: object) -> bool:
    """A DNS-1123 subdomain (most object names): ``my-name`` or ``example.com``."""
    return _check_name(
        report,
        field,
        value,
        _DNS1123_SUBDOMAIN,
        253,
        "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, "
        "at most 253 characters (e.g. 'my-secret')",
    )


def check_qualified_name(report: ValidationReport, field: str, value: object) -> bool:
    """A label or annotation key: ``name`` or ``prefix/name`` (prefix a DNS subdomain)."""
    expected = (
        "a key 'name' or 'prefix/name': name at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit; prefix a DNS subdomain such as 'example.com'"
    )
    if not isinstance(value, str):
        report.add(field, value, f"expected a string, got {type(value).__name__}", expected)
        return False
    prefix, _, name = value.rpartition("/")
    ok = (
        0 < len(name) <= 63
        and _QUALIFIED_NAME.fullmatch(name) is not None
        and value.count("/") <= 1
        and ("/" not in value or (0 < len(prefix) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(prefix)))
    )
    if not ok:
        report.add(field, value, "not a valid key", expected)
    return bool(ok)


def check_label_value(report: ValidationReport, field: str, value: object) -> bool:
    """A label value: empty, or at most 63 letters, digits, '-', '_', '.'."""
    expected = (
        "a string of at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
        "letter or digit (or empty)"
    )
    if not isinstance(value, str):
        report.add(field, value, f"expected a string, got {type(value).__name__}", expected)
        return False
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        report.add(field, value, "not a valid label value", expected)
        return False
    return True


def check_labels(
    report: ValidationReport, field: str, value: object, *, values_are_labels: bool = True
) -> bool:
    """A ``dict`` of label keys to label values (or, with ``values_are_labels=False``, to any
    strings, as annotations are)."""
    if not isinstance(value, Mapping):
        report.add(
            field, value, f"expected a dict, got {type(value).__name__}", "a dict of str to str"
        )
        return False
    before = len(report)
    for key, item in value.items():
        if check_qualified_name(report, f"{field}[{key!r}]", key):
            if values_are_labels:
                check_label_value(report, f"{field}[{key!r}]", item)
            elif not isinstance(item, str):
                report.add(f"{field}[{key!r}]", item, "expected a string", "a string")
    return len(report) == before


# --- numbers -----------------------------------------------------------------------------


def check_count(
    report: ValidationReport, field: str, value: object, *, allow_none: bool = False
) -> int | None:
    """A whole, non-negative number (``bool`` and ``"3"`` are refused)."""
    if value is None and allow_none:
        return None
    expected = f"a whole number from 0 to {INT32_MAX}" + (" or None" if allow_none else "")
    if isinstance(value, bool) or not isinstance(value, int):
        report.add(field, value, f"expected an integer, got {type(value).__name__}", expected)
        return None
    if value < 0:
        report.add(field, value, "must not be negative", expected)
        return None
    if value > INT32_MAX:
        report.add(field, value, "too large (Kubernetes counts are int32)", f"at most {INT32_MAX}")
        return None
    return value


def check_min_max(
    report: ValidationReport,
    min_field: str,
    min_value: int | Decimal | None,
    max_field: str,
    max_value: int | Decimal | None,
) -> bool:
    """``min_value <= max_value`` (either missing: nothing to compare)."""
    if min_value is None or max_value is None or min_value <= max_value:
        return True
    report.add(
        min_field,
        min_value,
        f"greater than {max_field}={max_value!r}",
        f"a value <= {max_field} ({max_value})",
    )
    return False


def check_quantity(
    report: ValidationReport,
    field: str,
    value: object,
    *,
    allow_none: bool = False,
    allow_negative: bool = False,
) -> Decimal | None:
    """The exact value of a quantity, or ``None`` (recording why) if it is not one."""
    if value is None and allow_none:
        return None
    try:
        exact = parse_quantity(value, allow_negative=allow_negative)
    except QuantityError as exc:
        message = exc.reason + (f"; {exc.hint}" if exc.hint else "")
        sign = "" if allow_negative else "a non-negative value: "
        report.add(field, value, message, sign + QUANTITY_EXAMPLES)
        return None
    if abs(exact) > QUANTITY_MAX:
        report.add(
            field,
            value,
            "too large for a Kubernetes quantity",
            f"at most {QUANTITY_MAX} (2^63-1) in its base unit, e.g. '8Ei'",
        )
        return None
    return exact


def check_limit_not_below_request(
    report: ValidationReport,
    request_field: str,
    request: Decimal | None,
    limit_field: str,
    limit: Decimal | None,
    limit_value: object,
    request_value: object = None,
) -> bool:
    """A limit may not be below its request (Kubernetes refuses such pods).

    The request is quoted as the user wrote it (``request_value``) when given."""
    if request is None or limit is None or limit >= request:
        return True
    shown = repr(request_value) if request_value is not None else f"{request.normalize():f}"
    report.add(
        limit_field,
        limit_value,
        f"below {request_field} ({shown})",
        f"a limit >= {request_field}, or raise the limit / lower the request",
    )
    return False


def check_extended_resources(
    report: ValidationReport,
    field: str,
    value: object,
    mapping: Mapping[str, str],
) -> dict[str, int]:
    """Device requests such as ``{"nvidia.com/gpu": 1}``: known names, whole counts >= 0.

    ``mapping`` is every known extended resource (the defaults plus the user's additions).
    Returns the valid entries as integers.
    """
    known = ", ".join(sorted(mapping))
    if not isinstance(value, Mapping):
        report.add(
            field,
            value,
            f"expected a dict, got {type(value).__name__}",
            "a dict such as {'nvidia.com/gpu': 1}",
        )
        return {}
    counts: dict[str, int] = {}
    for name, amount in value.items():
        where = f"{field}[{name!r}]"
        if name not in mapping:
            report.add(
                where,
                amount,
                f"unknown extended resource {name!r}",
                f"one of {known}, or add it to extended_resource_mapping "
                f"(e.g. {{{name!r}: 'MY_RESOURCE'}})",
            )
            continue
        try:
            exact = parse_quantity(amount)
        except QuantityError as exc:
            report.add(where, amount, exc.reason, "a whole number of devices >= 0, such as 1")
            continue
        if exact != exact.to_integral_value():
            report.add(where, amount, "not a whole number", "a whole number of devices >= 0")
            continue
        counts[name] = int(exact)
    return counts


# --- Ray images --------------------------------------------------------------------------

_RAY_REPOSITORY = re.compile(r"ray(-[a-z0-9]+)*")
_TAG_VERSION = re.compile(r"v?(?P<version>[0-9]+\.[0-9]+(?:\.[0-9]+)?)(?=$|[-_+.a-z])")
_RAY_VERSION = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?([-.+a-z0-9]*)")


def ray_version_of_image(image: str) -> str | None:
    """The Ray version in a Ray image's tag: ``rayproject/ray:2.9.0-py311`` -> ``"2.9.0"``.

    Only images whose repository is named ``ray`` or ``ray-*`` (``rayproject/ray-ml``,
    ``quay.io/modh/ray``) are read; tags such as ``latest`` or a digest give ``None``.
    """
    reference = image.split("@", 1)[0]
    name, sep, tag = reference.rpartition(":")
    if not sep or "/" in tag:
        return None
    repository = name.rsplit("/", 1)[-1]
    if not _RAY_REPOSITORY.fullmatch(repository):
        return None
    match = _TAG_VERSION.match(tag)
    return match["version"] if match else None


def _same_version(a: str, b: str) -> bool:
    # "2.9" matches "2.9.0"..."2.9.x": compare the components both give.
    pa, pb = a.split("."), b.split(".")
    return all(x == y for x, y in zip(pa, pb, strict=False))


def check_ray_image_version(
    report: ValidationReport,
    image_field: str,
    image: object,
    version_field: str,
    version: object,
) -> bool:
    """The Ray version of a Ray image's tag must be ``version`` (KubeRay's ``rayVersion``).

    A cluster whose image runs another Ray than ``rayVersion`` says fails in ways that are
    hard to trace (autoscaler and dashboard protocol mismatches), so it is refused here.
    """
    if version is not None and (
        not isinstance(version, str) or not _RAY_VERSION.fullmatch(version)
    ):
        report.add(version_field, version, "not a Ray version", "a version such as '2.47.1'")
        return False
    if not isinstance(image, str) or version is None:
        return True
    tagged = ray_version_of_image(image)
    if tagged is None or _same_version(tagged, version.split("-")[0]):
        return True
    report.add(
        image_field,
        image,
        f"the image runs Ray {tagged} but {version_field} is {version!r}",
        f"an image of Ray {version} (e.g. 'rayproject/ray:{version}'), "
        f"or {version_field}={tagged!r}",
    )
    return False


# --- image references ------------------------------------------------------------------------

# The grammar of github.com/distribution/reference (what container runtimes parse).
_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[._]|__|-+){_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_IMAGE = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>\w[\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?",
    re.ASCII,
)
_IMAGE_NAME_MAX = 255


def check_image(report: ValidationReport, field: str, value: object, *, example: str) -> bool:
    """A container image reference as container runtimes parse it: ``[registry[:port]/]path
    [:tag][@algorithm:hex]``, the path in lower case (``UPPER/Ray:2.9.0``, ``bad\timage`` and
    ``ray@sha256:zz`` are refused)."""
    expected = (
        "an image reference [registry[:port]/]name[:tag][@sha256:<64 hex digits>], the name "
        f"in lower-case letters, digits and separators '.', '_', '-', '/' (e.g. {example!r})"
    )
    if not isinstance(value, str):
        report.add(field, value, f"expected a string, got {type(value).__name__}", expected)
        return False
    match = _IMAGE.fullmatch(value)
    if match is None:
        report.add(field, value, "not a container image reference", expected)
        return False
    name = (match["domain"] + "/" if match["domain"] else "") + match["path"]
    if len(name) > _IMAGE_NAME_MAX:
        report.add(field, value, f"name longer than {_IMAGE_NAME_MAX} characters", expected)
        return False
    return True
