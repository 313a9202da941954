"""Objects the API server would refuse for their size are refused when rendered, before any
YAML is written or request sent, naming the parameter that takes the room: annotations over
256 KiB in all, objects over what etcd stores (1.5 MiB). A large file that renders an object
the server accepts is rendered, with libyaml's emitter, to the same text as PyYAML's own.
(How long this takes is measured in ``benchmarks/bench_files.py``.)"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit._sizes import MAX_ANNOTATION_BYTES, MAX_OBJECT_BYTES, annotation_bytes
from flarekit._validation import ConfigError
from flarekit._yaml import dump_yaml
from flarekit.cli import ExitCode, main
from flarekit.cluster import ClusterConfiguration, WorkerGroup, to_dict, to_yaml
from flarekit.job import RayJob
from flarekit.job._trainjob import TrainJob


def _annotations(total: int) -> dict[str, str]:
    """Annotations of exactly `total` bytes, keys and values together (one is two-byte
    UTF-8: the server counts bytes, not characters)."""
    key = "note"
    value = "é" + "x" * (total - len(key) - 2)
    found = {key: value}
    assert annotation_bytes(found) == total
    return found


BUILDERS = {
    "cluster": lambda a: ClusterConfiguration("c", annotations=a),
    "rayjob": lambda a: RayJob("j", entrypoint="python x.py", cluster_name="c", annotations=a),
    "trainjob": lambda a: TrainJob("t", image="a/b:1", annotations=a),
}


@pytest.mark.parametrize("what", sorted(BUILDERS))
def test_annotations_beyond_256_kib_are_refused_at_the_byte(what: str) -> None:
    BUILDERS[what](_annotations(MAX_ANNOTATION_BYTES))
    with pytest.raises(ConfigError) as info:
        BUILDERS[what](_annotations(MAX_ANNOTATION_BYTES + 1))
    assert info.value.fields == ["annotations"]
    assert "the API server allows 256 KiB of annotations per object" in str(info.value)


def _environment(size: int) -> dict[str, str]:
    count = size // 1000 + 1
    return {f"VARIABLE_{i}": "v" * 990 for i in range(count)}


def test_an_environment_too_large_to_store_is_refused_before_rendering() -> None:
    config = ClusterConfiguration("big", envs=_environment(MAX_OBJECT_BYTES))
    with pytest.raises(ConfigError) as info:
        to_dict(config)
    assert info.value.fields == ["envs"]
    text = str(info.value)
    assert "the API server stores objects of at most 1.5 MiB" in text
    assert "of it from envs" in text


def test_an_object_grown_too_large_by_its_groups_is_refused_after_rendering() -> None:
    """Each group alone is small; the parameter check cannot know how they add up, the
    rendered object's size can."""
    template = {"spec": {"containers": [{"name": "ray-worker", "args": ["a" * 60_000]}]}}
    groups = [WorkerGroup(f"g{i}", pod_template=template) for i in range(30)]
    config = ClusterConfiguration("wide", worker_groups=groups)
    with pytest.raises(ConfigError) as info:
        to_yaml(config)
    assert info.value.fields == ["worker_groups"]


def test_an_object_just_within_the_bound_renders() -> None:
    config = ClusterConfiguration("fits", envs=_environment(MAX_OBJECT_BYTES // 3))
    rendered = to_dict(config)
    assert MAX_OBJECT_BYTES // 2 < len(json.dumps(rendered)) < MAX_OBJECT_BYTES


def test_libyamls_emitter_writes_what_pyyamls_writes() -> None:
    """The C emitter is used for speed only: same text as PyYAML's own for rendered objects,
    sorted or in order, with non-ASCII text and long lines."""
    config = ClusterConfiguration(
        "text",
        envs={"GREETING": "grüße " * 40, "EMPTY": "", "QUOTED": "'a' \"b\" #c: d"},
        annotations={"note": "line one\nline two", "long": "w " * 100},
        worker_groups=[WorkerGroup("gpus", extended_resource_requests={"nvidia.com/gpu": 1})],
    )
    data: Any = to_dict(config)

    class Python(yaml.SafeDumper):
        def ignore_aliases(self, data: object) -> bool:
            return True

    for sort_keys in (True, False):
        expected = yaml.dump(
            data, Dumper=Python, default_flow_style=False, sort_keys=sort_keys, allow_unicode=True
        )
        assert dump_yaml(data, sort_keys=sort_keys) == expected


def _render(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["cluster", "render", "-f", str(path)], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_command_line_refuses_a_50_mb_environment_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"name": "big", "envs": _environment(50_000_000)}))
    code, out, err = _render(path)
    assert code == ExitCode.VALIDATION_ERROR
    assert "envs=" in err and "stores objects of at most 1.5 MiB" in err
    assert out == ""


def test_the_command_line_renders_a_large_file_of_an_object_that_fits(tmp_path: Path) -> None:
    path = tmp_path / "large.yaml"
    comments = "# a long comment line in a parameter file\n" * 200_000
    variables = "".join(f"  V{i}: {'v' * 100}\n" for i in range(4000))
    path.write_text(f"name: large\n{comments}envs:\n{variables}")
    code, out, err = _render(path)
    assert code == ExitCode.OK, err
    rendered = yaml.safe_load(out)
    head = rendered["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in head["env"]}["V3999"] == "v" * 100
