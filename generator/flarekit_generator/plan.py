"""Plan the classes to emit: names, fields, Python types and the file each lives in.

Input: for every group-version module, the root schema of each kind (already
annotated by :mod:`flarekit_generator.recognise`) and the Kubernetes
definitions. Output: :class:`ModulePlan` objects the templates render.

* Kubernetes types are planned once, from their definitions, under their own
  names, in ``core.v1`` / ``meta.v1`` / ``batch.v1``; every CRD shares them.
* Family types are de-duplicated by structure. A shape reached under
  different roles keeps one class only when the roles share a name
  (``LivenessProbe``/``ReadinessProbe`` -> ``Probe``); otherwise each role keeps
  its own class, so an attribute is never typed by a class named for another.
* Classes are spread over private files, one per kind (or per entry type for
  Kubernetes modules), so importing one kind creates only its own classes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from flarekit_generator.core_copies import CoreShapes
from flarekit_generator.field_types import FieldPlan, TypeRenderer, build_fields, cel_rules
from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import BUILT_IN_KINDS, KubernetesDefinitions
from flarekit_generator.naming import (
    camel_words,
    common_suffix,
    no_trailing_digit,
    pascal_case,
    singular,
    snake_case,
)

#: Names the generated modules import; a class may not take one of them.
HELPER_NAMES = frozenset(
    {
        "Any",
        "Annotated",
        "Field",
        "Literal",
        "KubeModel",
        "KubeResource",
        "Int32",
        "Int64",
        "Integer",
        "Number",
        "Boolean",
        "IntOrString",
        "Quantity",
        "DateTime",
        "Float32",
        "JsonObject",
        "JsonValue",
        "EmbeddedResource",
        "TYPE_CHECKING",
    }
)
#: Suffixes too generic to justify merging differently-named roles into one class.
_GENERIC_WORDS = frozenset(
    {
        "Spec",
        "Status",
        "Config",
        "Configuration",
        "Ref",
        "Reference",
        "Policy",
        "Options",
        "Settings",
        "Template",
        "Item",
        "Info",
        "Source",
        "Selector",
        "Strategy",
        "Condition",
        "Override",
        "Overrides",
        "Value",
        "Name",
        "Set",
        "Group",
        "Target",
        "Rule",
        "Resource",
        "Resources",
        "Metadata",
        "Data",
        "Parameters",
    }
)


@dataclass
class RootInfo:
    """What makes a class a top-level Kubernetes resource."""

    group: str
    version: str
    kind: str
    #: The scale subresource's paths (specReplicasPath -> ("spec", "replicas")), if any.
    scale: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def api_version(self) -> str:
        """``group/version``, or the bare version for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass
class ClassPlan:
    """One generated class."""

    name: str
    module: str  # e.g. "ray.v1"
    doc: str
    fields: list[FieldPlan] = field(default_factory=list)
    refs: set[tuple[str, str]] = field(default_factory=set)  # (module, class name)
    root: RootInfo | None = None
    file: str = ""  # private file stem, e.g. "_ray_cluster"
    rules: tuple[str, ...] = ()  # CEL rules, documented


@dataclass
class ModulePlan:
    """One public module (a package with private files) such as ``ray.v1``."""

    name: str
    classes: dict[str, ClassPlan] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # header lines naming the inputs

    def files(self) -> dict[str, list[ClassPlan]]:
        out: dict[str, list[ClassPlan]] = defaultdict(list)
        for plan in self.classes.values():
            out[plan.file].append(plan)
        return dict(sorted(out.items()))


def plan_core(
    defs: KubernetesDefinitions, used: set[str], shapes: CoreShapes
) -> dict[str, ModulePlan]:
    """Plan every Kubernetes type reachable from the ones the CRDs embed and from the
    built-in kinds; those kinds become resources (`KubeResource`). Each type carries the
    checks of the CRD copies that share it (:mod:`flarekit_generator.core_copies`)."""
    built_ins = {k.definition: k for k in BUILT_IN_KINDS}
    used = used | set(built_ins)
    modules: dict[str, ModulePlan] = {}
    names = sorted(defs.closure(used))
    by_name = {name: defs.definitions[name] for name in names}

    def resolve(node: Node, role: tuple[str, ...]) -> tuple[str, str] | None:
        if node.core_type is None or node.core_type not in by_name:
            return None
        definition = by_name[node.core_type]
        return definition.module, definition.short_name

    renderer = TypeRenderer(resolve)
    for name in names:
        definition = by_name[name]
        node = shapes.node_for(defs, name)
        module = modules.setdefault(definition.module, ModulePlan(definition.module))
        plan = ClassPlan(name=definition.short_name, module=definition.module, doc=node.description)
        built_in = built_ins.get(name)
        skip: frozenset[str] = frozenset()
        if built_in is not None:
            plan.root = RootInfo(built_in.group, built_in.version, built_in.kind)
            skip = frozenset({"apiVersion", "kind", "metadata"})
        plan.fields = build_fields(node, renderer, (), plan.refs, lambda r, j, c: r, skip=skip)
        plan.refs.discard((plan.module, plan.name))
        module.classes[plan.name] = plan
    for module in modules.values():
        _assign_files(module, entry_order="closure")
    return modules


