"""wait_until: backoff, endings, tolerance of missing status, and the progress display."""

from __future__ import annotations

import io
from typing import Any

import pytest

from flarekit._progress import NullProgress, PlainProgress, interactive, open_progress
from flarekit._wait import (
    TerminalFailure,
    WaitTimeout,
    backoff_delays,
    summarize_state,
    wait_until,
)


class FakeClock:
    """Time moves only when the wait sleeps; records every sleep."""

    def __init__(self) -> None:
        self.t = 100.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


class Sequence:
    """A fetch that returns the given objects in turn, then repeats the last one."""

    def __init__(self, *objs: Any) -> None:
        self.objs = list(objs)
        self.calls = 0

    def __call__(self) -> Any:
        obj = self.objs[min(self.calls, len(self.objs) - 1)]
        self.calls += 1
        return obj


def ready(obj: Any) -> bool:
    return bool(obj["status"]["state"] == "ready")


def failed(obj: Any) -> str | None:
    status = obj["status"]
    return status.get("reason") if status.get("state") == "failed" else None


def test_returns_the_object_once_done_and_backs_off_within_bounds() -> None:
    clock = FakeClock()
    final = {"status": {"state": "ready"}}
    fetch = Sequence(*([{"status": {"state": "pending"}}] * 8), final)
    got = wait_until(
        fetch, ready, failed, timeout=600, describe="x", poll=0.5, max_poll=2.0, clock=clock
    )
    assert got is final
    assert fetch.calls == 9
    assert clock.sleeps[0] == 0.5
    assert clock.sleeps == sorted(clock.sleeps)
    assert max(clock.sleeps) == 2.0
    assert clock.sleeps[-1] == 2.0


def test_missing_status_keeps_waiting() -> None:
    clock = FakeClock()
    fetch = Sequence({}, {"status": None}, {"status": {}}, {"status": {"state": "ready"}})
    got = wait_until(fetch, ready, failed, timeout=60, describe="x", clock=clock)
    assert got == {"status": {"state": "ready"}}
    assert fetch.calls == 4


def test_timeout_names_what_how_long_and_last_state() -> None:
    clock = FakeClock()
    fetch = Sequence({"status": {"state": "pending", "reason": "Unschedulable"}})
    with pytest.raises(WaitTimeout) as info:
        wait_until(fetch, ready, failed, timeout=10, describe="RayCluster ns/a", clock=clock)
    message = str(info.value)
    assert "RayCluster ns/a" in message
    assert "timeout 10s" in message
    assert "state=pending" in message and "Unschedulable" in message
    assert info.value.elapsed == pytest.approx(10)
    assert isinstance(info.value, TimeoutError)
    # The last sleep is cut to the remaining time: the wait does not overshoot.
    assert sum(clock.sleeps) == pytest.approx(10)


def test_timeout_zero_checks_once() -> None:
    clock = FakeClock()
    fetch = Sequence({"status": {"state": "pending"}})
    with pytest.raises(WaitTimeout):
        wait_until(fetch, ready, failed, timeout=0, describe="x", clock=clock)
    assert fetch.calls == 1 and clock.sleeps == []


def test_terminal_failure_quotes_the_reason() -> None:
    clock = FakeClock()
    fetch = Sequence(
        {"status": {"state": "pending"}},
        {"status": {"state": "failed", "reason": "head pod OOMKilled: limit 1Gi"}},
    )
    with pytest.raises(TerminalFailure) as info:
        wait_until(fetch, ready, failed, timeout=60, describe="RayCluster ns/a", clock=clock)
    assert "head pod OOMKilled: limit 1Gi" in str(info.value)
    assert info.value.reason == "head pod OOMKilled: limit 1Gi"
    assert "RayCluster ns/a" in str(info.value)


def test_failed_true_uses_the_observed_state() -> None:
    fetch = Sequence({"status": {"phase": "Failed", "message": "quota exceeded"}})
    with pytest.raises(TerminalFailure, match="quota exceeded"):
        wait_until(
            fetch, lambda o: False, lambda o: True, timeout=5, describe="x", clock=FakeClock()
        )


def test_fetch_errors_propagate() -> None:
    def fetch() -> Any:
        raise LookupError("gone")

    with pytest.raises(LookupError):
        wait_until(fetch, ready, None, timeout=5, describe="x", clock=FakeClock())


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"timeout": -1}, "timeout"),
        ({"timeout": 5, "poll": 0}, "poll"),
        ({"timeout": 5, "poll": 2, "max_poll": 1}, "max_poll"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        wait_until(Sequence({}), ready, None, describe="x", clock=FakeClock(), **kwargs)


def test_backoff_delays_grow_to_the_bound() -> None:
    step = backoff_delays(1.0, 3.0, factor=2.0)
    assert [step() for _ in range(4)] == [1.0, 2.0, 3.0, 3.0]


class Obj:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (None, "not found"),
        ({}, "no status reported yet"),
        ({"status": {}}, "status has no state yet"),
        ({"status": {"phase": "Running"}}, "phase=Running"),
        (
            {
                "status": {
                    "conditions": [
                        {"type": "Admitted", "status": "True"},
                        {"type": "X", "status": "False"},
                    ]
                }
            },
            "conditions=Admitted",
        ),
        (Obj(status=Obj(state="ready", reason=None)), "state=ready"),
        (Obj(status=None), "no status reported yet"),
    ],
)
def test_summarize_state_reads_dicts_and_models(obj: Any, expected: str) -> None:
    assert summarize_state(obj) == expected


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD"):
        monkeypatch.delenv(var, raising=False)


