"""A baseline commit's source tree, with its models generated, for same-run comparisons.

Benchmarks that compare the working tree against an earlier commit need that commit's code
importable next to ours. ``prepare(rev)`` unpacks the commit with ``git archive`` into
``.cache/bench-baseline/<commit>/`` and runs *that commit's* generator there, so its
``flarekit_models`` is what the commit would have built. Both trees then run with this
environment's interpreter and third-party packages, each put first on ``PYTHONPATH``
(``python_path``): the comparison isolates our code, not a pydantic or kubernetes upgrade.
The tree is reused on later runs; a failed preparation leaves no marker and starts afresh.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench-baseline"
#: Compiled bytecode of every benchmarked tree (and of the packages they import), kept out of
#: the source trees.
PYCACHE = ROOT / ".cache" / "bench-pycache"
#: The commit before the models moved into their own distribution (three distributions).
DEFAULT_BASELINE = "7551104ad4b0"
BASELINE_ENV = "FLAREKIT_BENCH_BASELINE"


class BaselineError(RuntimeError):
    """The baseline tree could not be made (unknown commit, its generator failed, ...)."""


@dataclass(frozen=True)
class Tree:
    """A source tree whose ``src`` and ``generated`` directories hold flarekit's packages."""

    label: str
    root: Path

    @property
    def python_path(self) -> str:
        return os.pathsep.join(str(self.root / d) for d in ("src", "generated"))

    def env(self) -> dict[str, str]:
        """The environment a benchmark process of this tree runs in."""
        return {**bytecode_env(), "PYTHONPATH": self.python_path}


def bytecode_env() -> dict[str, str]:
    """This environment with bytecode caching on, as users import: compiled files, not
    sources compiled anew in every process (``PYTHONDONTWRITEBYTECODE`` would do that)."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def working_tree() -> Tree:
    return Tree("current", ROOT)


def baseline_rev() -> str:
    return os.environ.get(BASELINE_ENV) or DEFAULT_BASELINE


def _git(*args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise BaselineError(f"git {' '.join(args)}: {done.stderr.decode().strip()}")
    return done.stdout


def _mirror() -> Path:
    """Where the baseline's generator reads the pinned CRD files from: the mirror the build
    uses (``SCHEMA_MIRROR``, relative to the repository), else our verified schema cache,
    which is laid out the same way. The generator checks every file against its own lock."""
    value = os.environ.get("SCHEMA_MIRROR")
    if value:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else (ROOT / path).resolve()
        if path.is_dir():
            return path
    return ROOT / "schemas" / "cache"


def prepare(rev: str) -> Tree:
    """The tree of commit `rev` with its models generated (made once, then reused)."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()
    label = f"{rev} ({commit[:10]})" if not commit.startswith(rev) else commit[:10]
    home = CACHE / commit
    tree = home / "tree"
    marker = home / ".ready"
    if marker.is_file():
        return Tree(label, tree)
    shutil.rmtree(home, ignore_errors=True)
    tree.mkdir(parents=True)
    print(f"baseline_tree: unpacking {commit[:10]} and generating its models", file=sys.stderr)
    with tarfile.open(fileobj=io.BytesIO(_git("archive", "--format=tar", commit))) as archive:
        archive.extractall(tree, filter="data")
    env = {
        **os.environ,
        "PYTHONPATH": str(tree / "generator"),
        "FLAREKIT_SCHEMA_CACHE": str(home / "schemas-cache"),
        "SCHEMA_MIRROR": str(_mirror()),
    }
    env.pop("FLAREKIT_GENERATED", None)
    env.pop("FLAREKIT_SCHEMA_LOCK", None)
    for step in ("schemas", "generate"):
        done = subprocess.run(
            [sys.executable, "-m", "flarekit_generator", step],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
            raise BaselineError(f"{commit[:10]}: generator {step} failed: {' | '.join(last)}")
    if not (tree / "generated" / "flarekit_models" / "__init__.py").is_file():
        raise BaselineError(f"{commit[:10]}: the generator wrote no generated/flarekit_models")
    marker.write_text(commit + "\n")
    return Tree(label, tree)
