"""``flarekit job logs NAME -f --prefix``: every node's log in one stream, against FakeCluster's
simulated Trainer; it ends because the job has ended."""

from __future__ import annotations

from cli_support import flarekit

from flarekit.cli import ExitCode
from flarekit_testing import FakeCluster


def test_follow_every_node_with_prefixes(fake: FakeCluster, namespace: str) -> None:
    submitted = flarekit(fake, "job", "submit", "pre", "--kind", "trainjob", "--num-nodes", "2",
                         "--wait", "--timeout", "30", "--", "python", "train.py",
                         namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    merged = flarekit(fake, "job", "logs", "pre", "-f", "--prefix", namespace=namespace)
    assert merged.code == 0, merged
    for node in (0, 1):
        alone = flarekit(fake, "job", "logs", "pre", "--node", str(node), namespace=namespace)
        mine = [line for line in merged.out.splitlines() if line.startswith(f"[{node}/pre-")]
        assert mine and [line.split(" ", 1)[1] for line in mine] == alone.out.splitlines()
    both = flarekit(fake, "job", "logs", "pre", "--prefix", "--node", "1", namespace=namespace)
    assert both.code == ExitCode.USAGE_ERROR
