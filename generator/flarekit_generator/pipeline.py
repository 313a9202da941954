"""The whole generation: lock file -> CRDs -> intermediate model -> plan -> files.

Stages: :mod:`source` (cached, verified files) -> :mod:`parse` (IR) ->
:mod:`recognise` (embedded Kubernetes types) -> :mod:`plan` (named,
de-duplicated classes) -> :mod:`emit` (Jinja templates, ruff format).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flarekit_generator import __version__, paths
from flarekit_generator.catalog import Catalog, KindVersion, build_catalog, release_key
from flarekit_generator.core_copies import reconcile
from flarekit_generator.emit import DEFAULT_PACKAGE, Emitter, OutputError, check_package_name
from flarekit_generator.fetch import download_base_url, fill_cache
from flarekit_generator.field_table import build_field_table
from flarekit_generator.ir import CrdInfo, Node
from flarekit_generator.k8s_types import BUILT_IN_KINDS, KUBERNETES_VERSION, KubernetesDefinitions
from flarekit_generator.lockfile import LockEntry, read_lock
from flarekit_generator.parse import parse_schema
from flarekit_generator.plan import HELPER_NAMES, FamilyPlanner, ModulePlan, plan_core
from flarekit_generator.recognise import Recogniser
from flarekit_generator.source import load_crds
from flarekit_generator.stats import OutputStats, measure


@dataclass
class Result:
    modules: int
    classes: int
    stats: OutputStats
    seconds: float
    package_dir: Path
    #: The per-release field table written to ``_data/fields.json.gz`` (see field_table).
    field_table: dict[str, Any]
    #: Per (group, version, kind), the paths where the newest schema embeds a Kubernetes type.
    core_paths: dict[tuple[str, str, str], set[str]]

    def summary(self) -> str:
        return (
            f"generated {self.package_dir}: {self.modules} modules, {self.classes} classes, "
            f"{self.stats.code_lines} code lines ({self.stats.total_lines} with docs) "
            f"in {self.seconds:.1f}s"
        )


def generate(
    *,
    lock: Path | None = None,
    cache_dir: Path | None = None,
    out_dir: Path | None = None,
    package: str = DEFAULT_PACKAGE,
    families: Collection[str] | None = None,
    mirror: Path | None = None,
    base_url: str | None = None,
    allow_download: bool = True,
    runtime_dir: Path | None = None,
    defs: KubernetesDefinitions | None = None,
) -> Result:
    """Generate the models package from a lock file (filling the schema cache if needed).

    By default: the repository's (or the installed generator's) lock file and cache, every
    family it pins, written as ``flarekit_models`` under ``generated/``. ``package`` and
    ``families`` make a vendored subset (``mysdk._crds`` with only kuberay and kueue).
    """
    started = time.perf_counter()
    check_package_name(package)
    lock = lock or paths.lock_file()
    cache_dir = cache_dir or paths.cache_dir()
    out_dir = out_dir or paths.output_dir()
    if out_dir is None:
        raise OutputError("no output directory: pass --out DIR (the package is written below it)")
    entries = select_families(read_lock(lock), families, lock)
    fill_cache(
        entries,
        cache_dir,
        mirror=mirror or paths.mirror_dir(),
        base_url=base_url or download_base_url(),
        allow_download=allow_download,
    )
    crds = load_crds(entries, cache_dir)
    source = f"{lock.name} sha256:{_sha256(lock)}"
    return render_package(
        crds,
        defs or KubernetesDefinitions.load(),
        out_dir,
        source,
        started,
        package=package,
        runtime_dir=runtime_dir,
    )


def select_families(
    entries: list[LockEntry], families: Collection[str] | None, lock: Path
) -> list[LockEntry]:
    """The lock entries of ``families`` (all when ``None``); unknown names are an error."""
    if families is None:
        return entries
    known = sorted({e.family for e in entries})
    unknown = sorted(set(families) - set(known))
    if unknown or not families:
        raise OutputError(
            f"--families: {', '.join(unknown) or '(none given)'} not pinned in {lock}; "
            f"allowed: {', '.join(known)}"
        )
    return [e for e in entries if e.family in families]


def render_package(
    crds: list[CrdInfo],
    defs: KubernetesDefinitions,
    out_dir: Path,
    source: str,
    started: float | None = None,
    *,
    package: str = DEFAULT_PACKAGE,
    runtime_dir: Path | None = None,
) -> Result:
    """Generate the package for any set of parsed CRDs (the pinned ones, or a test's)."""
    started = time.perf_counter() if started is None else started
    catalog = build_catalog(crds)
    emitter = Emitter(out_dir, package)
    modules, core_paths = build_models(catalog, defs, source=source)
    for module in modules:
        emitter.add_module(module, _module_doc(module, catalog))
    sources = [source]
    for name in RUNTIME_MODULES:
        emitter.add_runtime(runtime_dir or paths.runtime_dir(), name)
    header = emitter.header(sources)
    emitter.add(
        "__init__.py",
        emitter.render(
            "root_init.py.j2",
            header=header,
            generator_version=__version__,
            source=source,
            releases=sorted((f, tuple(t)) for f, t in catalog.releases.items()),
            doc=_package_doc(package, catalog),
        ),
    )
    emitter.add(
        "_registry.py",
        emitter.render(
            "registry.py.j2",
            header=header,
            package=package,
            resources=registry_rows(catalog),
            built_in=built_in_rows(defs),
        ),
    )
    _add_crd_data(emitter, catalog, sources)
    table = build_field_table(catalog, core_paths)
    emitter.add_data("_data/fields.json.gz", table, sources)
    emitter.add("_fields.py", emitter.render("fields.py.j2", header=header))
    emitter.write()
    stats = measure(emitter.root)
    return Result(
        modules=len(modules),
        classes=sum(len(m.classes) for m in modules),
        stats=stats,
        seconds=time.perf_counter() - started,
        package_dir=emitter.root,
        field_table=table,
        core_paths=core_paths,
    )


#: The hand-written modules (``paths.runtime_dir()``) copied into every generated package.
RUNTIME_MODULES = ("_base.py", "_types.py", "_json.py", "_lazy.py")


def _package_doc(package: str, catalog: Catalog) -> str:
    """The generated package's docstring: what it holds and how it is laid out."""
    if package == DEFAULT_PACKAGE:
        subject = "the Kubernetes resources flarekit works with"
    else:
        subject = f"{', '.join(sorted(catalog.releases))}, vendored by flarekit-generator"
    names = list(catalog.modules())
    shown = ", ".join(f"``{package}.{name}``" for name in names[:2])
    shown += ", ..." if len(names) > 2 else ""
    return (
        f"Typed, lossless pydantic models of {subject}.\n\n"
        f"One module per API group and version ({shown}), the Kubernetes types they embed in "
        f"``{package}.core.v1`` and ``{package}.meta.v1``. Importing one module creates only "
        "the classes asked for; the rest load on first use. Every import inside the package "
        "is relative, and it depends on pydantic alone."
    )


def build_models(
    catalog: Catalog, defs: KubernetesDefinitions, *, source: str
) -> tuple[list[ModulePlan], dict[tuple[str, str, str], set[str]]]:
    """Plan every module: Kubernetes types first, then each group-version.

    Also returns, per (group, version, kind), the paths where the newest schema
    embeds a Kubernetes type (where the per-release field table stops).
    """
    core_paths: dict[tuple[str, str, str], set[str]] = {}
    recogniser = Recogniser(defs)
    roots: dict[str, list[tuple[KindVersion, Node]]] = {}
    used: set[str] = {"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    for module_name, kinds in catalog.modules().items():
        for kv in kinds:
            _crd, version = kv.newest
            root = parse_schema(version.raw_schema)
            root.description = _root_doc(kv, root.description)
            recogniser.annotate(root)
            roots.setdefault(module_name, []).append((kv, root))
    all_roots = [root for entries in roots.values() for _, root in entries]
    shapes = reconcile(recogniser.copies, all_roots)
    for entries in roots.values():
        for kv, root in entries:
            used |= _core_types(root)
            core_paths[(kv.group, kv.version, kv.kind)] = set(_core_paths(root))
    core_modules = plan_core(defs, used, shapes)
    core_source = (
        f"Kubernetes {KUBERNETES_VERSION} OpenAPI definitions (kubernetes-validate), "
        f"merged with their copies in the CRDs of {source}"
    )
    for module in core_modules.values():
        module.sources = [core_source]
    core_names = {name for m in core_modules.values() for name in m.classes}

    def core_ref(node: Node) -> tuple[str, str]:
        assert node.core_type is not None
        definition = defs.definitions[node.core_type]
        return definition.module, definition.short_name

    out = [core_modules[name] for name in sorted(core_modules)]
    for module_name, entries in sorted(roots.items()):
        group, api_version = entries[0][0].group, entries[0][0].version
        sources = sorted(
            {f"{kv.newest[0].source_path} sha256:{kv.newest[0].sha256}" for kv, _ in entries}
        )
        planner = FamilyPlanner(module_name, group, api_version, reserved=core_names | HELPER_NAMES)
        scales = {kv.kind: kv.newest[1].scale for kv, _ in entries if kv.newest[1].scale}
        out.append(
            planner.plan([(kv.kind, root) for kv, root in entries], core_ref, sources, scales)
        )
    return out, core_paths


def _root_doc(kv: KindVersion, description: str) -> str:
    """The kind's description, plus where this version is deprecated and what to use instead."""
    deprecated = sorted(c.release_id for c, v in kv.releases if v.deprecated)
    if not deprecated:
        return description
    warnings = sorted({v.deprecation_warning for _, v in kv.releases if v.deprecation_warning})
    note = f"Deprecated: {kv.api_version} {kv.kind} is deprecated in {', '.join(deprecated)}."
    if warnings:
        note += " The server warns: " + " / ".join(warnings)
    return f"{description}\n\n{note}".strip()


def _core_types(node: Node) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.core_type is not None:
            found.add(current.core_type)
            continue
        stack.extend(current.children())
    return found


def _core_paths(node: Node, path: str = "") -> list[str]:
    if node.core_type is not None:
        return [path]
    out: list[str] = []
    for name, child in node.properties.items():
        out += _core_paths(child, f"{path}.{name}" if path else name)
    if node.items is not None:
        out += _core_paths(node.items, path + "[]")
    if node.values is not None:
        out += _core_paths(node.values, path + "{}")
    return out


def registry_rows(catalog: Catalog) -> list[dict[str, Any]]:
    rows = []
    for (group, version, kind), kv in sorted(catalog.kinds.items()):
        crd, _ = kv.newest
        served = sorted(kv.releases, key=lambda r: (r[0].family, release_key(r[0].release)))
        rows.append(
            {
                "group": group,
                "version": version,
                "kind": kind,
                "plural": crd.plural,
                "singular": crd.singular,
                "list_kind": crd.list_kind,
                "namespaced": crd.namespaced,
                "subresources": list(kv.newest[1].subresources),
                "short_names": list(crd.short_names),
                "categories": list(crd.categories),
                "family": crd.family,
                "model_path": f"{kv.module}.{kind}",
                "served_by": [c.release_id for c, _ in served],
                "storage_in": [c.release_id for c, v in served if v.storage],
                "deprecated_in": [c.release_id for c, v in served if v.deprecated],
            }
        )
    return rows


def built_in_rows(defs: KubernetesDefinitions) -> list[dict[str, Any]]:
    """Registry rows of the built-in kinds generated as resources (served by every cluster)."""
    rows = []
    for k in BUILT_IN_KINDS:
        definition = defs.definitions[k.definition]
        rows.append(
            {
                "group": k.group,
                "version": k.version,
                "kind": k.kind,
                "plural": k.plural,
                "singular": k.kind.lower(),
                "list_kind": f"{k.kind}List",
                "namespaced": k.namespaced,
                "subresources": list(k.subresources),
                "short_names": [],
                "categories": [],
                "family": "kubernetes",
                "model_path": f"{definition.module}.{k.kind}",
                "served_by": [],
                "storage_in": [],
                "deprecated_in": [],
            }
        )
    return rows


def _add_crd_data(emitter: Emitter, catalog: Catalog, lock_source: list[str]) -> None:
    by_release: dict[tuple[str, str], list[CrdInfo]] = {}
    for crd in catalog.crds:
        by_release.setdefault((crd.family, crd.release), []).append(crd)
    for (family, tag), crds in sorted(by_release.items()):
        docs = [_compact_crd(crd) for crd in sorted(crds, key=lambda c: c.plural)]
        source = sorted({f"{c.source_path} sha256:{c.sha256}" for c in crds})
        emitter.add_data(f"_data/crds/{family}@{tag}.json.gz", docs, source)
    emitter.add(
        "_crds.py",
        emitter.render(
            "crds.py.j2",
            header=emitter.header(lock_source),
            releases=sorted((f, tuple(t)) for f, t in catalog.releases.items()),
            defaults=sorted(catalog.default_releases().items()),
        ),
    )


def _compact_crd(crd: CrdInfo) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{crd.plural}.{crd.group}",
            "annotations": {"flarekit.dev/source": f"{crd.source_path} sha256:{crd.sha256}"},
        },
        "spec": _strip_descriptions(crd.raw_spec),
    }


def _strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_descriptions(v)
            for k, v in value.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(value, list):
        return [_strip_descriptions(v) for v in value]
    return value


def _module_doc(module: ModulePlan, catalog: Catalog) -> str:
    kinds = sorted(c.root.kind for c in module.classes.values() if c.root is not None)
    if module.name not in catalog.modules():
        shared = f"Kubernetes {module.name} types shared by every CRD that embeds them"
        return f"{shared}; resources: {', '.join(kinds)}." if kinds else f"{shared}."
    if kinds:
        group = next(c.root.group for c in module.classes.values() if c.root is not None)
        version = module.name.split(".")[-1]
        return f"Models of {group}/{version}: {', '.join(kinds)}."
    return f"Kubernetes {module.name} types shared by every CRD that embeds them."


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
