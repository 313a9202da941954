"""docs/migrating-from-codeflare.md says what the code does: its flarekit default sizes are
the configuration's defaults (every size default is listed), the default image is named, the
example that gives codeflare-sdk's sizes runs, and the README links the note."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from flarekit.cluster import ClusterConfiguration, WorkerGroup
from flarekit.cluster._defaults import DEFAULT_IMAGE_REPOSITORY, DEFAULT_RAY_VERSION

ROOT = Path(__file__).resolve().parents[1]
NOTE = ROOT / "docs" / "migrating-from-codeflare.md"
SIZE = re.compile(r"(cpu|memory)_(requests|limits)$|^num_workers$")


def _section(title: str) -> str:
    text = NOTE.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _size_rows() -> dict[str, tuple[str, str]]:
    """`{parameter: (flarekit, codeflare-sdk)}` from the table of default sizes."""
    rows: dict[str, tuple[str, str]] = {}
    for line in _section("Default sizes").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        rows[cells[0].split("`")[1]] = (cells[1], cells[2])
    return rows


def _defaults(cls: type, prefix: str = "") -> dict[str, str]:
    return {
        prefix + f.name: str(f.default)
        for f in dataclasses.fields(cls)
        if SIZE.search(f.name) and f.default is not dataclasses.MISSING
    }


def test_the_flarekit_column_is_the_code() -> None:
    rows = _size_rows()
    code = {**_defaults(ClusterConfiguration), **_defaults(WorkerGroup, "WorkerGroup.")}
    assert len(code) == 14
    assert {name: flarekit for name, (flarekit, _) in rows.items()} == code


def test_the_default_image_is_named() -> None:
    text = _section("Default sizes")
    assert f"`{DEFAULT_IMAGE_REPOSITORY}:<ray_version>`" in text
    assert f"`ray_version` {DEFAULT_RAY_VERSION}" in text


def test_the_example_gives_codeflare_sizes() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section("Getting codeflare-sdk's sizes"), re.S)
    assert len(blocks) == 1
    scope: dict[str, object] = {}
    exec(compile(blocks[0], str(NOTE), "exec"), scope)  # offline: builds a configuration
    config = scope["config"]
    assert isinstance(config, ClusterConfiguration)
    codeflare = {name: cf for name, (_, cf) in _size_rows().items()}
    assert str(config.head_cpu_requests) == codeflare["head_cpu_requests"]
    assert config.head_memory_requests == codeflare["head_memory_requests"] + "G"
    assert config.worker_memory_requests == codeflare["worker_memory_requests"] + "G"
    assert config.worker_groups[0].memory_limits == codeflare["WorkerGroup.memory_limits"] + "G"


def test_the_readme_links_the_note() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/migrating-from-codeflare.md)" in readme
