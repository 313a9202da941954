"""Helpers of the packaging tests: a clean copy of the repository, builds, fresh venvs.

A "clean clone" is what ``git clone`` of the working tree would give: the files git tracks
(as they are on disk, so uncommitted edits are tested too) and untracked files that are not
ignored, without ``generated/``, ``schemas/cache/``, ``.venv`` or any build output.
Subprocesses get an environment without this interpreter's virtual environment, so a fresh
venv sees only what was installed into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
README_EXAMPLES = REPO_ROOT / "tests" / "readme_examples.py"
SAMPLES = REPO_ROOT.parent / "shared" / "samples"


def clean_copy(target: Path) -> Path:
    """Copy what a clone of the working tree holds into ``target``; returns ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        relative = raw.decode()
        source = REPO_ROOT / relative
        if not source.is_file():  # deleted in the working tree, not yet committed
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / relative)
    return target


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for subprocesses: no inherited venv or Python path, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def run(
    command: list[str], *, cwd: Path, env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; on an unexpected failure the assertion shows its whole output."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} exited {done.returncode}\n--- stdout\n{done.stdout[-6000:]}"
            f"\n--- stderr\n{done.stderr[-6000:]}"
        )
    return done


def build(
    project: Path, out: Path, env: dict[str, str], *, what: tuple[str, ...] = ()
) -> list[Path]:
    """``python -m build`` of ``project`` into ``out`` with this interpreter's build tools
    (``--no-isolation``: the requirements are the dev environment's, no download).

    ``what`` is ``()`` for an sdist and a wheel built from it (what ``python -m build`` does),
    ``("--wheel",)`` for a wheel built in the tree. Returns the artifacts it made.
    """
    before = set(out.glob("*")) if out.is_dir() else set()
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), *what]
    run([*command, str(project)], cwd=project, env=env)
    return sorted(set(out.glob("*")) - before)


@dataclass(frozen=True)
class Dists:
    """The sdist and wheel of each distribution, built from one clean copy."""

    flarekit_sdist: Path
    flarekit_wheel: Path
    models_sdist: Path
    models_wheel: Path
    generator_sdist: Path
    generator_wheel: Path
    testing_sdist: Path
    testing_wheel: Path


@dataclass(frozen=True)
class Venv:
    """A fresh virtual environment."""

    root: Path

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def script(self, name: str) -> str:
        return str(self.root / "bin" / name)

    def pip(self, *args: str, env: dict[str, str], cwd: Path) -> None:
        run([self.python, "-m", "pip", "install", "--quiet", *args], cwd=cwd, env=env)

    def distributions(self, env: dict[str, str], cwd: Path) -> dict[str, list[str]]:
        """Every installed distribution -> its requirements, as the venv's metadata says."""
        code = (
            "import importlib.metadata as m, json\n"
            "print(json.dumps({d.metadata['Name'].lower(): d.requires or [] "
            "for d in m.distributions()}))"
        )
        out = run([self.python, "-c", code], cwd=cwd, env=env).stdout
        found: dict[str, list[str]] = json.loads(out)
        return found


def make_venv(root: Path, env: dict[str, str]) -> Venv:
    run([sys.executable, "-m", "venv", str(root)], cwd=root.parent, env=env)
    return Venv(root)


def wheel_files(wheel: Path) -> dict[str, str]:
    """Path inside the wheel -> its RECORD hash (what the wheel holds, byte for byte)."""
    with zipfile.ZipFile(wheel) as archive:
        record = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        rows = archive.read(record).decode().splitlines()
    return {path: digest for path, digest, _size in (r.rsplit(",", 2) for r in rows)}


def requirements(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of a wheel's metadata."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:")
    ]
