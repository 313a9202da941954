"""Run the README's examples as a user would, against whatever flarekit is importable.

``python tests/readme_examples.py README.md [model|facade|client|fakecluster|cli|...]`` runs
the chosen examples (all by default) and prints one line per example; any failure exits
non-zero with its traceback. The packaging tests run it with the interpreter of a fresh
virtual environment (a wheel installed, no repository on the path); ``tests/test_readme.py``
runs the same functions in the development environment, and checks that every code block of
the README is one of :data:`MARKERS` (run here) or of :data:`NOT_RUN` (with the reason).

The model example is self-contained. The facade and client examples talk to "the cluster of
your kubeconfig": here the practice cluster ``flarekit dev up`` starts
(:mod:`flarekit.cli._practice`: simulated KubeRay, Kueue and Trainer operators whose pods run
here, namespace ``team-a`` with its default LocalQueue ``team-a-queue``, the
``torch-distributed`` runtime), with ``KUBECONFIG`` pointing at it. Where Ray is installed its
Ray clusters are local Ray, which binds beyond loopback: tests/test_readme.py then runs these
examples in a network namespace of their own. The command-line example
runs in bash as written, in an empty directory, with no ``KUBECONFIG`` but the one its first
line sets. The FakeCluster example defines tests, which are called. The control-plane
example needs the control plane's programs (``make control-plane``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Which README block is which: a marker only that block contains.
MARKERS = {
    "model": "cluster.spec.worker_group_specs[0].replicas = 4",
    "facade": "worker_extended_resource_requests=",
    "client": "client = Client()  ",
    "fakecluster": "FakeCluster(releases=",
    "cli": "flarekit dev up",
    "controlplane": "ControlPlane(",
    "widgets": "from flarekit.widgets import",
}

#: Blocks that are not run here, each with the reason.
NOT_RUN = {
    "make run ": "the make targets are what runs this suite",
    "pip install .  ": "installing is what the packaging tests do, from built wheels",
    "flarekit-generate pin": "pinning writes the lock file and needs GitHub for the commit",
    "flarekit-generate --package": "vendoring is tested by the generator's own tests",
    "fields of kuberay": "sample output of `pin`, not a command",
    "flarekit ray job submit": "needs a Ray head: tests/flarekit/ray/cli_inner.py runs it in "
    "bash as written, against the real Ray head of the Ray integration test",
    "simulated_operators(local=True)": "local execution for real (Ray, torch.distributed) runs "
    "in tests/flarekit_testing/local/local_inner.py, in a network namespace of its own",
}


def code_blocks(readme: Path) -> list[str]:
    """Every fenced block of the README (any language, or none)."""
    return re.findall(r"```[a-z]*\n(.*?)```", readme.read_text(encoding="utf-8"), re.DOTALL)


def python_blocks(readme: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.DOTALL)


def block(readme: Path, name: str) -> str:
    """The one README block holding ``MARKERS[name]`` (an error if there is not exactly one)."""
    found = [b for b in code_blocks(readme) if MARKERS[name] in b]
    if len(found) != 1:
        raise AssertionError(f"{readme}: {len(found)} code blocks contain {MARKERS[name]!r}")
    return found[0]


def run_block(readme: Path, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(code, str(readme), "exec"), namespace)
    return namespace


def run_model(readme: Path) -> str:
    names = run_block(readme, block(readme, "model"))
    dumped = names["cluster"].to_dict()
    assert dumped["spec"]["workerGroupSpecs"][0]["replicas"] == 4, dumped
    return f"model: {type(names['cluster']).__module__}.{type(names['cluster']).__name__}"


def run_fakecluster(readme: Path) -> str:
    names = run_block(readme, block(readme, "fakecluster"))
    tests = [v for k, v in names.items() if k.startswith("test_") and callable(v)]
    assert tests, "the FakeCluster example defines no test"
    for test in tests:
        test()
    return f"fakecluster: {len(tests)} test(s) passed"


def run_facade(readme: Path) -> str:
    with practice_cluster() as fake, tempfile.TemporaryDirectory() as work:
        started = time.monotonic()
        here = os.getcwd()
        os.chdir(work)  # the example writes its train.py where it runs
        try:
            run_block(readme, block(readme, "facade"))
        finally:
            os.chdir(here)
        clusters = [obj["metadata"]["name"] for obj in fake.objects("rayclusters.ray.io")]
        assert clusters == [], f"cluster.down() left {clusters} behind"
        jobs = [obj["metadata"]["name"] for obj in fake.objects("trainjobs.trainer.kubeflow.org")]
        assert jobs == ["fine-tune"], jobs
        return f"facade: ran in {time.monotonic() - started:.1f}s on a FakeCluster"


def run_client(readme: Path) -> str:
    """The "talking to a cluster" example reads RayCluster ``demo`` of ``team-a``."""
    from flarekit import Cluster, ClusterConfiguration

    with practice_cluster():
        Cluster(ClusterConfiguration(name="demo", namespace="team-a")).apply()
        names = run_block(readme, block(readme, "client"))
        assert names["cluster"].metadata.name == "demo"
        return "client: read and listed RayCluster team-a/demo"


def run_cli(readme: Path) -> str:
    """The command-line example in bash, as written, in an empty directory, with the
    ``flarekit`` of this interpreter first on the PATH and no kubeconfig of its own."""
    with tempfile.TemporaryDirectory() as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "FLAREKIT"))}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["HOME"] = work  # nothing from the user's ~/.kube
        env["FLAREKIT_DEV_DIR"] = str(Path(work) / "dev")
        script = "set -euo pipefail\n" + block(readme, "cli")
        try:
            done = subprocess.run(
                ["bash", "-c", script],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        finally:  # never leave the practice cluster behind, also after a failure
            subprocess.run(
                [sys.executable, "-m", "flarekit.cli", "dev", "down"],
                env=env,
                capture_output=True,
                timeout=120,
            )
        if done.returncode != 0:
            raise AssertionError(
                f"the README's command-line example exited {done.returncode}:\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        assert "kind: RayCluster" in done.stdout and "fine-tune" in done.stdout, done.stdout
        assert (Path(work) / "out" / "raycluster-demo.yaml").is_file()
        lines = len(block(readme, "cli").strip().splitlines())
        return f"cli: {lines} commands ran in bash on the practice cluster"


def run_widgets(readme: Path) -> str:
    """The notebook example outside a notebook: the widgets' state says what a user sees."""
    with practice_cluster():
        names = run_block(readme, block(readme, "widgets"))
        assert names["buttons"].message.value == "Ray cluster team-a/nb is ready"
        shown = {s.name: s.state.value for s in names["clusters"].statuses}
        assert shown.get("nb") == "READY", shown
        names["buttons"].down()
        return f"widgets: cluster table of {len(shown)} cluster(s), job table of {len(names['jobs'].jobs)} job(s)"


def run_controlplane(readme: Path) -> str:
    names = run_block(readme, block(readme, "controlplane"))
    assert names["client"] is not None
    return "controlplane: started and stopped a control plane"


@contextmanager
def practice_cluster() -> Iterator[Any]:
    """The practice cluster of ``flarekit dev up``, set as the kubeconfig's cluster."""
    from flarekit.cli._practice import practice_cluster as started

    saved = os.environ.get("KUBECONFIG")
    with tempfile.TemporaryDirectory() as work, started(Path(work) / "kubeconfig") as fake:
        os.environ["KUBECONFIG"] = str(Path(work) / "kubeconfig")
        try:
            yield fake
        finally:
            if saved is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = saved


RUNNERS: dict[str, Callable[[Path], str]] = {
    "model": run_model,
    "facade": run_facade,
    "client": run_client,
    "fakecluster": run_fakecluster,
    "cli": run_cli,
    "controlplane": run_controlplane,
    "widgets": run_widgets,
}


def main(argv: list[str]) -> int:
    readme = Path(argv[0])
    for name in argv[1:] or list(RUNNERS):
        print(RUNNERS[name](readme), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
