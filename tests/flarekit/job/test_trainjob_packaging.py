"""A Python function packaged as a container command: runs as sent, or is refused with why."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from typing import Any

import pytest

from flarekit._validation import ConfigError
from flarekit.job._packaging import PackagingError, function_command, function_script
from flarekit.job._trainjob import TrainJob

SCALE = 10


def train(lr: float, epochs: int = 1, tags: tuple[str, ...] = ()) -> None:
    import json

    print(json.dumps({"lr": lr, "epochs": epochs, "tags": list(tags), "shell": "$HOME `id`"}))


def uses_a_global() -> None:
    print(SCALE)


@functools.lru_cache
def decorated() -> None:
    print("hi")


def test_the_command_runs_the_function_with_its_arguments() -> None:
    command = function_command(train, {"lr": 0.5, "tags": ("a", "b")})
    assert command[:2] == ["python", "-c"]
    command[0] = sys.executable
    env = {"PATH": os.environ.get("PATH", ""), "HOME": "/nowhere"}
    out = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env, check=True)
    # no shell in between: "$HOME" and backticks arrive as written
    assert out.stdout.strip() == (
        '{"lr": 0.5, "epochs": 1, "tags": ["a", "b"], "shell": "$HOME `id`"}'
    )


def test_launchers_follow_the_runtime_policy() -> None:
    assert function_command(train, {"lr": 1}, policy="torch")[:4] == [
        "torchrun", "--no-python", "python", "-c",
    ]  # fmt: skip
    assert function_command(train, {"lr": 1}, policy="mpi")[0] == "mpirun"
    assert function_command(train, {"lr": 1}, policy="jax")[:2] == ["python", "-c"]


def test_nested_function_without_free_variables_is_fine() -> None:
    def inner() -> None:
        print("inner")

    script = function_script(inner)
    assert script.startswith("def inner()") and script.rstrip().endswith("inner()")


@pytest.mark.parametrize(
    ("func", "args", "message"),
    [
        (lambda: None, None, "a lambda cannot be packaged"),
        (uses_a_global, None, "uses names defined outside it: SCALE"),
        (decorated, None, "expected a plain Python function"),
        (print, None, "expected a plain Python function"),
        (train, {"lr": object()}, "func_args['lr']=<object"),
        (train, {"rate": 1}, "do not fit train"),
    ],
)
def test_refused_with_the_reason(func: Any, args: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(PackagingError, match=message.replace("(", r"\(").replace("[", r"\[")):
        function_script(func, args)


def test_closures_are_refused() -> None:
    factor = 3

    def scaled() -> None:
        print(factor)

    with pytest.raises(PackagingError, match="a closure over factor"):
        function_script(scaled)


def test_trainjob_takes_func_or_command_and_reports_problems_together() -> None:
    job = TrainJob("fn", func=train, func_args={"lr": 0.1}, num_nodes=2)
    trainer = job.to_dict()["spec"]["trainer"]
    assert trainer["command"][:2] == ["torchrun", "--no-python"]  # torch-distributed runtime
    assert "train(**{'lr': 0.1})" in trainer["command"][-1]
    with pytest.raises(ConfigError) as caught:
        TrainJob("fn", func=lambda: 1, command=["x"], num_nodes=0)
    assert caught.value.fields == ["func", "num_nodes"]
    with pytest.raises(ConfigError) as caught:
        TrainJob("fn", func=uses_a_global)
    assert "SCALE" in str(caught.value)
