"""Differential fuzzing: the generated models against the reference, on mutated real objects.

For each family, the shared samples its kinds have (``../shared/samples``) that the
reference accepts are the seeds; each case is a seed with one to three mutations
(``mutate``). A case passes when the model and the reference agree (both accept, or both
refuse), and an accepted object round-trips exactly (``to_dict()`` gives back the input).

Where they disagree and the model is right, the difference is one of these documented
classes; anything else is a failure:

``pruned``
    The model refuses a value that the API server would drop without a word: a field the
    CRD does not declare, but the shared Kubernetes type does (a newer field of a pod, or
    anything under a template ``metadata`` that the CRD types as a bare object), or a
    ``null`` it prunes. The model checks what is written; the server would lose it.
``integral-float``
    The model refuses ``3.0`` for an integer, which the API server takes (and stores as
    ``3``): the models keep JSON types as given, so what is read is what was written.

Run it with ``python tests/fuzz/campaign.py --cases 5000`` (``make fuzz``); ``make test``
runs a few hundred cases per family (``test_fuzz.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from mutate import mutate
from pydantic import ValidationError
from reference import Reference, Verdict
from verdicts import AGREE, Outcome, Side, compare, dotted, joined

from flarekit_models import RESOURCES, ResourceInfo, lookup
from flarekit_models._crds import crds_for
from flarekit_testing.apiserver._json import JsonRefused, json_equal, loads
from flarekit_testing.apiserver._structural import admit

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
#: How the reference words a value that Go's JSON decoder refuses (the API server: 400).
UNDECODABLE = ("not JSON", "cannot be decoded", "exceeded max depth")
FAMILIES = tuple(sorted({info.family for info in RESOURCES}))
JSON = dict[str, Any]


@dataclass
class Disagreement:
    family: str
    kind: str
    what: str  # "model accepts, reference refuses", ...
    mutations: list[str]
    model: str
    reference: str

    def __str__(self) -> str:
        return (
            f"[{self.family} {self.kind}] {self.what}\n"
            f"    mutations: {'; '.join(self.mutations)}\n"
            f"    model:     {self.model}\n"
            f"    reference: {self.reference}"
        )


@dataclass
class Tally:
    """How one side fared against the real API server."""

    agree: int = 0
    documented: Counter[str] = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)

    def text(self) -> str:
        documented = ", ".join(f"{k} {v}" for k, v in sorted(self.documented.items())) or "-"
        return (
            f"agree {self.agree:5}  documented {documented:24}  "
            f"disagreements {len(self.disagreements):3}"
        )


#: The sides judged by the real API server: the models, the reference, and FakeCluster's
#: admission (``flarekit_testing.apiserver._structural.admit``).
SIDES = ("model", "reference", "fakecluster")


@dataclass
class Report:
    family: str
    seeds: int = 0
    cases: int = 0
    both_accept: int = 0
    both_refuse: int = 0
    documented: Counter[str] = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)
    seconds: float = 0.0
    #: Cases also sent to a real API server (``--server``), how many of them only its CEL
    #: rules refused, and how each side fared against it.
    server_cases: int = 0
    server_cel: int = 0
    judged: dict[str, Tally] = field(default_factory=lambda: {s: Tally() for s in SIDES})

    @property
    def server_disagreements(self) -> list[Disagreement]:
        return [d for tally in self.judged.values() for d in tally.disagreements]

    @property
    def failures(self) -> int:
        return len(self.disagreements) + len(self.server_disagreements)

    def row(self) -> str:
        documented = ", ".join(f"{k} {v}" for k, v in sorted(self.documented.items())) or "-"
        lines = [
            f"{self.family:18} seeds {self.seeds:3}  cases {self.cases:6}  "
            f"both accept {self.both_accept:6}  both refuse {self.both_refuse:6}  "
            f"documented {documented:28}  disagreements {len(self.disagreements):3}  "
            f"{self.seconds:6.1f}s"
        ]
        if self.server_cases:
            lines.append(
                f"{'':18} real API server: cases {self.server_cases:5}  "
                f"refused by CEL rules alone {self.server_cel:4}"
            )
            lines += [f"{'':20} {side:12} {self.judged[side].text()}" for side in SIDES]
        return "\n".join(lines)


# --------------------------------------------------------------------------- inputs
@cache
def version_of(api_version: str, kind: str) -> JSON:
    """The CRD version the model was generated from: the newest release serving it."""
    info = lookup(api_version, kind)
    family, tag = info.served_by[-1].split("@")
    for crd in crds_for({family: tag}):
        if crd["spec"]["names"]["kind"] == kind and crd["spec"]["group"] == info.group:
            for version in crd["spec"]["versions"]:
                if version["name"] == info.version:
                    found: JSON = version
                    return found
    raise LookupError(f"no schema for {api_version} {kind} in {family}@{tag}")


def schema_of(api_version: str, kind: str) -> JSON:
    schema: JSON = version_of(api_version, kind)["schema"]["openAPIV3Schema"]
    return schema


@cache
def reference_of(api_version: str, kind: str) -> Reference:
    subresources = version_of(api_version, kind).get("subresources") or {}
    return Reference(schema_of(api_version, kind), subresources.get("scale"))


@cache
def _samples() -> tuple[tuple[str, JSON], ...]:
    """Every shared sample of a kind with a model, with its family (read once)."""
    out = []
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        try:
            out.append((lookup(obj["apiVersion"], obj["kind"]).family, obj))
        except LookupError:
            continue
    return tuple(out)


def seeds(family: str) -> list[JSON]:
    """The family's samples that the API server would accept (the reference says)."""
    return [
        copy.deepcopy(obj)
        for owner, obj in _samples()
        if owner == family and reference_of(obj["apiVersion"], obj["kind"]).admit(obj).ok
    ]