# --------------------------------------------------------------------------- families
@dataclass
class _Occurrence:
    node: Node
    base: str
    parent: tuple[str, str] | None  # identity of the parent class
    depth: int
    order: int
    kind: str = ""  # the kind whose schema holds it

    @property
    def key(self) -> str:
        # Kinds never share a class, even when their schemas are identical
        # (TrainingRuntime and ClusterTrainingRuntime).
        return f"kind:{self.base}" if self.depth == 0 else self.node.digest()


class FamilyPlanner:
    """Plans the classes of one group-version module from its kinds' root schemas."""

    def __init__(self, module: str, group: str, version: str, reserved: set[str]) -> None:
        self.module = module
        self.group = group
        self.version = version
        self.reserved = reserved
        self._occurrences: list[_Occurrence] = []
        self._identity: dict[tuple[str, str], tuple[str, str]] = {}  # (digest, base) -> identity
        self._names: dict[tuple[str, str], str] = {}
        self._core_ref: Any = None
        self._kind = ""

    def plan(
        self,
        roots: list[tuple[str, Node]],
        core_ref: Any,
        sources: list[str],
        scales: dict[str, tuple[tuple[str, str], ...]] | None = None,
    ) -> ModulePlan:
        self._core_ref = core_ref
        for kind, root in sorted(roots, key=lambda r: r[0]):
            self._kind = kind
            self._collect(root, kind, None, 0, is_root=True)
        self._resolve_identities()
        self._assign_names()
        module = ModulePlan(self.module, sources=sources)
        renderer = TypeRenderer(self._resolve)
        built: set[tuple[str, str]] = set()
        for occ in sorted(self._occurrences, key=lambda o: (o.depth, o.order)):
            identity = self._identity[(occ.key, occ.base)]
            if identity in built:
                continue
            built.add(identity)
            name = self._names[identity]
            plan = ClassPlan(name=name, module=self.module, doc=occ.node.description)
            plan.rules = cel_rules(occ.node)
            is_root = occ.depth == 0
            skip = frozenset({"apiVersion", "kind", "metadata"}) if is_root else frozenset()
            if is_root:
                scale = {
                    name: tuple(path.lstrip(".").split("."))
                    for name, path in (scales or {}).get(occ.base, ())
                }
                plan.root = RootInfo(self.group, self.version, occ.base, scale)
            parent_base = occ.base if is_root else ""

            def child_role(
                _role: tuple[str, ...], json_name: str, child: Node, parent_base: str = parent_base
            ) -> tuple[str, ...]:
                return (self._child_base(parent_base, json_name, child),)

            plan.fields = build_fields(
                occ.node, renderer, (name,), plan.refs, child_role, skip=skip
            )
            plan.refs.discard((self.module, name))
            module.classes[name] = plan
        _assign_files(module, entry_order="roots")
        return module

    # pass 1: every object occurrence, with the role name its path suggests
    def _collect(
        self, node: Node, base: str, parent: tuple[str, str] | None, depth: int, is_root: bool
    ) -> None:
        occ = _Occurrence(node, base, parent, depth, len(self._occurrences), self._kind)
        self._occurrences.append(occ)
        identity = (occ.key, base)  # provisional, fixed in pass 2
        for json_name in sorted(node.properties):
            if is_root and json_name in ("apiVersion", "kind", "metadata"):
                continue
            child = node.properties[json_name]
            child_base = self._child_base(base if is_root else "", json_name, child)
            target = _unwrap(child)
            if target is not None:
                self._collect(target, child_base, identity, depth + 1, is_root=False)

    @staticmethod
    def _child_base(root_kind: str, json_name: str, child: Node) -> str:
        name = json_name
        if child.shape in ("array", "map"):
            name = singular(json_name)
        role = pascal_case(name)
        target = _unwrap(child)
        if target is not None and target.copy_of and role in _GENERIC_WORDS:
            # A Kubernetes type this CRD constrains its own way: named after the type
            # (``PodSpec``), not after a generic role (``Spec``).
            role = target.copy_of.rsplit(".", 1)[1]
        return root_kind + role

    # pass 2: one identity per shape and role family
    def _resolve_identities(self) -> None:
        bases: dict[str, list[str]] = defaultdict(list)
        for occ in self._occurrences:
            if occ.base not in bases[occ.key]:
                bases[occ.key].append(occ.base)
        for digest, names in bases.items():
            merged = _merged_role(names)
            for base in names:
                self._identity[(digest, base)] = (digest, merged or base)

    # pass 3: names, shallow first, qualified by the ancestors' names on a clash
    def _assign_names(self) -> None:
        parent_of: dict[tuple[str, str], tuple[str, str] | None] = {}
        for occ in sorted(self._occurrences, key=lambda o: (o.depth, o.order)):
            identity = self._identity[(occ.key, occ.base)]
            if identity not in parent_of:
                parent_of[identity] = self._identity[occ.parent] if occ.parent else None
        taken: set[str] = set()
        for occ in sorted(self._occurrences, key=lambda o: (o.depth, o.order)):
            identity = self._identity[(occ.key, occ.base)]
            if identity in self._names:
                continue
            role = identity[1]
            candidates = _name_candidates(role, identity, parent_of, self._names)
            if occ.node.copy_of:
                # Qualified by its kind before its ancestors: TrainJobPodSpec.
                candidates.insert(min(1, len(candidates)), no_trailing_digit(occ.kind + role))
            chosen = next((c for c in candidates if c not in taken and c not in self.reserved), "")
            if not chosen:
                chosen = candidates[-1] + "Item"
                while chosen in taken or chosen in self.reserved:
                    chosen += "Item"
            taken.add(chosen)
            self._names[identity] = chosen

    def _resolve(self, node: Node, role: tuple[str, ...]) -> tuple[str, str] | None:
        if node.core_type is not None:
            return self._core_ref(node)  # type: ignore[no-any-return]
        base = role[0] if role else ""
        identity = self._identity.get((node.digest(), base))
        if identity is None:
            return None
        return self.module, self._names[identity]


