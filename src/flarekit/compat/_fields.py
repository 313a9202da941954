"""Stop before writing a field the server's release does not have.

Why: an API server prunes fields its CRD does not declare, silently (KubeRay v1.1 drops
``gcsFaultToleranceOptions``; Trainer v2.0 drops ``runtimePatches``). So before anything is
created, every field the object sets is looked up: in the CRDs the server serves, when they
could be read, else in the generated per-release field table for the release(s) negotiation
found (a field is refused only when none of them has it). A missing field is reported with
its path, the pinned releases that have it and the release the cluster runs; facades pass
their parameter names so that the user reads the option they set.

Paths are walked as the generated table spells them and stop where it stops (embedded
Kubernetes types such as pod templates, maps of free-form values); fields no pinned release
declares are left to the server, since a newer release may have them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from flarekit._json import JsonValue
from flarekit._validation import ConfigError, Problem
from flarekit.compat._head import head_of
from flarekit.compat._paths import join, schema_of
from flarekit.compat._releases import FamilyRelease
from flarekit_models import field_releases

__all__ = [
    "FieldUnavailable",
    "MissingField",
    "check_fields",
    "missing_fields",
    "releases_text",
    "server_has",
    "varying_fields",
]


@dataclass(frozen=True)
class MissingField:
    """A set field the server's release lacks: where (``spec.a[0].b``), its table path
    (``spec.a[].b``) and the pinned releases (``family@tag``) that declare it."""

    path: str
    schema_path: str
    having: tuple[str, ...]


class FieldUnavailable(ConfigError):
    """Fields set on an object that the cluster's release of its operator does not have."""

    def __init__(
        self, problems: list[Problem], subject: str, missing: list[MissingField], release: str
    ) -> None:
        super().__init__(problems, subject)
        self.missing = missing
        self.release = release


def server_has(release: FamilyRelease, api_version: str, kind: str) -> Callable[[str], bool] | None:
    """A test "does the server declare this table path", or None when nothing is known
    (the release is unknown and discovery matches no pinned release)."""
    served_kind = f"{api_version} {kind}"
    declared = (release.crd_paths or {}).get(served_kind)
    if declared is not None:
        return declared.__contains__
    if not release.candidates:
        return None
    table = field_releases(api_version, kind)
    pinned = set(release.pinned)
    return lambda path: bool(pinned.intersection(table.get(path, ())))


def missing_fields(
    obj: Mapping[str, JsonValue], release: FamilyRelease, *, strict_under: Iterable[str] = ()
) -> list[MissingField]:
    """Every field `obj` sets that `release` (of `obj`'s family) lacks, outermost only.

    Below the table paths in `strict_under` (a field a facade moved into the shape this
    release has), a key the server does not declare is missing even if no pinned release
    declares it there.
    """
    head = head_of(obj)
    api_version, kind = head.api_version or "", head.kind or ""
    has = server_has(release, api_version, kind)
    if has is None:
        return []
    return _missing(obj, api_version, kind, has, tuple(strict_under))


def varying_fields(obj: Mapping[str, JsonValue]) -> list[MissingField]:
    """The fields `obj` sets that some pinned release of its kind lacks (outermost only):
    where these are set, which release the server runs matters, and its CRD says."""
    head = head_of(obj)
    api_version, kind = head.api_version or "", head.kind or ""
    table = field_releases(api_version, kind)
    every = frozenset(release for having in table.values() for release in having)
    return _missing(obj, api_version, kind, lambda path: every <= set(table.get(path, ())), ())


def _missing(
    obj: Mapping[str, JsonValue],
    api_version: str,
    kind: str,
    has: Callable[[str], bool],
    strict: tuple[str, ...],
) -> list[MissingField]:
    schema = schema_of(api_version, kind)
    table = field_releases(api_version, kind)
    out: list[MissingField] = []

    def walk(value: object, spath: str, ipath: str) -> None:
        if spath and schema.is_opaque(spath):
            return
        if isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{spath}[]", join(ipath, index))
            return
        if not isinstance(value, dict):
            return
        is_map = spath in schema.maps
        for key, child in value.items():
            if is_map:
                walk(child, f"{spath}{{}}", join(ipath, key, map_key=True))
                continue
            cpath = f"{spath}.{key}" if spath else str(key)
            if not schema.has(cpath) and not cpath.startswith(strict):
                continue  # unknown to every pinned release: the server decides
            cinst = join(ipath, key)
            if not has(cpath):
                out.append(MissingField(cinst, cpath, table.get(cpath, ())))
                continue
            walk(child, cpath, cinst)

    walk(dict(obj), "", "")
    return out


def releases_text(having: Iterable[str]) -> str:
    """``("kuberay@v1.4.2", "kuberay@v1.7.0")`` as ``kuberay v1.4.2, v1.7.0``."""
    grouped: dict[str, list[str]] = {}
    for item in having:
        family, _, tag = item.partition("@")
        grouped.setdefault(family, []).append(tag)
    return "; ".join(f"{f} {', '.join(tags)}" for f, tags in grouped.items()) or "none pinned"


def _running(release: FamilyRelease) -> str:
    text = release.release_text()
    return f"{release.product} {text}" if release.exact else f"{release.product} ({text})"


def _parameter(path: str, parameters: Iterable[tuple[str, str]]) -> str | None:
    for prefix, name in parameters:
        if path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")):
            return name
    return None


def check_fields(
    obj: Mapping[str, JsonValue],
    release: FamilyRelease,
    *,
    parameters: Iterable[tuple[str, str]] = (),
    subject: str = "",
    prefix: str = "",
    strict_under: Iterable[str] = (),
) -> None:
    """Raise `FieldUnavailable` naming every field of `obj` the cluster's release lacks.

    `parameters` are (path prefix, parameter name) pairs, most specific first, so that a
    problem names the option the user set; `prefix` is prepended to paths (an object
    embedded in another, e.g. ``spec.components[0].template``).
    """
    missing = missing_fields(obj, release, strict_under=strict_under)
    if not missing:
        return
    running = _running(release)
    parameters = tuple(parameters)
    problems = []
    for item in missing:
        path = f"{prefix}.{item.path}" if prefix else item.path
        param = _parameter(path, parameters)
        tags = [h.split("@", 1)[1] for h in item.having if h.startswith(f"{release.family}@")]
        have = f"{release.product} {', '.join(tags)}" if tags else "a release that has it"
        problems.append(
            Problem(
                param or path,
                path,
                f"{running} on this cluster has no {path}; releases that have it: "
                f"{releases_text(item.having)}",
                f"{have} on the cluster, or {param or path} left unset",
            )
        )
    head = head_of(obj)
    name = subject or f"{head.kind or 'object'} {head.name!r}"
    raise FieldUnavailable(problems, name, missing, release.release_text())
