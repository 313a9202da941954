"""Recognise the Kubernetes types that CRD schemas embed, by structure alone.

A CRD node is a copy of a Kubernetes definition when its properties are (almost)
a subset of the definition's and every shared property has a compatible type,
recursively. Matching is top-down: the highest node that is clearly a copy
(for example a pod template) is recognised first, and its children then take
the types the definition gives them, so small ambiguous shapes (``{name}``)
are never guessed on their own. Nothing here knows any family's field names.
"""

from __future__ import annotations

from dataclasses import dataclass

from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import Definition, KubernetesDefinitions, PropertyType

#: A node may carry this share of properties unknown to the definition (newer fields).
_EXTRA_SHARE = 0.1
#: A node must cover at least this share of the definition's properties to anchor on it...
_MIN_COVERAGE = 0.5
#: ...and match at least this many properties in its subtree. Types outside core/v1 and
#: meta/v1 need deeper evidence: a flat shape such as {type, status, reason, message,
#: lastUpdateTime, lastTransitionTime} is a job's condition as often as a Deployment's.
_MIN_SCORE = 3
_MIN_SCORE_OTHER_GROUPS = 10


@dataclass(frozen=True)
class _Match:
    ok: bool
    score: int = 0


class Recogniser:
    """Annotates CRD schema trees with the Kubernetes types they embed."""

    def __init__(self, defs: KubernetesDefinitions) -> None:
        self.defs = defs
        self._memo: dict[tuple[str, str], _Match] = {}
        self._best: dict[str, str | None] = {}
        #: Every CRD node recognised as a copy of a definition, in the order met
        #: (:mod:`flarekit_generator.core_copies` decides which of them share its class).
        self.copies: dict[str, list[Node]] = {}

    # -- matching -----------------------------------------------------------------
    def _allowed_extras(self, node: Node) -> int:
        return int(len(node.properties) * _EXTRA_SHARE)

    def match_definition(self, node: Node, name: str) -> _Match:
        key = (node.digest(), name)
        found = self._memo.get(key)
        if found is None:
            found = self._match_definition(node, self.defs.definitions[name])
            self._memo[key] = found
        return found

    def _match_definition(self, node: Node, definition: Definition) -> _Match:
        if node.shape != "object":
            return _Match(node.shape == "free")
        extra = [p for p in node.properties if p not in definition.properties]
        if len(extra) > self._allowed_extras(node):
            return _Match(False)
        score = 0
        for prop, child in node.properties.items():
            expected = definition.properties.get(prop)
            if expected is None:
                continue
            matched = self._match_type(child, expected)
            if not matched.ok:
                return _Match(False)
            score += 1 + matched.score
        return _Match(True, score)

    def _match_type(self, node: Node, expected: PropertyType) -> _Match:
        shape = expected.shape
        if shape == "ref":
            assert expected.ref is not None
            if node.shape in ("object", "free"):
                return self.match_definition(node, expected.ref)
            return _Match(False)
        if shape in ("array", "map"):
            if node.shape == "free" or node.shape == "any":
                return _Match(True)
            if node.shape != shape:
                return _Match(False)
            inner = node.items if shape == "array" else node.values
            assert inner is not None and expected.inner is not None
            return self._match_type(inner, expected.inner)
        if shape == "free":
            return _Match(node.shape in ("free", "object", "any", "map"))
        if shape == "int-or-string":
            return _Match(node.shape in ("int-or-string", "string", "any"))
        if shape == "integer":
            return _Match(node.shape in ("integer", "number"))
        if shape == "number":
            return _Match(node.shape in ("number", "integer"))
        return _Match(node.shape == shape)

    def best_definition(self, node: Node) -> str | None:
        """The definition this node most plausibly copies, if it clearly copies one."""
        digest = node.digest()
        if digest in self._best:
            return self._best[digest]
        result = self._find_best(node)
        self._best[digest] = result
        return result

    def _find_best(self, node: Node) -> str | None:
        props = list(node.properties)
        if node.shape != "object" or len(props) < 2:
            return None
        counts: dict[str, int] = {}
        for prop in props:
            for name in self.defs.by_property.get(prop, ()):
                counts[name] = counts.get(name, 0) + 1
        needed = len(props) - self._allowed_extras(node)
        ranked: list[tuple[float, int, int, str]] = []
        for name, hits in counts.items():
            if hits < needed:
                continue
            definition = self.defs.definitions[name]
            coverage = hits / len(definition.properties)
            if coverage < _MIN_COVERAGE:
                continue
            if coverage < 1 and not set(node.required) <= set(definition.required):
                # Part of the type's fields, and it requires what the type leaves optional: a
                # shape of its own that happens to share names (Kueue's priorityClassRef, whose
                # group, kind and name are three of meta/v1 StatusDetails' six), not a copy.
                continue
            matched = self.match_definition(node, name)
            rank = _module_rank(definition)
            needed_score = _MIN_SCORE if rank < 2 else _MIN_SCORE_OTHER_GROUPS
            if not matched.ok or matched.score < needed_score:
                continue
            ranked.append((-coverage, -matched.score, rank, name))
        if not ranked:
            return None
        ranked.sort()
        return ranked[0][3]

    # -- annotation ---------------------------------------------------------------
    def annotate(self, node: Node, *, skip_root: bool = True) -> None:
        """Set ``core_type`` on every recognised node of a CRD tree (top-down)."""
        if not skip_root:
            name = self.best_definition(node)
            if name is not None:
                self._assign(node, name)
                return
        for child in node.children():
            self.annotate(child, skip_root=False)

    def _assign(self, node: Node, name: str) -> None:
        if node.shape != "object":
            node.core_type = name  # a free-form copy: typed by the definition
            return
        definition = self.defs.definitions[name]
        node.core_type = name
        self.copies.setdefault(name, []).append(node)
        for prop, child in node.properties.items():
            expected = definition.properties.get(prop)
            if expected is not None:
                self._assign_type(child, expected)

    def _assign_type(self, node: Node, expected: PropertyType) -> None:
        if expected.shape == "ref":
            assert expected.ref is not None
            self._assign(node, expected.ref)
        elif expected.shape == "array" and node.items is not None and expected.inner:
            self._assign_type(node.items, expected.inner)
        elif expected.shape == "map" and node.values is not None and expected.inner:
            self._assign_type(node.values, expected.inner)


def _module_rank(definition: Definition) -> int:
    """Prefer core/v1, then meta/v1, then other API groups when shapes tie."""
    if definition.name.startswith("io.k8s.api.core.v1."):
        return 0
    if definition.name.startswith("io.k8s.apimachinery.pkg.apis.meta.v1."):
        return 1
    return 2
