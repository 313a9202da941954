"""datamodel-code-generator's pydantic models of the pinned RayCluster CRD: an anchor.

Typed reads are compared with the best-known generic way to get pydantic models from the same
schema. datamodel-code-generator brings a formatter and a dozen other distributions, so it
runs from its own virtual environment under ``.cache/bench-dmcg/`` (made on the first run with
``pip install datamodel-code-generator``); it writes ``raycluster.py`` from the
``openAPIV3Schema`` of the newest pinned KubeRay release's RayCluster CRD (read from the
verified schema cache), and that module, which needs pydantic alone, is imported here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / ".cache" / "bench-dmcg"
VENV_PYTHON = HOME / "venv" / "bin" / "python"
MODULE = HOME / "raycluster.py"


def _crd_schema() -> tuple[str, dict[str, object]]:
    """(release, openAPIV3Schema of ray.io/v1 RayCluster) from the verified schema cache."""
    import yaml

    from flarekit_generator import paths
    from flarekit_generator.fetch import cached_path, fill_cache
    from flarekit_generator.lockfile import read_lock

    entries = [
        e
        for e in read_lock(paths.lock_file())
        if e.family == "kuberay" and e.path.endswith("ray.io_rayclusters.yaml")
    ]
    entry = max(entries, key=lambda e: tuple(int(p) for p in e.tag.lstrip("v").split(".")))
    fill_cache([entry], paths.cache_dir(), mirror=paths.mirror_dir())
    crd = yaml.safe_load(cached_path(entry, paths.cache_dir()).read_text(encoding="utf-8"))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    return entry.tag, version["schema"]["openAPIV3Schema"]


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return lines[-1] if lines else f"exit status {done.returncode}"
    return ""


def ensure() -> tuple[ModuleType | None, str]:
    """(the generated module, "") or (None, why it could not be made)."""
    if not MODULE.is_file():
        HOME.mkdir(parents=True, exist_ok=True)
        if not VENV_PYTHON.is_file():
            print(
                "dmcg_models: installing datamodel-code-generator (first run only)", file=sys.stderr
            )
            why = _run([sys.executable, "-m", "venv", "--clear", str(HOME / "venv")])
            why = why or _run(
                [str(VENV_PYTHON), "-m", "pip", "install", "--quiet", "datamodel-code-generator"]
            )
            if why:
                return None, f"installing datamodel-code-generator failed: {why}"
        tag, schema = _crd_schema()
        source = HOME / "raycluster.schema.json"
        source.write_text(json.dumps({"title": "RayCluster", **schema}), encoding="utf-8")
        scratch = MODULE.with_suffix(".tmp.py")
        why = _run(
            [
                str(VENV_PYTHON),
                "-m",
                "datamodel_code_generator",
                "--input",
                str(source),
                "--input-file-type",
                "jsonschema",
                "--output-model-type",
                "pydantic_v2.BaseModel",
                "--class-name",
                "RayCluster",
                "--output",
                str(scratch),
            ]
        )
        if why:
            return None, f"datamodel-codegen failed on the kuberay {tag} RayCluster CRD: {why}"
        scratch.replace(MODULE)
    spec = importlib.util.spec_from_file_location("bench_dmcg_raycluster", MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a generator version whose output this pydantic cannot load
        return None, f"importing the generated models failed: {type(exc).__name__}: {exc}"
    return module, ""


def version() -> str:
    done = subprocess.run(
        [str(VENV_PYTHON), "-m", "pip", "show", "datamodel-code-generator"],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return "unknown"
