"""codeflare-sdk's cluster path against FakeCluster with simulated KubeRay.

Run in the separate SDK environment (`make sdk-paths`): codeflare-sdk 0.40.1 with only a
kubeconfig (KUBECONFIG set, HOME an empty directory: no ~/.kube/config). Each step prints
`ok` or the error it raised; the exit code is the number of failed steps.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from typing import Any

from flarekit_testing import FakeCluster, RayClusterController


def main() -> int:
    home = tempfile.mkdtemp(prefix="sdk-home-")
    with FakeCluster(
        tick_interval=0.1, controllers=[RayClusterController(ready_after=1, ca_secret=True)]
    ) as fc:
        os.environ.update(HOME=home, KUBECONFIG=str(fc.kubeconfig_path))
        from codeflare_sdk import Cluster, ClusterConfiguration, list_all_clusters

        state: dict[str, Any] = {}
        config = ClusterConfiguration(
            name="demo",
            namespace="default",
            num_workers=1,
            worker_cpu_requests=1,
            worker_cpu_limits=1,
            worker_memory_requests=2,
            worker_memory_limits=2,
        )
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("Cluster(...)", lambda: state.setdefault("cluster", Cluster(config))),
            ("apply()", lambda: state["cluster"].apply()),
            ("status()", lambda: state["cluster"].status()),
            # FakeCluster runs no Ray dashboard and KubeRay exposes none by itself (a platform's
            # Ingress or Route does): the dashboard check needs one to answer over HTTP.
            (
                "wait_ready(dashboard_check=False)",
                lambda: state["cluster"].wait_ready(timeout=60, dashboard_check=False),
            ),
            ("details()", lambda: state["cluster"].details()),
            ("list_all_clusters()", lambda: list_all_clusters("default")),
            ("down()", lambda: state["cluster"].down()),
            (
                "RayCluster gone",
                lambda: fc.get("rayclusters", "demo", "default") is None or 1 / 0,
            ),
        ]
        failed = 0
        for name, fn in steps:
            try:
                result = fn()
            except BaseException as exc:  # report and go on: each step is a figure
                failed += 1
                print(f"FAIL {name}: {type(exc).__name__}: {exc}".splitlines()[0])
                traceback.print_exc(limit=2, file=sys.stderr)
            else:
                shown = repr(result).splitlines()[0][:100] if result is not None else ""
                print(f"ok   {name} {shown}")
        print(f"codeflare-sdk path: {len(steps) - failed}/{len(steps)} steps ok")
        return failed


if __name__ == "__main__":
    sys.exit(main())
