"""``flarekit completion bash|zsh|fish``: the shell code, loaded in the real shell, registers
completion for ``flarekit`` and completes commands, subcommands and options by asking this
environment's ``flarekit`` (zsh and fish come from ``make shells``; without them their tests
are skipped, except in CI, where they fail)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import flarekit

BIN = Path(sys.executable).parent


def _shell(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true: {name} is missing (make shells installs it)", pytrace=False)
        pytest.skip(f"{name} is not installed (make shells installs it)")
    return found


def _run(shell: str, script: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ARC")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [_shell(shell), "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{shell} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


_BASH_COMPLETE = """
COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9
read -ra COMP_WORDS <<< "$COMP_LINE"; COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_python_argcomplete flarekit "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '<%s>\\n' "${{COMPREPLY[@]}}"
"""


def _bash_completions(line: str) -> list[str]:
    script = "source <(flarekit completion bash)\n" + _BASH_COMPLETE.format(line=line)
    out = _run("bash", script)
    return sorted(word.strip("<>").strip() for word in out.splitlines())


def test_bash_registers_flarekit_and_completes_a_command() -> None:
    registered = _run("bash", "source <(flarekit completion bash)\ncomplete -p flarekit")
    assert registered.strip().endswith("-F _python_argcomplete flarekit"), registered
    assert _bash_completions("flarekit clu") == ["cluster"]
    assert _bash_completions("flarekit ray job s") == ["status", "stop", "submit"]
    assert _bash_completions("flarekit job submit --ki") == ["--kind"]
    shells = [w for w in _bash_completions("flarekit completion ") if not w.startswith("-")]
    assert shells == ["bash", "fish", "zsh"]


def test_zsh_registers_flarekit_and_completes_a_command() -> None:
    script = (
        "autoload -U compinit && compinit -u\n"
        "source <(flarekit completion zsh)\n"
        "print -r -- $_comps[flarekit]\n"
        'COMP_LINE="flarekit clu" COMP_POINT=12 _ARGCOMPLETE=1 _ARGCOMPLETE_SHELL=zsh '
        "__python_argcomplete_run flarekit\n"
    )
    out = _run("zsh", script)
    registered, _, completions = out.partition("\n")
    assert registered == "_python_argcomplete"
    assert completions.split("\x0b")[0].startswith("cluster"), repr(completions)


def test_fish_completes_a_command() -> None:
    out = _run("fish", 'flarekit completion fish | source\ncomplete -C"flarekit clu"')
    assert [line.split("\t")[0] for line in out.splitlines()] == ["cluster"], out


def test_completion_for_an_unknown_shell_is_a_usage_error() -> None:
    result = flarekit(None, "completion", "tcsh")
    assert result.code == 2
    assert "invalid choice: 'tcsh'" in result.err
