"""A downstream SDK vendors a subset of the models under its own name, with the installed
flarekit-generator, and uses it next to an installed ``flarekit_models``.

The vendored ``mysdk._crds`` (kuberay and kueue only) must import and judge every shared
sample of its API groups as the installed models do (writing back losslessly each one it
accepts), without importing ``flarekit_models`` (no line of it names that package), while
the installed ``flarekit_models`` works beside it: two separate sets of classes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging_support import SAMPLES, Dists, clean_env, make_venv, run

# Builds and installs take minutes on a busy machine; the shared fixtures' setup counts too.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

CHECK = """
import sys
from pathlib import Path

import yaml

sys.path.insert(0, sys.argv[1])
import mysdk._crds as crds

# A model's verdict on a sample: "accepted" (and written back as read), or the paths of its
# errors (a few samples are invalid against their CRD).
def verdict(model, obj):
    try:
        dumped = model.model_validate(obj).to_dict()
    except ValueError as exc:
        return sorted(".".join(map(str, e["loc"])) for e in exc.errors())
    assert dumped == obj, obj.get("metadata")
    return "accepted"


samples = Path(sys.argv[2])
objects = []
vendored = {}
for group in ("ray.io", "kueue.x-k8s.io"):
    for path in sorted((samples / group).glob("*/*/*.yaml")):
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
        model = crds.resource_model(obj["apiVersion"], obj["kind"])
        assert model.__module__.startswith("mysdk._crds."), model.__module__
        name = str(path.relative_to(samples))
        objects.append((name, obj))
        vendored[name] = verdict(model, obj)
assert "flarekit_models" not in sys.modules, sorted(m for m in sys.modules if "flarekit" in m)
checked = sum(v == "accepted" for v in vendored.values())
assert checked > len(vendored) * 0.9, vendored

import flarekit_models
from flarekit_models.ray.v1 import RayCluster as Installed
from mysdk._crds.ray.v1 import RayCluster as Vendored

assert Installed is not Vendored
for name, obj in objects:
    installed = verdict(flarekit_models.resource_model(obj["apiVersion"], obj["kind"]), obj)
    assert installed == vendored[name], (name, installed, vendored[name])
assert not issubclass(Vendored, flarekit_models._base.KubeModel)
assert Installed.model_validate({"metadata": {"name": "a"}}).to_dict()["kind"] == "RayCluster"
assert set(crds.PINNED_RELEASES) == {"kuberay", "kueue"}
assert "trainer" in flarekit_models.PINNED_RELEASES
try:
    crds.resource_model("trainer.kubeflow.org/v1alpha1", "TrainJob")
except crds.UnknownResourceError:
    pass
else:
    raise AssertionError("the vendored subset has a family it was not asked for")
print(f"judged {len(vendored)} samples, accepted {checked}")
"""


def test_a_vendored_subset_works_beside_the_installed_models(
    dists: Dists, build_env: dict[str, str], user_dir: Path, tmp_path: Path
) -> None:
    env = clean_env()
    venv = make_venv(tmp_path / "downstream", env)
    venv.pip(str(dists.generator_wheel), str(dists.models_wheel), env=env, cwd=user_dir)
    out = tmp_path / "src"
    command = [venv.script("flarekit-generate"), "--package", "mysdk._crds"]
    command += ["--families", "kuberay,kueue", "--out", str(out)]
    # Outside the repository the generator uses the lock file it ships; the CRD files come
    # from the cache and mirror the builds use.
    generated = run(command, cwd=user_dir, env=build_env)
    assert f"generated {out / 'mysdk' / '_crds'}:" in generated.stdout

    package = out / "mysdk" / "_crds"
    assert not (out / "mysdk" / "__init__.py").exists()  # the SDK's own package is not ours
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 20
    assert not [p.name for p in sources if "flarekit_models" in p.read_text(encoding="utf-8")]
    groups = {p.name for p in package.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert groups == {"ray", "kueue", "core", "meta", "networking"}

    check = tmp_path / "check.py"
    check.write_text(CHECK, encoding="utf-8")
    done = run([venv.python, str(check), str(out), str(SAMPLES)], cwd=user_dir, env=env)
    # One kuberay sample has a duplicate volume mount path, which the API server refuses.
    assert done.stdout.startswith("judged 162 samples, accepted 161"), done.stdout
