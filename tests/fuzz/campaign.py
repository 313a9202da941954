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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from mutate import mutate
from pydantic import ValidationError
from reference import Reference, Verdict

from flarekit_models import RESOURCES, ResourceInfo, lookup
from flarekit_models._crds import crds_for

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
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
class Report:
    family: str
    seeds: int = 0
    cases: int = 0
    both_accept: int = 0
    both_refuse: int = 0
    documented: Counter[str] = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)
    seconds: float = 0.0
    #: Cases also sent to a real API server (``--server``): agreements of the reference with
    #: it, refusals by its CEL rules, and disagreements.
    server_cases: int = 0
    server_agree: int = 0
    server_cel: int = 0
    server_disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return len(self.disagreements) + len(self.server_disagreements)

    def row(self) -> str:
        documented = ", ".join(f"{k} {v}" for k, v in sorted(self.documented.items())) or "-"
        return (
            f"{self.family:18} seeds {self.seeds:3}  cases {self.cases:6}  "
            f"both accept {self.both_accept:6}  both refuse {self.both_refuse:6}  "
            f"documented {documented:28}  disagreements {len(self.disagreements):3}  "
            f"{self.seconds:6.1f}s"
        ) + (
            f"\n{'':18} real API server: cases {self.server_cases:5}  agrees with the "
            f"reference {self.server_agree:5}  refused by CEL {self.server_cel:4}  "
            f"disagreements {len(self.server_disagreements):3}"
            if self.server_cases
            else ""
        )


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


def _covered(loc: tuple[Any, ...], paths: Iterable[tuple[Any, ...]]) -> bool:
    return any(loc[: len(path)] == path for path in paths)


def classify(model_errors: list[tuple[Any, ...]], verdict: Verdict) -> str | None:
    """The documented class of a refusal by the model that the reference accepts, if any."""
    classes = set()
    for loc in model_errors:
        if _covered(loc, verdict.pruned):
            classes.add("pruned")
        elif _covered(loc, verdict.integral_floats):
            classes.add("integral-float")
        else:
            return None
    return ",".join(sorted(classes))


def check(family: str, obj: JSON, mutations: list[str], report: Report) -> None:
    info = lookup(obj["apiVersion"], obj["kind"])
    verdict = reference_of(obj["apiVersion"], obj["kind"]).admit(obj)
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
        elif verdict.ok:
            report.both_accept += 1
        else:
            disagree("model accepts, reference refuses", "accepts")
        return
    if not verdict.ok:
        report.both_refuse += 1
        return
    documented = classify(locs, verdict)
    if documented:
        report.documented[documented] += 1
        return
    errors = result.errors()[:3]
    disagree(
        "model refuses, reference accepts",
        "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors),
    )


def judge(family: str, obj: JSON, mutations: list[str], report: Report, server: Any) -> None:
    """The reference against the real API server on one case (see ``server``)."""
    from server import is_cel_refusal, served_by_default

    if not served_by_default(obj["apiVersion"], obj["kind"]):
        return
    body = server.request_body(obj)
    if _not_sendable(body):
        return
    verdict = reference_of(obj["apiVersion"], obj["kind"]).admit(body)
    accepted, message = server.admit(body)
    report.server_cases += 1
    if accepted == verdict.ok:
        report.server_agree += 1
        return
    if not accepted and is_cel_refusal(message, schema_of(obj["apiVersion"], obj["kind"])):
        report.server_cel += 1
        return
    reference = "; ".join(f"{'.'.join(map(str, p))}: {m}" for p, m in verdict.errors[:3])
    report.server_disagreements.append(
        Disagreement(
            family,
            obj["kind"],
            f"real server {'accepts' if accepted else 'refuses'}, reference "
            f"{'accepts' if verdict.ok else 'refuses'}",
            mutations,
            f"(the real server) {message[:300] or 'accepts'}",
            reference or "accepts",
        )
    )


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
    args = parser.parse_args(argv)
    with _real_server(args.server) as server:
        failed = 0
        for family in args.families.split(","):
            report = run(family, args.cases, args.seed, server, args.server)
            print(report.row(), flush=True)
            shown = report.disagreements + report.server_disagreements
            for disagreement in shown[: args.show]:
                print(disagreement, flush=True)
            failed += report.failures
    return 1 if failed else 0


@contextlib.contextmanager
def _real_server(wanted: int) -> Iterator[Any]:
    """A ControlPlane with the default releases, when cases are to be sent to one."""
    if not wanted:
        yield None
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from server import RealServer

    from conftest import built_controlplane
    from flarekit_testing import ControlPlane

    folder, why = built_controlplane()
    if folder is None:
        raise SystemExit(f"--server: {why}")
    with ControlPlane(binaries=folder, nodes=(), start_timeout=600) as plane:
        yield RealServer(plane)


if __name__ == "__main__":
    sys.exit(main())
