"""Running ``flarekit`` in-process against the shared FakeCluster, and reading what it said."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from flarekit.cli import main
from flarekit.walkthrough._runtime import torch_distributed_runtime
from flarekit_testing import FakeCluster


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return self.err.splitlines()


def torch_runtime() -> dict[str, Any]:
    return torch_distributed_runtime(image="example.com/torch:1")


def flarekit(fc: FakeCluster | None, *argv: str, namespace: str | None = None) -> Result:
    """`flarekit argv...` with --kubeconfig (and --namespace) pointing at `fc`; options go
    before a `--` so that a job's command stays last."""
    args = list(argv)
    extra: list[str] = []
    if fc is not None:
        extra += ["--kubeconfig", str(fc.kubeconfig_path)]
    if namespace is not None:
        extra += ["--namespace", namespace]
    at = args.index("--") if "--" in args else len(args)
    out, err = io.StringIO(), io.StringIO()
    code = main([*args[:at], *extra, *args[at:]], out=out, err=err)
    return Result(code, out.getvalue(), err.getvalue())


def one_error_line(result: Result) -> str:
    """The error line of a failed command, checking there is exactly one and no traceback."""
    assert result.code != 0, result
    lines = result.error_lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: "), lines
    assert "Traceback" not in result.err
    return lines[0]
