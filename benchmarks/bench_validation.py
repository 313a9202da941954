"""Model validation and writing speed on the sample corpus, against a JSON round trip.

Every real object of ``../shared/samples`` that has a model and validates is read and
written in the ways users do: ``model_validate(obj)``, ``.to_dict()``,
``model_validate_json(text)`` and ``.to_json()``. The baseline, measured in the same run on
the same objects, is a plain JSON round trip of each object (``json.loads(json.dumps(obj))``):
the least any lossless read and write must do. Reported per object, as the process's CPU
time of the fastest of 11 passes over the whole corpus (the least disturbed by other work on
a shared machine; classes are built in a warm-up pass first), and as a ratio to the baseline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
PASSES = 11


def corpus() -> list[tuple[Any, dict[str, Any], str]]:
    """(model class, object, JSON text) of every sample that has a model and validates."""
    from pydantic import ValidationError

    from flarekit_models import UnknownResourceError, resource_model

    out = []
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        try:
            model = resource_model(obj["apiVersion"], obj["kind"])
            model.model_validate(obj)
        except (UnknownResourceError, ValidationError):
            continue
        out.append((model, obj, json.dumps(obj)))
    return out


def _per_object(work: Callable[[], object], count: int) -> float:
    """The fastest of PASSES passes of ``work`` (CPU time), in microseconds per object."""
    times = []
    for _ in range(PASSES):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times) / count * 1e6


def main() -> list[dict[str, str]]:
    objects = corpus()
    count = len(objects)
    if not count:
        raise SystemExit(f"no sample with a model in {SAMPLES}")
    models = [m.model_validate(o) for m, o, _ in objects]  # warm-up: builds every class
    cases: dict[str, Callable[[], object]] = {
        "JSON round trip (baseline)": lambda: [json.loads(json.dumps(o)) for _, o, _ in objects],
        "model_validate(obj)": lambda: [m.model_validate(o) for m, o, _ in objects],
        "model.to_dict()": lambda: [m.to_dict() for m in models],
        "model_validate(obj).to_dict()": lambda: [
            m.model_validate(o).to_dict() for m, o, _ in objects
        ],
        "model_validate_json(text)": lambda: [m.model_validate_json(t) for m, _, t in objects],
        "model.to_json()": lambda: [m.to_json() for m in models],
    }
    rows = []
    base = 0.0
    for name, work in cases.items():
        micros = _per_object(work, count)
        base = base or micros
        rows.append(
            {
                "operation": name,
                "objects": str(count),
                "per object": f"{micros:.0f} us",
                "vs baseline": f"{micros / base:.1f}x",
            }
        )
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
