"""Record the differential script's outcomes on the real side into golden/.

    python tests/clients/record_golden.py

Starts the control plane with every real operator at the newest built releases (`make
control-plane` builds them), runs the script through each client, and writes each client's
outcomes with the server's and the operators' releases they came from. The suite compares
FakeCluster with them where the operators are not built, and checks them against every live
run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from differential_backends import CLIENTS, run_script, save_golden, server_version  # noqa: E402

from flarekit_testing import ControlPlane  # noqa: E402
from flarekit_testing.controlplane._operator_runner import versions_for  # noqa: E402


def _suite_fixtures() -> object:
    """tests/conftest.py, which knows where `make control-plane` put the binaries."""
    spec = importlib.util.spec_from_file_location("suite_conftest", HERE.parent / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    suite = _suite_fixtures()
    OPERATORS = suite.OPERATORS  # type: ignore[attr-defined]
    binaries, why = suite.built_controlplane()  # type: ignore[attr-defined]
    if binaries is None:
        raise SystemExit(why)
    with ControlPlane(
        releases=versions_for(OPERATORS, None),
        operators=OPERATORS,
        binaries=binaries,
        pod_run_time=1.0,
        start_timeout=600.0,
    ) as plane:
        path = Path(plane.kubeconfig_path)
        source = {"server": server_version(path), "operators": dict(plane.operators)}
        for client in CLIENTS:
            outcomes = run_script(client, path)
            save_golden(client, source, outcomes)
            print(f"{client}: {len(outcomes)} outcomes recorded from {source}")
