"""Installing what was built, into fresh virtual environments, and using it as the README does.

- ``pip install dist/flarekit-*.whl dist/flarekit_testing-*.whl``: the README's model, facade
  and FakeCluster examples run, ``flarekit --version`` names the generator and the pinned releases of the models, and
  the generator is not there.
- ``pip install dist/flarekit_models-*.whl``: only pydantic and what pydantic requires come
  with it, and the model example runs.
- ``pip install . ./testing`` in a clean clone, with no ``make`` before: the examples run too.
- Without flarekit-testing, flarekit works and ``flarekit dev up`` says what to install.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging_support import README_EXAMPLES, Dists, Venv, clean_env, make_venv, run

from flarekit_generator.catalog import release_key
from flarekit_generator.lockfile import read_lock

# Builds and installs take minutes on a busy machine; the shared fixtures' setup counts too.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

#: Tools a virtual environment has before anything is installed into it.
VENV_TOOLS = {"pip", "setuptools", "wheel"}


def _examples(venv: Venv, readme: Path, cwd: Path, *names: str) -> list[str]:
    done = run([venv.python, str(README_EXAMPLES), str(readme), *names], cwd=cwd, env=clean_env())
    return [line for line in done.stdout.splitlines() if line.split(":")[0] in names]


def test_the_readme_examples_run_from_the_installed_wheel(
    flarekit_venv: Venv, clean_tree: Path, user_dir: Path
) -> None:
    ran = _examples(
        flarekit_venv, clean_tree / "README.md", user_dir, "model", "facade", "fakecluster"
    )
    assert [line.split(":")[0] for line in ran] == ["model", "facade", "fakecluster"], ran
    where = run(
        [
            flarekit_venv.python,
            "-c",
            "import flarekit, flarekit_models; print(flarekit.__file__, flarekit_models.__file__)",
        ],
        cwd=user_dir,
        env=clean_env(),
    ).stdout.split()
    assert all(str(flarekit_venv.root) in path for path in where), where


def test_flarekit_version_names_the_generator_and_the_pinned_releases(
    flarekit_venv: Venv, user_dir: Path
) -> None:
    out = run([flarekit_venv.script("flarekit"), "--version"], cwd=user_dir, env=clean_env()).stdout
    assert out.startswith("flarekit          0.1.0\n")
    assert "models generator  0.1.0\n" in out
    assert "models lock       crds.lock.tsv sha256:" in out
    pinned: dict[str, list[str]] = {}
    for entry in read_lock():
        pinned.setdefault(entry.family, [])
        if entry.tag not in pinned[entry.family]:
            pinned[entry.family].append(entry.tag)
    for family, tags in pinned.items():
        assert f"  {family:18} {', '.join(sorted(tags, key=release_key))}\n" in out


def test_the_installed_flarekit_has_no_generator(flarekit_venv: Venv, user_dir: Path) -> None:
    found = run(
        [
            flarekit_venv.python,
            "-c",
            "import importlib.util as u; print(u.find_spec('flarekit_generator'))",
        ],
        cwd=user_dir,
        env=clean_env(),
    ).stdout.strip()
    assert found == "None"
    assert not Path(flarekit_venv.script("flarekit-generate")).exists()


def _closure(installed: dict[str, list[str]], name: str) -> set[str]:
    """``name`` and everything its requirements pull in, as installed (no extras)."""
    seen: set[str] = set()
    todo = [str(canonicalize_name(name))]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for text in installed.get(current, []):
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(str(canonicalize_name(req.name)))
    return seen


def test_the_models_distribution_brings_pydantic_alone(
    dists: Dists, clean_tree: Path, user_dir: Path, tmp_path: Path
) -> None:
    env = clean_env()
    venv = make_venv(tmp_path / "models-only", env)
    venv.pip(str(dists.models_wheel), env=env, cwd=user_dir)
    installed = venv.distributions(env, user_dir)
    names = {str(canonicalize_name(n)) for n in installed} - VENV_TOOLS
    assert names == {"flarekit-models"} | _closure(installed, "pydantic"), sorted(names)
    assert {"pydantic", "pydantic-core"} <= names and len(names) <= 6, sorted(names)
    ran = _examples(venv, clean_tree / "README.md", user_dir, "model")
    assert ran and ran[0].startswith("model: flarekit_models.ray.v1"), ran


def test_pip_install_dot_from_a_clean_clone(
    clean_tree: Path, mirror: Path, user_dir: Path, tmp_path: Path
) -> None:
    # pip's own isolated build, as a user runs it: build requirements come from the index.
    env = clean_env(SCHEMA_MIRROR=str(mirror))
    venv = make_venv(tmp_path / "pip-install-dot", env)
    source = tmp_path / "clone"
    shutil.copytree(clean_tree, source)
    venv.pip(f"{source}[testing]", str(source / "testing"), env=env, cwd=source)
    assert not (source / "generated").exists()  # the build did not write into the clone
    ran = _examples(venv, source / "README.md", user_dir, "model", "facade", "fakecluster")
    assert len(ran) == 3, ran


def test_without_the_testing_distribution_flarekit_dev_says_what_to_install(
    dists: Dists, user_dir: Path, tmp_path: Path
) -> None:
    env = clean_env()
    venv = make_venv(tmp_path / "flarekit-alone", env)
    venv.pip(str(dists.flarekit_wheel), env=env, cwd=user_dir)
    found = run(
        [venv.python, "-c", "import importlib.util as u; print(u.find_spec('flarekit_testing'))"],
        cwd=user_dir,
        env=env,
    ).stdout.strip()
    assert found == "None"
    done = run([venv.script("flarekit"), "dev", "up"], cwd=user_dir, env=env, check=False)
    assert done.returncode != 0
    assert "pip install 'flarekit[testing]'" in done.stderr, done.stderr