# --------------------------------------------------------------------------- one case
def _model_verdict(info: ResourceInfo, obj: JSON) -> tuple[bool, list[tuple[Any, ...]], Any]:
    try:
        model = info.model().model_validate(obj)
    except ValidationError as exc:
        return False, [tuple(e["loc"]) for e in exc.errors()], exc
    return True, [], model


def model_side(locs: list[tuple[Any, ...]]) -> Side:
    """The models' verdict: accepted when there is no error, else where each error is."""
    return Side(not locs, {joined(loc) for loc in locs})


def reference_side(verdict: Verdict) -> Side:
    """The reference's verdict; a value Go's JSON decoder refuses makes the body undecodable."""
    undecodable = {joined(p) for p, m in verdict.errors if m.startswith(UNDECODABLE)}
    paths = {joined(p) for p, m in verdict.errors if not m.startswith(UNDECODABLE)}
    return Side(verdict.ok, paths, undecodable=bool(undecodable), undecodable_at=undecodable)


def differences(verdict: Verdict, reference: Reference) -> dict[str, set[str]]:
    """Where the reference says the API server drops a value or takes a float for an
    integer (what a stricter side may refuse there: the documented classes), and the
    scale subresource's paths (which the server also names under a value of the wrong type)."""
    return {
        "pruned": {joined(p) for p in verdict.pruned},
        "integral_floats": {joined(p) for p in verdict.integral_floats},
        "scale_paths": {p.lstrip(".") for p in reference.scale.values()},
    }


def check(family: str, obj: JSON, mutations: list[str], report: Report) -> None:
    """The models against the reference on one case: the same verdict, a refusal at the
    same paths, and an accepted object written back as it was read."""
    info = lookup(obj["apiVersion"], obj["kind"])
    reference = reference_of(obj["apiVersion"], obj["kind"])
    verdict = reference.admit(obj)
    accepted, locs, result = _model_verdict(info, obj)
    report.cases += 1

    def disagree(what: str, model: str) -> None:
        reference = "; ".join(f"{'.'.join(map(str, p))}: {m}" for p, m in verdict.errors[:3])
        report.disagreements.append(
            Disagreement(family, info.kind, what, mutations, model, reference or "accepts")
        )

    if accepted:
        try:
            dumped = result.to_dict()
        except (ValueError, TypeError, RecursionError) as exc:
            disagree("accepted but cannot be written back", f"to_dict: {exc}")
            return
        if dumped != obj:
            disagree("accepted but not written back as read", "dump differs from the input")
            return
    outcome = compare(model_side(locs), reference_side(verdict), **differences(verdict, reference))
    if outcome.result == AGREE:
        if accepted:
            report.both_accept += 1
        else:
            report.both_refuse += 1
    elif not outcome.disagrees:
        report.documented[outcome.result] += 1
    else:
        errors = result.errors()[:3] if not accepted else []
        model = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
        disagree(f"{outcome.result} {outcome.detail}".strip(), model or "accepts")


