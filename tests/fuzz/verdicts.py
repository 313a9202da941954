"""Two verdicts on one case, compared: the same outcome, and a refusal at the same paths.

Each side of a comparison (the models, the reference, FakeCluster's admission, the real API
server) says whether it accepts a case and, if not, where it finds each problem, as dotted
paths (``spec.workerGroupSpecs.0.replicas``). Two refusals agree only when they name the same
paths: "both refuse" is not enough, since a model that refuses a good field next to the bad
one would pass it.

Three kinds of refusal are compared as they can be:

* a body the judge cannot decode at all (NaN, a number beyond float64, nesting past 10,000
  levels): the API server answers 400 without a path, so the other side must refuse, and if
  it knows where the undecodable value is it must name it;
* a refusal by a CEL rule (``x-kubernetes-validations``): only the sides that evaluate them
  can agree on those paths; the others' acceptance is the documented class ``cel``;
* a refusal where the other side's extra paths are all places the judge drops without a
  word (``pruned``) or takes as it is (``integral-float``): that side is stricter there
  by design, and says where; these paths are set aside before the comparison.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: The result of a comparison that agrees.
AGREE = "agree"


def dotted(path: str) -> str:
    """A server field path (``spec.a[0].b``, ``.spec.a``, ``metadata.labels[k]``) as the
    dotted form the models' and the reference's paths are compared in (``spec.a.0.b``)."""
    return re.sub(r"\[([^\]]*)\]", r".\1", path).lstrip(".")


def joined(path: Iterable[Any]) -> str:
    """A path given as its parts (a pydantic ``loc``, a reference path) in dotted form."""
    return ".".join(str(part) for part in path)


@dataclass
class Side:
    """One side's verdict on a case."""

    accepted: bool
    #: Where each problem is (dotted paths), for a refusal.
    paths: set[str] = field(default_factory=set)
    #: Where a CEL rule failed (only sides that evaluate the rules report them).
    cel_paths: set[str] = field(default_factory=set)
    #: Refused before validation, as a body that cannot be decoded; and where, if known.
    undecodable: bool = False
    undecodable_at: set[str] = field(default_factory=set)


@dataclass
class Outcome:
    """A comparison's result: AGREE, a documented class, or a disagreement's wording."""

    result: str
    detail: str = ""

    @property
    def disagrees(self) -> bool:
        return self.result not in (AGREE, *DOCUMENTED)


#: The documented classes: a side that differs from the judge in one of these ways, and only
#: in these, is right to (see docs/fuzzing.md).
DOCUMENTED = (
    "cel",
    "integral-float",
    "pruned",
    "duplicate-at-key",
    "duplicate-unseen",
    "embedded-at-object",
    "scale-unchecked",
)


def _covered(path: str, places: Iterable[str]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in places)


