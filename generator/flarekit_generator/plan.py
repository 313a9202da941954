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

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from flarekit_generator.core_copies import CoreShapes
from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import BUILT_IN_KINDS, QUANTITY_PATTERN, KubernetesDefinitions
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
class FieldPlan:
    """One attribute of a generated class."""

    attr: str
    json_name: str
    annotation: str
    required: bool
    doc: str


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


# --------------------------------------------------------------------------- types
class TypeRenderer:
    """Renders IR nodes as Python type expressions, noting class references."""

    def __init__(self, resolve_class: Any) -> None:
        self._resolve_class = resolve_class  # (node, role) -> (module, class name) | None

    def render(self, node: Node, role: tuple[str, ...], refs: set[tuple[str, str]]) -> str:
        shape = node.shape
        if node.core_type is not None or shape == "object":
            target: tuple[str, str] | None = self._resolve_class(node, role)
            if target is None:
                return _object_size(node, "JsonObject")
            refs.add(target)
            return _object_size(node, target[1])
        if shape == "array":
            assert node.items is not None
            inner = self.render(node.items, role, refs)
            return _with_constraints(
                f"list[{inner}]",
                min_len=node.min_items,
                max_len=node.max_items,
                extra=_list_type(node),
            )
        if shape == "map":
            assert node.values is not None
            inner = self.render(node.values, role, refs)
            return _with_constraints(
                f"dict[str, {inner}]", min_len=node.min_properties, max_len=node.max_properties
            )
        if shape == "free":
            base = "EmbeddedResource" if node.embedded_resource else "JsonObject"
            return _object_size(node, base)
        if shape == "any":
            return "JsonValue"
        if shape == "boolean":
            return "Boolean"
        if shape == "string":
            return _string_type(node)
        if shape == "int-or-string":
            if node.pattern == QUANTITY_PATTERN:
                return "Quantity"
            if node.pattern:
                return f"Annotated[int | str, int_or_string_matching({_pyrepr(node.pattern)})]"
            if node.enum:
                return f"Integer | {_string_type(node)}"
            return "IntOrString"
        if shape == "integer":
            base = {"int32": "Int32", "int64": "Int64"}.get(node.format or "", "Integer")
            return _numeric(base, node)
        if shape == "number":
            if node.enum:
                return _literal(node.enum)
            float32 = node.format == "float"
            if node.minimum is None and node.maximum is None:
                return "Float32" if float32 else "Number"
            bounds = _bounds(node)[2:] + (", float32=True" if float32 else "")
            return f"Annotated[int | float, number_in_range({bounds})]"
        raise ValueError(f"unhandled shape {shape}")


def _list_type(node: Node) -> str | None:
    """The uniqueness check of ``x-kubernetes-list-type: set`` or ``map``."""
    if node.list_type == "set":
        return "list_set()"
    if node.list_type == "map" and node.list_map_keys:
        items = node.items
        keys = ", ".join(json.dumps(k) for k in node.list_map_keys)
        defaults = {}
        if items is not None:
            for key in node.list_map_keys:
                child = items.properties.get(key)
                if child is not None and child.has_default:
                    defaults[key] = child.default
        if defaults:
            return f"list_map({keys}, defaults={_pyrepr_value(defaults)})"
        return f"list_map({keys})"
    return None


def _object_size(node: Node, base: str) -> str:
    """An object's ``minProperties``/``maxProperties``, counted as the API server counts:
    after defaulting, and without the unknown fields it prunes."""
    if node.min_properties is None and node.max_properties is None:
        return base
    args = []
    if node.min_properties is not None:
        args.append(f"min_properties={node.min_properties}")
    if node.max_properties is not None:
        args.append(f"max_properties={node.max_properties}")
    defaulted = tuple(name for name, child in sorted(node.properties.items()) if child.has_default)
    if defaulted:
        args.append("defaulted=(" + "".join(f"{json.dumps(d)}, " for d in defaulted) + ")")
    if node.shape == "object" and node.preserve_unknown:
        args.append("keeps_unknown=True")
    return f"Annotated[{base}, object_size({', '.join(args)})]"


def _pyrepr_value(value: Any) -> str:
    """A Python literal of JSON data."""
    return repr(value)


def _literal(values: tuple[Any, ...]) -> str:
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


