"""What a server sends cannot exhaust the client: a 2 GiB body, a gzip bomb, a watch line that
never ends and an answer trickling one byte every 5 s each end in seconds, in bounded memory,
with one clear `ApiUnavailable`; a bad watch line is reported and the watch resumes from the
last good resourceVersion.

Time and memory are measured in a child process (its peak resident memory, VmHWM, as the
kernel counts it), against the hostile server of `hostile_server.py`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_server import HostileServer, HostileServerProcess, gzip_bomb

from flarekit import ApiUnavailable, Client, ReadLimits, RetryPolicy, from_kubeconfig
from flarekit_models.core.v1 import Pod

#: The acceptance bounds for each hostile answer.
SECONDS = 10.0
MEGABYTES = 200.0
#: The client's timeout in the trickle cases (each attempt of a request must end within it).
TIMEOUT = 3.0

_CHILD = textwrap.dedent("""
    import json, sys, time
    from flarekit import Client, RetryPolicy, from_kubeconfig
    from flarekit_models.core.v1 import Pod

    kubeconfig, action, target, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    client = Client(from_kubeconfig(kubeconfig), timeout=timeout, retry=RetryPolicy(attempts=1))
    started = time.monotonic()
    outcome = {"error": None, "message": ""}
    try:
        if action == "get":
            client.get_raw(target)
        else:
            for _ in client.watch(Pod, namespace=target, resource_version="1", timeout=60):
                pass
    except Exception as exc:
        outcome = {"error": type(exc).__name__, "message": str(exc)}
    outcome["seconds"] = time.monotonic() - started
    # The peak resident memory of this program (VmHWM), not ru_maxrss: Linux carries the
    # parent's peak across fork and exec into ru_maxrss, so a large test process would count.
    status = open("/proc/self/status").read()
    peak_kib = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:"))
    outcome["megabytes"] = peak_kib / 1024
    print(json.dumps(outcome))
    """)


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileServer]:
    gzip_bomb()  # made once, before any clock starts
    with HostileServer() as server:
        yield server


@pytest.fixture(scope="module")
def hostile_apart() -> Iterator[HostileServerProcess]:
    """The server in a process of its own, for the timed cases: the test's own threads (and
    any the suite left running) cannot slow the server down."""
    with HostileServerProcess() as server:
        yield server


def _in_child(kubeconfig: Path, action: str, target: str, timeout: float = 30.0) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(kubeconfig), action, target, str(timeout)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome


CASES = [
    ("get", "/huge", 30.0, "larger than 64 MiB (ReadLimits.max_body_bytes)"),
    ("get", "/huge-declared", 30.0, "larger than 64 MiB (ReadLimits.max_body_bytes)"),
    ("get", "/bomb", 30.0, "larger than 64 MiB (ReadLimits.max_body_bytes)"),
    ("watch", "endless", 30.0, "larger than 16 MiB (ReadLimits.max_watch_line_bytes)"),
    ("get", "/trickle-body", TIMEOUT, "no complete answer within 3s"),
    ("get", "/trickle-headers", TIMEOUT, "no complete answer within 3s"),
]


@pytest.mark.parametrize(("action", "target", "timeout", "message"), CASES)
def test_a_hostile_answer_ends_fast_in_bounded_memory(
    hostile_apart: HostileServerProcess,
    tmp_path: Path,
    action: str,
    target: str,
    timeout: float,
    message: str,
) -> None:
    outcome = _in_child(hostile_apart.kubeconfig(tmp_path), action, target, timeout)
    assert outcome["error"] == "ApiUnavailable", outcome
    assert message in outcome["message"]
    assert outcome["seconds"] < SECONDS, outcome
    assert outcome["megabytes"] < MEGABYTES, outcome


def _client(server: HostileServer, folder: Path, **options: Any) -> Client:
    options.setdefault("retry", RetryPolicy(attempts=3, backoff=0.01))
    return Client(from_kubeconfig(server.kubeconfig(folder)), **options)


def test_the_bounds_are_the_clients_to_set(hostile: HostileServer, tmp_path: Path) -> None:
    limits = ReadLimits(max_body_bytes=1024 * 1024)
    with _client(hostile, tmp_path, limits=limits) as client:
        assert client.limits is limits
        with pytest.raises(ApiUnavailable, match=r"larger than 1 MiB") as info:
            client.get_raw("/bomb")
    assert info.value.reason == "ResponseTooLarge"


def test_a_bad_watch_line_is_reported_and_the_watch_resumes_where_it_was(
    hostile: HostileServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _client(hostile, tmp_path) as client:
        watch = client.watch(Pod, namespace="garbage", resource_version="1", timeout=30)
        names = []
        for event in watch:
            assert event.object.metadata is not None
            names.append(event.object.metadata.name)
            if len(names) == 2:
                watch.close()
    assert names == ["first", "after-10"]  # nothing lost, nothing repeated
    assert hostile.watch_versions[-2:] == ["1", "10"]  # resumed from the last good version
    assert any("line 2 of the watch is not a Pod watch event" in r.message for r in caplog.records)


def test_a_watch_that_only_brings_bad_lines_ends_with_a_clear_error(
    hostile: HostileServer, tmp_path: Path
) -> None:
    with _client(hostile, tmp_path) as client:
        watch = client.watch(Pod, namespace="always-garbage", resource_version="1", timeout=30)
        with pytest.raises(ApiUnavailable) as info:
            list(watch)
    assert info.value.reason == "BadWatchEvent"
    assert "line 1 of the watch is not a Pod watch event" in info.value.message
    assert "Invalid JSON" in info.value.message