def test_display_is_silent_off_a_terminal_and_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    no_ci(monkeypatch)
    assert not interactive(io.StringIO())
    assert interactive(Tty())
    assert isinstance(open_progress("x", timeout=1, stream=io.StringIO()), NullProgress)
    assert isinstance(open_progress("x", timeout=1, enabled=False, stream=Tty()), NullProgress)
    monkeypatch.setenv("CI", "true")
    assert not interactive(Tty())


def test_plain_line_is_rewritten_in_place_and_cleared() -> None:
    stream = Tty()
    line = PlainProgress("RayCluster ns/a", stream, width=60)
    line.update(elapsed=3.2, timeout=60, state="state=pending", done=1, total=3)
    line.update(elapsed=4, timeout=60, state="", done=None, total=None)
    line.close()
    out = stream.getvalue()
    assert out.startswith("\rwaiting for RayCluster ns/a 1/3 [3s/60s]: state=pending")
    assert "\rwaiting for RayCluster ns/a [4s/60s]" in out
    assert out.endswith("\r")
    assert "\n" not in out
    long = line.render(elapsed=0, timeout=1, state="x" * 500, done=None, total=None)
    assert len(long) == 60 and long.endswith("...")


def test_wait_draws_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = Tty()
    no_ci(monkeypatch)
    import flarekit._progress as progress_mod

    monkeypatch.setattr(progress_mod, "_rich_available", lambda: False)
    monkeypatch.setattr("sys.stderr", stream)
    fetch = Sequence({"status": {"state": "pending"}}, {"status": {"state": "ready"}})
    wait_until(
        fetch, ready, failed, timeout=9, describe="thing", clock=FakeClock(), count=lambda o: (0, 2)
    )
    assert "waiting for thing 0/2" in stream.getvalue()


def test_rich_display_when_rich_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rich")
    no_ci(monkeypatch)
    monkeypatch.setenv("COLUMNS", "120")  # room for the whole text (80 shortens it)
    stream = Tty()
    display = open_progress("RayCluster ns/[a]", timeout=10, stream=stream)
    assert type(display).__name__ == "_RichProgress"
    display.update(elapsed=1, timeout=10, state="state=[bold]pending", done=1, total=2)
    print("the user's own output")  # not captured by the display
    display.close()
    out = stream.getvalue()
    assert "RayCluster ns/[a]" in out and "[bold]pending" in out
    assert "the user's own output" not in out


_LONG_STATE = (
    "QUEUED, workers 0/4; Kueue: couldn't assign flavors to pod set head: insufficient "
    "unused quota for cpu in flavor default-flavor, 4 more needed"
)


def test_plain_line_fits_an_80_column_terminal_keeping_what_and_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    line = PlainProgress("Ray cluster team-a/demo to be ready", Tty())
    shown = line.render(elapsed=3, timeout=600, state=_LONG_STATE, done=0, total=4)
    assert len(shown) <= 79, shown  # the last column free: a full line would wrap
    assert shown.startswith("waiting for Ray cluster team-a/demo to be ready 0/4 [3s/600s]: QUE")
    assert shown.endswith("...")


def test_rich_line_fits_an_80_column_terminal_keeping_the_bar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("rich")
    from rich.console import Console

    no_ci(monkeypatch)
    monkeypatch.setenv("COLUMNS", "80")
    display = open_progress("Ray cluster team-a/demo to be ready", timeout=600, stream=Tty())
    assert type(display).__name__ == "_RichProgress"
    display.update(elapsed=3, timeout=600, state=_LONG_STATE, done=0, total=4)
    screen = Console(width=80, file=io.StringIO(), record=True, color_system="standard")
    screen.print(display._progress.get_renderable())  # type: ignore[attr-defined]
    display.close()
    lines = screen.export_text().rstrip("\n").splitlines()
    assert len(lines) == 1, lines  # one line: the text did not wrap and push the bar down
    [line] = lines
    assert len(line.rstrip()) <= 79
    assert "waiting for Ray cluster team-a/demo to be ready 0/4" in line  # what, kept whole
    assert "━" in line and _LONG_STATE not in line  # the bar kept its place; the text gave way