def _string_type(node: Node) -> str:
    if node.enum:
        return _literal(node.enum)
    args = []
    if node.pattern is not None:
        args.append(f"pattern={_pyrepr(node.pattern)}")
    if node.min_length is not None:
        args.append(f"min_length={node.min_length}")
    if node.max_length is not None:
        args.append(f"max_length={node.max_length}")
    if node.format == "date-time" and not args:
        return "DateTime"
    if not args:
        return "str"
    return f"Annotated[str, Field({', '.join(args)})]"


def _bounds(node: Node) -> str:
    out = ""
    if node.minimum is not None:
        out += f", {'gt' if node.exclusive_minimum else 'ge'}={_num(node.minimum)}"
    if node.maximum is not None:
        out += f", {'lt' if node.exclusive_maximum else 'le'}={_num(node.maximum)}"
    return out


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _numeric(base: str, node: Node) -> str:
    if node.enum:
        # Checked exactly, so True and 1.0 are not taken for 1.
        choices = ", ".join(json.dumps(v) for v in node.enum)
        return f"Annotated[{_literal(node.enum)}, one_of({choices})]"
    bounds = _bounds(node)
    return f"Annotated[{base}, Field({bounds[2:]})]" if bounds else base


def _with_constraints(
    expr: str, *, min_len: int | None, max_len: int | None, extra: str | None = None
) -> str:
    args = []
    if min_len is not None:
        args.append(f"min_length={min_len}")
    if max_len is not None:
        args.append(f"max_length={max_len}")
    metadata = [f"Field({', '.join(args)})"] if args else []
    if extra:
        metadata.append(extra)
    return f"Annotated[{expr}, {', '.join(metadata)}]" if metadata else expr


def _pyrepr(text: str) -> str:
    """A Python string literal, raw where that reads better."""
    if "\\" in text and '"' not in text and not text.endswith("\\"):
        return 'r"' + text + '"'
    return json.dumps(text)


# --------------------------------------------------------------------------- docs
def field_doc(node: Node) -> str:
    notes = []
    if node.has_default:
        notes.append(f"Server default: ``{json.dumps(node.default)}``.")
    if node.list_type == "map" and node.list_map_keys:
        keys = ", ".join(f"``{k}``" for k in node.list_map_keys)
        notes.append(
            f"A list keyed by {keys}: no two items have the same key, and patches merge "
            "items with the same key."
        )
    elif node.list_type == "set":
        notes.append("A set: items are unique.")
    elif node.list_type == "atomic":
        notes.append("Atomic: patches replace the whole list.")
    if node.map_type == "atomic":
        notes.append("Atomic: patches replace the whole map.")
    elif node.map_type == "granular":
        notes.append("Granular: patches merge keys.")
    rules = _rules(node) if node.shape not in ("object",) or node.core_type else ()
    if rules:
        notes.append(
            "Server-side rules (CEL, checked by the API server only): "
            + "; ".join(f"``{rule}``" for rule in rules)
        )
    return "\n\n".join([node.description, " ".join(notes)] if notes else [node.description]).strip()


def _rules(node: Node) -> tuple[str, ...]:
    out = []
    for rule in node.validations:
        text = rule.get("rule", "")
        message = rule.get("message") or rule.get("messageExpression")
        out.append(f"{text}  ({message})" if message else str(text))
    return tuple(out)


# --------------------------------------------------------------------------- fields
def build_fields(
    node: Node,
    renderer: TypeRenderer,
    role: tuple[str, ...],
    refs: set[tuple[str, str]],
    child_role: Any,
    skip: frozenset[str] = frozenset(),
) -> list[FieldPlan]:
    """Fields of an object node; attribute names made unique within the class."""
    fields: list[FieldPlan] = []
    taken: set[str] = set()
    for json_name in sorted(node.properties):
        if json_name in skip:
            continue
        child = node.properties[json_name]
        attr = snake_case(json_name)
        while attr in taken:
            attr += "_"
        taken.add(attr)
        annotation = renderer.render(child, child_role(role, json_name, child), refs)
        # The API server applies defaults before it checks required fields.
        required = json_name in node.required and not child.has_default
        if not required or child.nullable:
            annotation = f"{annotation} | None" if annotation != "JsonValue" else annotation
        fields.append(FieldPlan(attr, json_name, annotation, required, field_doc(child)))
    return fields


# --------------------------------------------------------------------------- Kubernetes
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
            plan.rules = _rules(occ.node)
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
