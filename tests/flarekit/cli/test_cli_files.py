"""Hostile and broken files given to ``flarekit``: each ends in one ``error:`` line with its
documented exit code (2 for ``-f`` files, 4 for kubeconfigs), never the internal error 70."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from broken_files import broken
from cli_support import flarekit, one_error_line

from flarekit.cli import ExitCode

BOMB = "".join(
    f"p{i}: &p{i} [" + ",".join([f"*p{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n"
    for i in range(9)
)
DEEP = 10_000


def _files(tmp_path: Path) -> dict[str, bytes]:
    return {
        "alias-bomb.yaml": BOMB.encode(),
        "self-alias.yaml": b"name: demo\nworker_groups: &g [*g]\n",
        "deep.json": ('{"name": "demo", "x": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}").encode(),
        "deep.yaml": ("name: demo\nx: " + "[" * DEEP + "]" * DEEP + "\n").encode(),
        "latin-1.yaml": "name: demo\nnamespace: \xe9quipe\n".encode("latin-1"),
        "binary.yaml": bytes(range(256)) * 4,
        "huge-int.yaml": b"name: demo\nnum_workers: " + b"9" * 5000 + b"\n",
        "bad-date.yaml": b"name: demo\nwhen: 2024-02-30\n",
        "tabs.yaml": b"name: demo\n\tnum_workers: 2\n",
    }


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("alias-bomb.yaml", "uses aliases that expand it"),
        ("self-alias.yaml", "refers to itself"),
        ("deep.json", "nests deeper than 1000 levels"),
        ("deep.yaml", "nests deeper than 1000 levels"),
        ("latin-1.yaml", "is not valid UTF-8 (byte 0xe9 at line 2)"),
        ("binary.yaml", "is not valid"),
        ("huge-int.yaml", "has a value YAML cannot read"),
        ("bad-date.yaml", "has a value YAML cannot read"),
        ("tabs.yaml", "is not valid YAML or JSON"),
    ],
)
def test_hostile_config_files_are_usage_errors(tmp_path: Path, name: str, words: str) -> None:
    path = tmp_path / name
    path.write_bytes(_files(tmp_path)[name])
    result = flarekit(None, "cluster", "render", "-f", str(path))
    assert result.code == ExitCode.USAGE_ERROR, result
    line = one_error_line(result)
    assert words in line and str(path) in line
    assert len(line) < 400


def test_utf16_config_files_are_read(tmp_path: Path) -> None:
    path = tmp_path / "utf16.yaml"
    path.write_bytes("name: demo\nnum_workers: 3\n".encode("utf-16"))
    result = flarekit(None, "cluster", "render", "-f", str(path), "--output", "json")
    assert result.code == 0, result
    assert '"replicas": 3' in result.out


def test_a_nested_value_that_is_no_parameter_is_a_validation_error(tmp_path: Path) -> None:
    path = tmp_path / "nested.json"
    path.write_text('{"name": "demo", "num_workers": ' + "[" * 900 + "]" * 900 + "}")
    result = flarekit(None, "cluster", "render", "-f", str(path))
    assert result.code == ExitCode.VALIDATION_ERROR, result
    assert len(one_error_line(result)) < 400


def test_a_count_beyond_int32_is_a_validation_error_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("name: demo\nnum_workers: 99999999999999999999999\n")
    result = flarekit(None, "cluster", "render", "-f", str(path))
    assert result.code == ExitCode.VALIDATION_ERROR, result
    assert "num_workers" in one_error_line(result) and "2147483647" in result.err


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"- a\n- b\n", "must be a mapping, not a list"),
        (b"contexts: [1]\ncurrent-context: x\n", "contexts[0] must be a mapping"),
        (b"clusters: [\n", "is not valid YAML or JSON"),
        (BOMB.encode(), "uses aliases that expand it"),
        ("current-context: caf\xe9\n".encode("latin-1"), "is not UTF-8 text"),
    ],
)
def test_broken_kubeconfigs_end_with_exit_code_4(
    tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    result = flarekit(None, "cluster", "list", "--kubeconfig", str(path))
    assert result.code == ExitCode.NO_CLUSTER, result
    assert words in one_error_line(result)


@pytest.mark.parametrize(
    ("value", "words"),
    [("&a [*a]", "refers to itself"), ("[" * 2000 + "]" * 2000, "nests deeper than 1000 levels")],
)
def test_hostile_set_values_are_usage_errors(value: str, words: str) -> None:
    result = flarekit(None, "cluster", "render", "demo", "--set", f"worker_groups={value}")
    assert result.code == ExitCode.USAGE_ERROR, result
    assert words in one_error_line(result)


def test_set_values_are_still_read_as_yaml() -> None:
    result = flarekit(None, "cluster", "render", "demo", "--set", "num_workers=4")
    assert result.code == 0, result
    assert "replicas: 4" in result.out


#: A valid parameters file, which the test below breaks (broken_files).
VALID = (
    b"name: demo\nnamespace: team-a\nnum_workers: 2\nworker_memory_requests: 2Gi\n"
    b"worker_memory_limits: 4Gi\nlabels:\n  team: ml\n  tier: '1'\n"
    b"image: rayproject/ray:2.9.0\nworker_extended_resource_requests: {nvidia.com/gpu: 1}\n"
)
VALUES = [
    b"num_workers: 1e400", b"num_workers: -1", b"num_workers: .inf",
    b"worker_memory_requests: 1e1000", b"labels: [" + b"[" * 3000, b"labels: {a: {b: {c: 1}}}",
    b"image: '@sha256:zz'", b"namespace: 7", b"num_workers: &n [*n]",
    b"num_workers: 99999999999999999999999",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_no_broken_file_is_an_internal_error(tmp_path: Path, seed: int) -> None:
    """Mutated parameter files: each is rendered or refused with one error line and a
    documented exit code (2 unreadable, 3 invalid parameters), never 70."""
    rng = random.Random(seed)
    assert flarekit(None, "cluster", "render", "-f", _written(tmp_path, VALID)).code == 0
    codes: set[int] = set()
    for case in range(100):
        path = tmp_path / f"case-{case}.yaml"
        data = broken(VALID, rng, VALUES)
        path.write_bytes(data)
        result = flarekit(
            None, "cluster", "render", "-f", str(path), "--out-dir", str(tmp_path / "out")
        )
        assert result.code in {ExitCode.OK, ExitCode.USAGE_ERROR, ExitCode.VALIDATION_ERROR}, (
            data[:300],
            result,
        )
        if result.code:
            assert len(one_error_line(result)) < 1000, data[:300]
        codes.add(result.code)
    assert ExitCode.USAGE_ERROR in codes and ExitCode.VALIDATION_ERROR in codes


def _written(folder: Path, data: bytes) -> str:
    path = folder / "valid.yaml"
    path.write_bytes(data)
    return str(path)
