"""The small hand-written CRDs under ``fixtures/``, generated into a throwaway package.

The generated package is always called ``flarekit_models``, like the real one the
project installs, so the tests never import it into their own interpreter: a
:class:`ModelRunner` drives a child interpreter that has only the small package
on its path, and answers in JSON. One child serves the whole session, so a test
costs a round trip, not an interpreter start.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from flarekit_generator.ir import CrdInfo
from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.parse import parse_crd
from flarekit_generator.pipeline import render_package

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
FIXTURES = HERE / "fixtures"
WORKER = HERE / "model_worker.py"

#: (file, family, release) of every fixture CRD; two releases of "widgets".
FIXTURE_CRDS = (
    ("widgets-v1.0.0.yaml", "widgets", "v1.0.0"),
    ("widgets-v1.1.0.yaml", "widgets", "v1.1.0"),
    ("gadgets-v0.3.0.yaml", "gadgets", "v0.3.0"),
)
SOURCE = "tests/generator/fixtures"

JSON = dict[str, Any]
Loc = tuple[str | int, ...]


def fixture_doc(name: str) -> JSON:
    """One fixture CRD document, parsed from YAML."""
    doc: JSON = yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8"))
    return doc


def load_crds() -> list[CrdInfo]:
    """Every fixture CRD, parsed as the pipeline parses the pinned ones."""
    crds = []
    for name, family, release in FIXTURE_CRDS:
        data = (FIXTURES / name).read_bytes()
        crds.append(
            parse_crd(
                yaml.safe_load(data),
                family=family,
                release=release,
                source_path=f"{SOURCE}/{name}",
                sha256=hashlib.sha256(data).hexdigest(),
            )
        )
    return crds


def generate(out_dir: Path, defs: KubernetesDefinitions | None = None) -> Path:
    """Generate the small package under ``out_dir``; returns the package directory."""
    render_package(load_crds(), defs or KubernetesDefinitions.load(), out_dir, SOURCE)
    return out_dir / "flarekit_models"


class Invalid(Exception):
    """A ValidationError raised in the child, as (JSON path, error type, message) triples."""

    def __init__(self, errors: tuple[tuple[Loc, str, str], ...]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        return "; ".join(f"{loc}: {kind} ({msg})" for loc, kind, msg in self.errors)

    @property
    def locs(self) -> set[Loc]:
        return {loc for loc, _, _ in self.errors}

    @property
    def types(self) -> set[str]:
        return {kind for _, kind, _ in self.errors}


class ChildError(RuntimeError):
    """Anything else that failed in the child (the traceback is in the message)."""


class ModelRunner:
    """A child interpreter that imports ``flarekit_models`` from ``out_dir`` only."""

    def __init__(self, out_dir: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(out_dir), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        self._proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=out_dir,
            env=env,
            text=True,
        )
        self.package_dir = Path(
            self.run("import flarekit_models\nresult = flarekit_models.__file__")
        )

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)

    def run(self, code: str, **args: Any) -> Any:
        """Execute ``code`` in the child with ``args`` bound; returns its ``result``."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"code": code, "args": args}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise ChildError(f"the model worker exited with code {self._proc.wait()}")
        reply = json.loads(line)
        if "invalid" in reply:
            raise Invalid(tuple((tuple(e["loc"]), e["type"], e["msg"]) for e in reply["invalid"]))
        if "error" in reply:
            raise ChildError(reply["error"])
        return reply["result"]

    # -- the common cases --------------------------------------------------------
    def load(self, model: str, data: Any) -> JSON:
        """``model.model_validate(data).to_dict()``; ``model`` is ``"example.v1.Widget"``."""
        dumped: JSON = self.run(
            "result = model(args['model']).model_validate(args['data']).to_dict()",
            model=model,
            data=data,
        )
        return dumped

    def build(self, model: str, **kwargs: Any) -> JSON:
        """``model(**kwargs).to_dict()``: construction by attribute name (or alias)."""
        dumped: JSON = self.run(
            "result = model(args['model'])(**args['kwargs']).to_dict()", model=model, kwargs=kwargs
        )
        return dumped

    def errors(self, model: str, data: Any) -> Invalid:
        """The validation errors of ``data``; fails if it validates."""
        try:
            dumped = self.load(model, data)
        except Invalid as invalid:
            return invalid
        raise AssertionError(f"{model} accepted {data!r} (dumped as {dumped!r})")