def compare(
    side: Side,
    judge: Side,
    *,
    pruned: Iterable[str] = (),
    integral_floats: Iterable[str] = (),
    scale_paths: Iterable[str] = (),
    evaluates_cel: bool = False,
) -> Outcome:
    """`side` against `judge` on one case. `pruned` and `integral_floats` are the places
    where the judge drops a value or takes a float for an integer (from the reference's
    verdict), `scale_paths` the kind's scale subresource paths; `evaluates_cel` says whether
    `side` evaluates the CEL rules."""
    pruned, floats = set(pruned), set(integral_floats)
    extra = {p for p in side.paths - judge.paths if _covered(p, pruned) or _covered(p, floats)}
    classes = {"pruned" if _covered(p, pruned) else "integral-float" for p in extra}
    own = side.paths - extra
    if judge.accepted:
        if side.accepted:
            return Outcome(AGREE)
        if not own and not side.cel_paths and not side.undecodable:
            return Outcome(",".join(sorted(classes)))
        return Outcome("refuses what the judge accepts", _paths(own | side.cel_paths))
    if judge.undecodable:
        if side.accepted:
            return Outcome("accepts what the judge cannot decode")
        if judge.undecodable_at and not _related(
            side.paths | side.undecodable_at, judge.undecodable_at
        ):
            return Outcome(
                "refuses, not where the value that cannot be decoded is",
                f"{_paths(side.paths)} vs {_paths(judge.undecodable_at)}",
            )
        return Outcome(AGREE)
    if side.undecodable:
        return Outcome("cannot decode what the judge decodes", _paths(side.undecodable_at))
    if not judge.paths and judge.cel_paths and not evaluates_cel:
        # Only CEL rules refused it: a side without them accepts, unless it found more.
        if side.accepted or not own:
            return Outcome("cel")
        return Outcome("refuses at paths the judge does not name", _paths(own))
    if side.accepted:
        return Outcome("accepts what the judge refuses", _paths(judge.paths | judge.cel_paths))
    # The API server also names the scale subresource's replicas path when a value on its
    # way has the wrong type: a consequence of the refusal both sides name.
    consequences = {
        p for p in judge.paths - own if p in set(scale_paths) and _covered(p, own & judge.paths)
    }
    unchecked = judge.paths - own - consequences
    if unchecked and unchecked <= set(scale_paths) and (own & judge.paths or side.accepted):
        # The scale subresource's replicas (0 to 2^31-1) are not checked by the models.
        return Outcome("scale-unchecked")
    if own != judge.paths - consequences:
        named = _named_elsewhere(
            own - judge.paths, judge.paths - own - consequences, own & judge.paths
        )
        if named:
            return Outcome(named)
        return Outcome(
            "both refuse, at other paths",
            f"{_paths(own)} vs the judge's {_paths(judge.paths)}",
        )
    if evaluates_cel and side.cel_paths != judge.cel_paths:
        return Outcome(
            "both refuse, other CEL rules failing",
            f"{_paths(side.cel_paths)} vs the judge's {_paths(judge.cel_paths)}",
        )
    return Outcome(AGREE)


def _named_elsewhere(mine: set[str], theirs: set[str], shared: set[str]) -> str | None:
    """The documented class of a refusal the models name one level off the judge's place:
    a duplicate list-map key at the key's field instead of the item (``duplicate-at-key``),
    an embedded object without apiVersion or kind at the object instead of the missing
    fields (``embedded-at-object``), a duplicate item not named where the side names an
    error inside it (``duplicate-unseen``: the models check uniqueness once the items are
    valid). Every place on either side must be so explained."""
    found = set()
    for path in list(theirs):
        # A duplicate item the side does not name, while it names an error inside it.
        parent, _, last = path.rpartition(".")
        if last.isdigit() and any(m.startswith(parent + ".") for m in shared):
            found.add("duplicate-unseen")
            theirs = theirs - {path}
    if not mine and not theirs:
        return ",".join(sorted(found)) or None
    for path in mine:
        parent = path.rpartition(".")[0]
        if parent in theirs:
            found.add("duplicate-at-key")
        elif {f"{path}.apiVersion", f"{path}.kind"} & theirs:
            found.add("embedded-at-object")
        else:
            return None
    for path in theirs:
        head, _, last = path.rpartition(".")
        if not any(m.rpartition(".")[0] == path for m in mine) and not (
            last in ("apiVersion", "kind") and head in mine
        ):
            return None
    return ",".join(sorted(found)) or None


def _related(mine: set[str], theirs: set[str]) -> bool:
    """Whether one of `mine` names one of `theirs`, or a place on its way (nesting too deep
    is found where a side counts the levels, a parent of the deepest value)."""
    return any(
        a == b or b.startswith(a + ".") or a.startswith(b + ".") for a in mine for b in theirs
    )


def _short(path: str) -> str:
    return (
        path if len(path) <= 100 else f"{path[:60]}...{path[-30:]} ({path.count('.') + 1} levels)"
    )


def _paths(paths: Iterable[str]) -> str:
    shown = sorted(paths)
    text = ", ".join(_short(p) if p else "(the object)" for p in shown[:4])
    return f"[{text}{', ...' if len(shown) > 4 else ''}]"
