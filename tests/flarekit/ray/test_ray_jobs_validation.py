"""Bad arguments are rejected before any request, with the field and what is accepted."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from fake_dashboard import FakeDashboard, Reply

from flarekit.ray import RayJobClient, RayJobValidationError


@pytest.mark.parametrize(
    ("kwargs", "field", "says"),
    [
        ({"entrypoint": ""}, "entrypoint", "non-empty"),
        ({"entrypoint": "   "}, "entrypoint", "non-empty"),
        ({"entrypoint": ["python", "x.py"]}, "entrypoint", "got list"),
        ({"submission_id": ""}, "submission_id", "letters, digits"),
        ({"submission_id": "a/b"}, "submission_id", "letters, digits"),
        ({"submission_id": "../api/version"}, "submission_id", "starting with a letter"),
        ({"submission_id": "-x"}, "submission_id", "not accepted"),
        ({"submission_id": "x" * 129}, "submission_id", "1-128 characters"),
        ({"submission_id": "with space"}, "submission_id", "not accepted"),
        ({"submission_id": 7}, "submission_id", "must be a string"),
        ({"runtime_env": ["pip"]}, "runtime_env", "must be a dict"),
        ({"runtime_env": "env.yaml"}, "runtime_env", "must be a dict"),
        ({"runtime_env": {1: "x"}}, "runtime_env", "keys must be strings"),
        ({"runtime_env": {"env_vars": {"A": object()}}}, "runtime_env", "JSON"),
        ({"runtime_env": {"env_vars": {"A": math.nan}}}, "runtime_env", "JSON"),
        (
            {"runtime_env": {"working_dir": "./no-such-dir"}},
            "runtime_env['working_dir']",
            "remote URI",
        ),
        ({"runtime_env": {"py_modules": "s3://b/m.zip"}}, "runtime_env['py_modules']", "a list"),
        ({"runtime_env": {"excludes": "data/"}}, "runtime_env['excludes']", "list of patterns"),
        (
            {"runtime_env": {"py_modules": ["s3://b/m.zip", "/home/me/mod"]}},
            "runtime_env['py_modules'][1]",
            "nor a local directory or .py file that exists",
        ),
        ({"metadata": {"owner": 1}}, "metadata['owner']", "must be a string"),
        ({"metadata": "owner=me"}, "metadata", "dict of strings"),
        ({"entrypoint_num_cpus": -1}, "entrypoint_num_cpus", ">= 0"),
        ({"entrypoint_num_cpus": "2"}, "entrypoint_num_cpus", "must be a number"),
        ({"entrypoint_num_cpus": True}, "entrypoint_num_cpus", "must be a number"),
        ({"entrypoint_num_gpus": math.inf}, "entrypoint_num_gpus", "finite"),
        ({"entrypoint_memory": 1.5}, "entrypoint_memory", "whole number of bytes"),
        ({"entrypoint_memory": -1}, "entrypoint_memory", "whole number of bytes"),
        ({"entrypoint_resources": {"GPU": -0.5}}, "entrypoint_resources['GPU']", ">= 0"),
        ({"entrypoint_resources": {"": 1}}, "entrypoint_resources", "non-empty strings"),
        ({"entrypoint_resources": [("GPU", 1)]}, "entrypoint_resources", "dict of resource"),
        ({"entrypoint_label_selector": {"zone": 1}}, "entrypoint_label_selector['zone']", "string"),
    ],
)
def test_submit_rejects_bad_arguments_without_sending(
    client: RayJobClient,
    dashboard: FakeDashboard,
    kwargs: dict[str, Any],
    field: str,
    says: str,
) -> None:
    arguments: dict[str, Any] = {"entrypoint": "python train.py", **kwargs}
    with pytest.raises(RayJobValidationError) as info:
        client.submit(**arguments)
    assert info.value.field == field
    assert says in str(info.value)
    assert str(info.value).startswith(f"{field}: ")
    assert dashboard.requests == []


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.get("a/b"),
        lambda c: c.status(""),
        lambda c: c.logs("../version"),
        lambda c: c.stop("a?b"),
        lambda c: c.delete("a#b"),
        lambda c: c.wait("x y", timeout=1),
        lambda c: c.follow_logs("%2e%2e"),
        lambda c: c.wait("ok", timeout=0),
        lambda c: c.wait("ok", timeout=1, poll=-1),
        lambda c: c.follow_logs("ok", poll=0),
        lambda c: c.follow_logs("ok", timeout=True),
    ],
)
def test_job_calls_reject_bad_ids_and_intervals_without_sending(
    client: RayJobClient, dashboard: FakeDashboard, call: Callable[[RayJobClient], object]
) -> None:
    dashboard.route("GET", "/api/jobs/ok", Reply(body={"status": "RUNNING"}))
    with pytest.raises(RayJobValidationError):
        call(client)
    assert dashboard.requests == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"address": "127.0.0.1:8265"}, "address"),
        ({"address": "ftp://127.0.0.1"}, "address"),
        ({"address": "http://user:pw@127.0.0.1:8265"}, "address"),
        ({"address": "http://127.0.0.1:8265/?x=1"}, "address"),
        ({"address": "http://127.0.0.1:99999"}, "address"),
        ({"address": "http://"}, "address"),
        ({"address": ""}, "address"),
        ({"token": ""}, "token"),
        ({"headers": {"Bad Name": "v"}}, "headers"),
        ({"headers": {"X-A": "v\r\nX-Injected: 1"}}, "headers['X-A']"),
        ({"timeout": 0}, "timeout"),
        ({"retries": -1}, "retries"),
        ({"retries": 1.5}, "retries"),
        ({"backoff": -1}, "backoff"),
        ({"address": "https://127.0.0.1:8265", "verify": "/no/such/ca.pem"}, "verify"),
        ({"address": "https://127.0.0.1:8265", "verify": 1}, "verify"),
    ],
)
def test_client_rejects_bad_configuration(kwargs: dict[str, Any], field: str) -> None:
    arguments: dict[str, Any] = {"address": "http://127.0.0.1:8265", **kwargs}
    with pytest.raises(RayJobValidationError) as info:
        RayJobClient(**arguments)
    assert info.value.field == field


def test_submit_sends_only_given_fields(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"job_id": "s", "submission_id": "s"}))
    client.submit("echo hi")
    assert dashboard.requests[-1].json() == {"entrypoint": "echo hi"}


def test_submit_sends_every_field(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"job_id": "s", "submission_id": "train-7"}))
    full: dict[str, Any] = {
        "submission_id": "train-7",
        "runtime_env": {"env_vars": {"EPOCHS": "3"}, "working_dir": "https://example.com/c.zip"},
        "metadata": {"owner": "me"},
        "entrypoint_num_cpus": 0.5,
        "entrypoint_num_gpus": 0,
        "entrypoint_memory": 2**30,
        "entrypoint_resources": {"accel": 1},
        "entrypoint_label_selector": {"zone": "a"},
    }
    assert client.submit("python train.py", **full) == "train-7"
    assert dashboard.requests[-1].json() == {"entrypoint": "python train.py", **full}