def judge(family: str, obj: JSON, mutations: list[str], report: Report, server: Any) -> None:
    """Every side against the real API server on one case (see ``server``)."""
    from server import ServerVerdict

    if not server.serves(obj["apiVersion"], obj["kind"]):
        return
    body = server.request_body(obj)
    if _not_sendable(body):
        return
    schema = schema_of(obj["apiVersion"], obj["kind"])
    reference = reference_of(obj["apiVersion"], obj["kind"])
    verdict = reference.admit(body)
    answer: ServerVerdict = server.judge(body, schema)
    report.server_cases += 1
    if not answer.accepted and not answer.paths and answer.cel_paths:
        report.server_cel += 1
    judged = Side(answer.accepted, answer.paths, answer.cel_paths, undecodable=answer.undecodable)
    info = lookup(obj["apiVersion"], obj["kind"])
    accepted, locs, _ = _model_verdict(info, body)
    models = model_side(locs)
    with_rules = MODELS_EVALUATE_CEL and accepted
    if with_rules:
        models = _with_rules(models, body, schema)
    fakecluster, admitted = fakecluster_side(body, schema, reference.scale.get("specReplicasPath"))
    sides = {
        "model": models,
        "reference": reference_side(verdict),
        "fakecluster": fakecluster,
    }
    for name, side in sides.items():
        cel = name == "model" and with_rules
        outcome = compare(side, judged, **differences(verdict, reference), evaluates_cel=cel)
        if (
            name == "fakecluster"
            and outcome.result == AGREE
            and answer.stored is not None
            and answer.in_storage_version
        ):
            assert admitted is not None
            outcome = _same_stored(admitted, answer.stored)
        tally = report.judged[name]
        if outcome.result == AGREE:
            tally.agree += 1
        elif not outcome.disagrees:
            tally.documented[outcome.result] += 1
        else:
            tally.disagreements.append(
                Disagreement(
                    family,
                    obj["kind"],
                    f"{name} against the real server: {outcome.result} {outcome.detail}".strip(),
                    mutations,
                    f"(the real server) {answer.message[:300] or 'accepts'}",
                    f"({name}) " + _side_text(side),
                )
            )


#: Whether the models' side includes the CRD's CEL rules, as ``flarekit.compat`` evaluates
#: them before every write (``--models-without-cel`` measures the models alone).
MODELS_EVALUATE_CEL = True


def _with_rules(side: Side, body: JSON, schema: JSON) -> Side:
    """The verdict of a body the models accept, with the CEL rules' failures as
    ``flarekit.compat.rule_failures`` finds them (``prepare_write`` evaluates the rules once
    the models accept an object; before that, the models' errors are what a user sees)."""
    from flarekit.compat import rule_failures

    failed = {dotted(f.path) for f in rule_failures(body, schema)}
    return Side(False, set(), failed) if failed else side


def fakecluster_side(
    body: JSON, schema: JSON, spec_replicas_path: str | None = None
) -> tuple[Side, JSON | None]:
    """FakeCluster's verdict on a body: decoded as its HTTP layer decodes JSON text, then
    `admit` (prune, default, validate; the scale subresource's replicas an integer); and the
    object it would store, if any."""
    from server import cause_place

    try:
        decoded = loads(json.dumps(body).encode())
    except JsonRefused:
        return Side(False, undecodable=True), None
    admitted = admit(decoded, schema, spec_replicas_path=spec_replicas_path)
    places = {cause_place(c.field, c.message) for c in admitted.causes}
    return Side(admitted.ok, places), admitted.obj if admitted.ok else None


def _same_stored(admitted: JSON, stored: JSON) -> Outcome:
    """FakeCluster stores what the real server stores: the object pruned and defaulted alike
    (``metadata`` aside, which the server fills in, and ``status``, which it drops)."""
    mine = {k: v for k, v in admitted.items() if k not in ("metadata", "status")}
    theirs = {k: v for k, v in stored.items() if k not in ("metadata", "status")}
    if json_equal(mine, theirs):
        return Outcome(AGREE)
    return Outcome("both accept, but store other objects", _first_difference(mine, theirs))


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'FakeCluster' if key in a else 'the server'}"
            if not json_equal(a[key], b[key]):
                return _first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not json_equal(x, y):
                return _first_difference(x, y, f"{path}.{i}")
    return f"{path.lstrip('.')}: {str(a)[:80]} vs {str(b)[:80]}"