def _stem(name: str) -> str:
    """A parent's name as a qualifier: ``TrainingRuntimeSpec`` -> ``TrainingRuntime``."""
    words = camel_words(name)
    if len(words) > 1 and words[-1] in ("Spec", "Status"):
        return "".join(words[:-1])
    return name


def _name_candidates(
    role: str,
    identity: tuple[str, str],
    parent_of: dict[tuple[str, str], tuple[str, str] | None],
    names: dict[tuple[str, str], str],
) -> list[str]:
    """Names to try in order: the role, then qualified by ever more ancestors.

    A generic role (``Spec``, ``Template``) says nothing alone, so it is always
    qualified by its parent: ``TrainingRuntimeSpec.template`` -> ``TrainingRuntimeTemplate``.
    """
    candidates = [] if role in _GENERIC_WORDS and parent_of[identity] else [role]
    prefix = ""
    ancestor = parent_of[identity]
    while ancestor is not None:
        prefix = prefix or _stem(names[ancestor])
        candidates.append(prefix + role)
        ancestor = parent_of[ancestor]
        if ancestor is not None and not prefix.startswith(_stem(names[ancestor])):
            prefix = _stem(names[ancestor]) + prefix
    return [no_trailing_digit(c) for c in candidates] or [no_trailing_digit(role)]


def _unwrap(node: Node) -> Node | None:
    """The object node a property holds (through arrays and maps), if it is a family class."""
    while node.shape in ("array", "map"):
        inner = node.items if node.shape == "array" else node.values
        assert inner is not None
        node = inner
    if node.shape == "object" and node.core_type is None:
        return node
    return None


def _merged_role(bases: list[str]) -> str | None:
    if len(bases) == 1:
        return bases[0]
    suffix = common_suffix(bases)
    if not suffix or suffix in _GENERIC_WORDS:
        return None
    return suffix


# --------------------------------------------------------------------------- files
def _assign_files(module: ModulePlan, entry_order: str) -> None:
    """Spread a module's classes over private files, one per entry class."""
    classes = module.classes
    local_refs = {
        name: sorted(ref for mod, ref in plan.refs if mod == module.name and ref in classes)
        for name, plan in classes.items()
    }

    def closure(start: str) -> list[str]:
        seen: list[str] = []
        stack = [start]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.append(current)
            stack.extend(reversed(local_refs[current]))
        return seen

    if entry_order == "roots":
        entries = sorted(name for name, plan in classes.items() if plan.root is not None)
    else:
        referenced_inside = {ref for refs in local_refs.values() for ref in refs}
        entries = sorted(
            (name for name in classes if name not in referenced_inside),
            key=lambda n: (-len(closure(n)), n),
        )
        # Classes only reachable through cycles still need an entry.
        reachable = {c for e in entries for c in closure(e)}
        entries += sorted(set(classes) - reachable)
    for entry in entries:
        stem = "_" + snake_case(entry).rstrip("_")
        if entry_order == "roots":
            # A kind alone in its file: importing it creates one class; the types it
            # uses live beside it and load when the model is first used.
            classes[entry].file = stem
            stem += "_types"
        for name in closure(entry):
            if not classes[name].file:
                classes[name].file = stem
    for plan in classes.values():
        if not plan.file:
            plan.file = "_" + snake_case(plan.name).rstrip("_")
