"""How long a simulated job runs and how it ends, asked for the way ControlPlane's KWOK nodes
are asked: `FLAREKIT_SIMULATED_DURATION` and `FLAREKIT_SIMULATED_EXIT_CODE`.

On the real control plane a pod with the environment variable `FLAREKIT_SIMULATED_EXIT_CODE`
set to a non-zero number fails with that exit code, and `FLAREKIT_SIMULATED_DURATION` sets
how long it runs (see `controlplane._kwok`); the simulated Ray dashboards read the same variables from
a Ray job's runtime environment (see `controlplane._raydash`). The simulated operators read them too,
from anywhere in the job (its containers' `env`, a Ray `runtimeEnvYAML`), so that one test
provokes a failure or a long run the same way on both backends.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: Set on a container, the exit code its simulated run ends with (0 when unset).
EXIT_CODE_ENV = "FLAREKIT_SIMULATED_EXIT_CODE"
#: Set on a container, how long its simulated run takes ("30s", "2m", a number of seconds).
DURATION_ENV = "FLAREKIT_SIMULATED_DURATION"

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def _values(obj: Any, name: str) -> list[str]:
    """Every value `obj` gives the environment variable `name`: `{"name": ..., "value": ...}`
    entries, `env_vars` mappings, and the same inside YAML strings (a `runtimeEnvYAML`)."""
    if isinstance(obj, dict):
        found = []
        if obj.get("name") == name and "value" in obj:
            found.append(str(obj["value"]))
        env_vars = obj.get("env_vars")
        if isinstance(env_vars, dict) and name in env_vars:
            found.append(str(env_vars[name]))
        for value in obj.values():
            found += _values(value, name)
        return found
    if isinstance(obj, list):
        return [v for item in obj for v in _values(item, name)]
    if isinstance(obj, str) and name in obj:
        try:
            parsed = yaml.safe_load(obj)
        except yaml.YAMLError:
            return []
        # Only a document can hold entries; a plain string parses to itself.
        return _values(parsed, name) if isinstance(parsed, (dict, list)) else []
    return []


def exit_code(job: Any) -> int:
    """The first non-zero exit code the job asks for (0 when it asks for none)."""
    for value in _values(job, EXIT_CODE_ENV):
        try:
            code = int(value)
        except ValueError:
            code = 1
        if code != 0:
            return code
    return 0


def duration(job: Any) -> float | None:
    """How long the job asks to run, in seconds (a Go-style duration such as `5s`, `2m`,
    `250ms`, or plain seconds); None when it does not ask."""
    for value in _values(job, DURATION_ENV):
        match = _DURATION.match(value)
        if match is not None:
            return float(match.group(1)) * _UNITS[match.group(2)]
    return None


def runs_for(job: Any, default: float) -> float:
    """The job's own duration when it asks for one, else the controller's."""
    asked = duration(job)
    return default if asked is None else asked


def fails(job: Any, fail: bool, fail_when: Any) -> bool:
    """Whether the controller fails this job: told to (`fail`, `fail_when(job)`), or the job
    asks for a non-zero exit code."""
    return fail or (fail_when is not None and bool(fail_when(job))) or exit_code(job) != 0