def _side_text(side: Side) -> str:
    if side.accepted:
        return "accepts"
    return "refuses at " + ", ".join(sorted(side.paths | side.cel_paths)[:4] or ["(no path)"])


def _not_sendable(body: JSON) -> bool:
    """Cases the standard library's JSON writer cannot write (nested past its recursion)."""
    try:
        json.dumps(body)
    except (RecursionError, ValueError):
        return True
    return False


def run(
    family: str, cases: int, seed: int = 0, server: Any = None, server_cases: int = 0
) -> Report:
    """``cases`` cases for one family: every seed as it is, then mutated seeds.

    Runs in a thread with a large stack and recursion limit: some cases nest 10,000 levels,
    and the reference, like the API server's own code, walks objects recursively.
    """
    out: list[Report] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            out.append(_run(family, cases, seed, server, server_cases))
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    limit = sys.getrecursionlimit()
    size = threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(200_000)
    try:
        thread = threading.Thread(target=work, name=f"fuzz-{family}")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
        sys.setrecursionlimit(limit)
    if errors:
        raise errors[0]
    return out[0]


def _run(family: str, cases: int, seed: int, server: Any, server_cases: int) -> Report:
    report = Report(family)
    started = time.perf_counter()
    pool = seeds(family)
    report.seeds = len(pool)
    rng = random.Random(f"{family}:{seed}")
    for obj in pool[:cases]:
        check(family, obj, ["(the sample as it is)"], report)
        if server is not None and report.server_cases < server_cases:
            judge(family, obj, ["(the sample as it is)"], report, server)
    while report.cases < cases and pool:
        obj = copy.deepcopy(rng.choice(pool))
        schema = schema_of(obj["apiVersion"], obj["kind"])
        done = [mutate(obj, schema, rng) for _ in range(rng.choice((1, 1, 2, 3)))]
        check(family, obj, done, report)
        if server is not None and report.server_cases < server_cases:
            judge(family, obj, done, report, server)
    report.seconds = time.perf_counter() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000, help="cases per family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--show", type=int, default=5, help="disagreements shown per family")
    parser.add_argument(
        "--server",
        type=int,
        default=0,
        metavar="CASES",
        help="also send this many cases per family to a real API server (a ControlPlane)",
    )
    parser.add_argument(
        "--models-without-cel",
        action="store_true",
        help="judge the models alone, without the CEL rules flarekit.compat evaluates",
    )
    args = parser.parse_args(argv)
    global MODELS_EVALUATE_CEL
    MODELS_EVALUATE_CEL = not args.models_without_cel
    failed = 0
    with _real_servers(args.server) as server_for:
        for family in args.families.split(","):
            server = server_for(family)
            report = run(family, args.cases, args.seed, server, args.server)
            print(report.row(), flush=True)
            shown = report.disagreements + report.server_disagreements
            for disagreement in shown[: args.show]:
                print(disagreement, flush=True)
            failed += report.failures
    return 1 if failed else 0


@contextlib.contextmanager
def _real_servers(wanted: int) -> Iterator[Any]:
    """family -> a RealServer on a ControlPlane that serves its CRDs (None when no case is
    to be sent); a plane is started when a family first needs it, and one at a time."""
    if not wanted:
        yield lambda family: None
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from server import RealServer, plane_releases

    from conftest import built_controlplane
    from flarekit_testing import ControlPlane

    folder, why = built_controlplane()
    if folder is None:
        raise SystemExit(f"--server: {why}")
    running: dict[tuple[tuple[str, str], ...], Any] = {}
    stack = contextlib.ExitStack()

    def server_for(family: str) -> Any:
        releases = plane_releases(family)
        key = tuple(sorted(releases.items()))
        if key not in running:
            stack.close()
            running.clear()
            plane = ControlPlane(releases, binaries=folder, nodes=(), start_timeout=600)
            running[key] = RealServer(stack.enter_context(plane), releases)
        return running[key]

    with stack:
        yield server_for


if __name__ == "__main__":
    sys.exit(main())
