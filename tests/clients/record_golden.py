"""Record the differential script's outcomes against a live kube-apiserver into golden/.

    python tests/clients/record_golden.py <kubeconfig of a cluster like ControlPlane>

The cluster needs the pinned CRDs (default releases) and a controller manager; the files
written are what the suite compares FakeCluster with when no control plane is running.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from differential_backends import CLIENTS
from test_differential import _run, save_golden

if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for client in CLIENTS:
        outcomes = _run(client, Path(sys.argv[1]))
        save_golden(client, outcomes)
        print(f"{client}: {len(outcomes)} outcomes recorded")
