"""The verbs kubectl and Ray users reach for: ``cluster get|delete``, ``job logs -f``,
``job resume|events``, ``--no-queue`` and the AGE column."""

from __future__ import annotations

import re

from cli_support import flarekit

from flarekit._tables import Age, age
from flarekit_testing import FakeCluster
from kube_support import local_queue, new_namespace
from wait_support import wait_until


def test_cluster_get_and_delete_are_status_and_down(fake: FakeCluster, namespace: str) -> None:
    assert flarekit(fake, "cluster", "apply", "kv", "--wait", namespace=namespace).code == 0
    got = flarekit(fake, "cluster", "get", "kv", namespace=namespace)
    assert got.code == 0, got
    assert got.out == flarekit(fake, "cluster", "status", "kv", namespace=namespace).out
    gone = flarekit(fake, "cluster", "delete", "kv", namespace=namespace)
    assert gone.code == 0, gone
    assert f"Ray cluster {namespace}/kv deleted" in gone.out
    assert fake.get("rayclusters", "kv", namespace) is None


def test_job_logs_takes_f_as_follow(fake: FakeCluster, namespace: str) -> None:
    submitted = flarekit(fake, "job", "submit", "tail", "--kind", "trainjob", "--wait",
                         "--timeout", "30", namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    followed = flarekit(fake, "job", "logs", "tail", "-f", namespace=namespace)
    assert followed.code == 0, followed
    assert followed.out == flarekit(fake, "job", "logs", "tail", namespace=namespace).out
    assert "TrainJob tail node 0: started" in followed.out


def _active(fake: FakeCluster, namespace: str, owner: str) -> list[bool]:
    """spec.active of the Workloads of `owner` (a job's Workload is owned by the job)."""
    return [
        w["spec"].get("active", True)
        for w in fake.objects("workloads", namespace)
        if any(ref["name"] == owner for ref in w["metadata"].get("ownerReferences", []))
    ]


def test_job_stop_then_resume_queues_it_again(fake: FakeCluster) -> None:
    """A job in a queue whose ClusterQueue does not exist stays queued: stop deactivates its
    Workload, resume activates it again, and nothing else moves it meanwhile."""
    held = new_namespace(fake, "held")
    local_queue(fake, held, cluster_queue="cq-missing", default=True)
    submitted = flarekit(fake, "job", "submit", "again", "--kind", "trainjob", namespace=held)
    assert submitted.code == 0, submitted
    wait_until(lambda: _active(fake, held, "again"), "the job's Workload exists", poll=0.02)
    stopped = flarekit(fake, "job", "stop", "again", namespace=held)
    assert stopped.code == 0, stopped
    assert _active(fake, held, "again") == [False]
    resumed = flarekit(fake, "job", "resume", "again", namespace=held)
    assert resumed.code == 0, resumed
    assert resumed.out.startswith(f"TrainJob {held}/again: ")
    assert _active(fake, held, "again") == [True]


def test_job_events_show_what_happened_to_it(fake: FakeCluster, namespace: str) -> None:
    submitted = flarekit(fake, "job", "submit", "told", "--kind", "trainjob", "--wait",
                         "--timeout", "30", namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    events = flarekit(fake, "job", "events", "told", namespace=namespace)
    assert events.code == 0, events
    lines = events.out.splitlines()
    assert lines and all(re.match(r"(Normal|Warning) \w+ \w+/", line) for line in lines), lines
    as_json = flarekit(fake, "job", "events", "told", "-o", "json", namespace=namespace)
    assert as_json.code == 0 and '"kind": "List"' in as_json.out


def test_no_queue_submits_where_there_is_no_local_queue(fake: FakeCluster) -> None:
    bare = new_namespace(fake, "bare")  # no LocalQueue at all
    refused = flarekit(fake, "job", "submit", "q", "--kind", "trainjob", namespace=bare)
    assert refused.code != 0
    done = flarekit(fake, "job", "submit", "q", "--kind", "trainjob", "--no-queue",
                    namespace=bare)  # fmt: skip
    assert done.code == 0, done
    labels = (fake.get("trainjobs", "q", bare) or {})["metadata"].get("labels") or {}
    assert "kueue.x-k8s.io/queue-name" not in labels
    cluster = flarekit(fake, "cluster", "apply", "c", "--no-queue", namespace=bare)
    assert cluster.code == 0, cluster
    assert fake.get("rayclusters", "c", bare) is not None


def test_listings_have_an_age_column(fake: FakeCluster, namespace: str) -> None:
    assert flarekit(fake, "cluster", "apply", "aged", namespace=namespace).code == 0
    clusters = flarekit(fake, "cluster", "list", namespace=namespace).out.splitlines()
    assert clusters[1].split()[-1] == "AGE", clusters
    assert re.fullmatch(r"\d+s", clusters[-1].split()[-1]), clusters
    assert flarekit(fake, "job", "submit", "aged", "--kind", "trainjob",
                    namespace=namespace).code == 0  # fmt: skip
    jobs = flarekit(fake, "job", "list", namespace=namespace).out.splitlines()
    assert jobs[1].split()[-1] == "AGE" and re.fullmatch(r"\d+s", jobs[-1].split()[-1]), jobs


def test_age_reads_as_kubectl_writes_it() -> None:
    assert [age(s) for s in (0, 59, 119, 200, 3599, 3 * 3600 + 120, 30 * 3600, 3 * 86400 + 6 * 3600)] == [
        "0s", "59s", "119s", "3m20s", "59m", "3h2m", "30h", "3d6h"
    ]  # fmt: skip
    assert str(Age(None)) == "-" and str(Age("not a time")) == "-"
    assert Age("2024-05-01T12:00:00Z") == Age("2024-05-01T12:00:00Z")  # equal: no reprint
