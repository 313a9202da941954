"""How the simulated controllers read a job's own duration and exit code from its spec."""

from __future__ import annotations

from flarekit_testing.operators._outcome import duration, exit_code


def _container(**env: str) -> dict[str, object]:
    return {"name": "node", "env": [{"name": k, "value": v} for k, v in env.items()]}


def test_the_variables_are_read_from_env_entries_and_runtime_environments() -> None:
    job = {"spec": {"containers": [_container(FLAREKIT_SIMULATED_DURATION="250ms")]}}
    assert duration(job) == 0.25 and exit_code(job) == 0
    ray = {"spec": {"runtimeEnvYAML": "env_vars:\n  FLAREKIT_SIMULATED_EXIT_CODE: '3'\n"}}
    assert exit_code(ray) == 3 and duration(ray) is None


def test_a_string_that_only_names_a_variable_is_no_setting() -> None:
    """The variable's name on its own (an env entry's `name`, a command line) parses as a
    plain YAML string: it is not read as a setting, and not read again and again."""
    job = {
        "spec": {
            "containers": [_container(FLAREKIT_SIMULATED_DURATION="1s")],
            "command": ["echo", "FLAREKIT_SIMULATED_EXIT_CODE"],
        }
    }
    assert duration(job) == 1.0
    assert exit_code(job) == 0
