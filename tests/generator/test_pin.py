"""The CRD-bump workflow: ``flarekit-generate pin FAMILY TAG [--replace OLD]``.

A local HTTP server on 127.0.0.1 stands in for GitHub: it serves a hand-made "new release" of
KubeRay (v1.7.0's CRD files, edited: RayCluster gains ``spec.warmPoolSize`` and loses
``spec.managedBy``; RayService loses its v1alpha1 version) under raw.githubusercontent.com's
layout, and answers the API's "which commit is this tag" question. The lock file is a copy of
the kuberay lines of the real one; the CRD files already pinned come from the shared mirror.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from http_support import serve_directory

from flarekit_generator import paths
from flarekit_generator.__main__ import main
from flarekit_generator.fetch import cached_path
from flarekit_generator.lockfile import LOCK_COLUMNS, read_lock

REPO = "ray-project/kuberay"
CRDS = "ray-operator/config/crd/bases"
COMMITS = {"v1.8.0": "8" * 40, "v1.8.1": "81" * 20}
NAMES = (
    "ray.io_rayclusters.yaml",
    "ray.io_raycronjobs.yaml",
    "ray.io_rayjobs.yaml",
    "ray.io_rayservices.yaml",
)


@dataclass
class GitHub:
    """What the local server serves, and the paths it was asked for."""

    root: Path
    url: str = ""
    requests: list[str] = field(default_factory=list)

    def publish(self, tag: str, name: str, doc: dict[str, Any] | bytes) -> bytes:
        data = doc if isinstance(doc, bytes) else _dump(doc)
        target = self.root / REPO / tag / CRDS / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return data


def _load(data: bytes) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return doc


def _dump(doc: dict[str, Any]) -> bytes:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(doc, Dumper=dumper, sort_keys=False).encode()


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHub]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    served = GitHub(tmp_path / "github")
    for tag, sha in COMMITS.items():
        commit = served.root / "repos" / REPO / "commits" / tag
        commit.parent.mkdir(parents=True, exist_ok=True)
        commit.write_text(sha, encoding="ascii")

    with serve_directory(served.root, served.requests) as url:
        served.url = url
        monkeypatch.setenv("FLAREKIT_SCHEMA_BASE_URL", url)
        monkeypatch.setenv("FLAREKIT_GITHUB_API", url)
        yield served


@dataclass
class Workspace:
    lock: Path
    cache: Path
    out: Path

    def args(self) -> list[str]:
        return ["--lock", str(self.lock), "--cache", str(self.cache), "--out", str(self.out)]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A lock file with the kuberay lines of the real one, and a cache of those files."""
    kuberay = [e for e in read_lock() if e.family == "kuberay"]
    lock = tmp_path / "crds.lock.tsv"
    rows = [
        "\t".join((e.family, e.repo, e.tag, e.commit, e.path, e.sha256, str(e.size)))
        for e in kuberay
    ]
    lock.write_text("\n".join(["\t".join(LOCK_COLUMNS), *rows]) + "\n", encoding="utf-8")
    cache = tmp_path / "cache"
    repo_cache = paths.cache_dir()
    for entry in kuberay:  # the verified files and their parsed form, as make schemas left them
        for source, target in (
            (cached_path(entry, repo_cache), cached_path(entry, cache)),
            (
                repo_cache / "parsed" / f"{entry.sha256}.json",
                cache / "parsed" / f"{entry.sha256}.json",
            ),
        ):
            if source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
    return Workspace(lock, cache, tmp_path / "out")


def _v170(name: str) -> dict[str, Any]:
    entry = next(e for e in read_lock() if e.tag == "v1.7.0" and e.file_name == name)
    return _load(cached_path(entry, paths.cache_dir()).read_bytes())


def _spec(doc: dict[str, Any], version: str) -> dict[str, Any]:
    served = next(v for v in doc["spec"]["versions"] if v["name"] == version)
    spec: dict[str, Any] = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


@pytest.fixture(scope="module")
def v180() -> dict[str, bytes]:
    """v1.8.0's files: v1.7.0's with RayCluster's spec.warmPoolSize added and spec.managedBy
    removed, and RayService's v1alpha1 no longer served (made once: the files are large)."""
    files: dict[str, bytes] = {}
    for name in NAMES:
        doc = _v170(name)
        if name == "ray.io_rayclusters.yaml":
            spec = _spec(doc, "v1")
            del spec["properties"]["managedBy"]
            spec["properties"]["warmPoolSize"] = {"type": "integer", "format": "int32"}
        if name == "ray.io_rayservices.yaml":
            doc["spec"]["versions"] = [
                v for v in doc["spec"]["versions"] if v["name"] != "v1alpha1"
            ]
        files[name] = _dump(doc)
    return files


def publish(github: GitHub, tag: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: github.publish(tag, name, data) for name, data in files.items()}


def _fields(out: Path) -> dict[str, Any]:
    data = json.loads(
        gzip.decompress((out / "flarekit_models" / "_data" / "fields.json.gz").read_bytes())
    )
    table: dict[str, Any] = data["data"]
    return table


def test_pinning_a_new_release_updates_the_lock_regenerates_and_reports_fields(
    github: GitHub, workspace: Workspace, v180: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    published = publish(github, "v1.8.0", v180)
    before = read_lock(workspace.lock)

    assert main(["pin", "kuberay", "v1.8.0", *workspace.args()]) == 0

    after = read_lock(workspace.lock)
    added = [e for e in after if e.tag == "v1.8.0"]
    assert after[: len(before)] == before  # older releases stay pinned, in order
    assert [(e.file_name, e.sha256, e.size, e.commit, e.repo) for e in added] == [
        (name, hashlib.sha256(data).hexdigest(), len(data), COMMITS["v1.8.0"], REPO)
        for name, data in sorted(published.items())
    ]
    assert f"/repos/{REPO}/commits/v1.8.0" in github.requests
    out = capsys.readouterr().out
    assert f"pinned kuberay v1.8.0 in {workspace.lock}:" in out
    assert "fields of kuberay v1.8.0 against v1.7.0:" in out
    assert (
        "  ray.io/v1 RayCluster: 1 added, 1 removed\n    + spec.warmPoolSize\n    - spec.managedBy\n"
        in out
    )
    assert "  ray.io/v1 RayJob: no field changes\n" in out
    assert "  ray.io/v1alpha1 RayService: no longer served (" in out
    # The regenerated models know which release has the new field.
    table = _fields(workspace.out)
    kind = table["kinds"]["ray.io/v1 RayCluster"]
    index = table["releases"].index("kuberay@v1.8.0")
    assert kind["spec.warmPoolSize"] == 1 << index
    assert not kind["spec.managedBy"] & 1 << index
    model = (workspace.out / "flarekit_models" / "ray" / "v1" / "_ray_cluster_types.py").read_text()
    assert 'warm_pool_size: Int32 | None = Field(None, alias="warmPoolSize")' in model


def test_moving_a_release_replaces_its_lines_and_compares_with_it(
    github: GitHub, workspace: Workspace, v180: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    publish(github, "v1.8.0", v180)
    assert main(["pin", "kuberay", "v1.8.0", "--no-generate", *workspace.args()]) == 0
    # v1.8.1: v1.8.0 again, without the field v1.8.0 added.
    doc = _load(v180["ray.io_rayclusters.yaml"])
    del _spec(doc, "v1")["properties"]["warmPoolSize"]
    publish(github, "v1.8.1", {**v180, "ray.io_rayclusters.yaml": _dump(doc)})
    capsys.readouterr()

    assert main(["pin", "kuberay", "v1.8.1", "--replace", "v1.8.0", *workspace.args()]) == 0

    tags = sorted({e.tag for e in read_lock(workspace.lock)})
    assert tags == ["v1.1.1", "v1.4.2", "v1.7.0", "v1.8.1"]
    out = capsys.readouterr().out
    assert f"pinned kuberay v1.8.1 in {workspace.lock}, replacing v1.8.0:" in out
    assert "  ray.io/v1 RayCluster: 0 added, 1 removed\n    - spec.warmPoolSize\n" in out
    assert "kuberay@v1.8.0" not in _fields(workspace.out)["releases"]


def test_a_release_that_cannot_be_fetched_changes_nothing(
    github: GitHub, workspace: Workspace, v180: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    publish(github, "v1.8.0", {k: v for k, v in v180.items() if k != "ray.io_rayservices.yaml"})
    lock_before = workspace.lock.read_bytes()
    cache_before = sorted(p for p in workspace.cache.rglob("*"))

    assert main(["pin", "kuberay", "v1.8.0", *workspace.args()]) == 1

    err = capsys.readouterr().err
    assert (
        "could not download kuberay v1.8.0 ray-operator/config/crd/bases/ray.io_rayservices.yaml"
        in err
    )
    assert "HTTP 404" in err and "--path" in err
    assert workspace.lock.read_bytes() == lock_before
    assert sorted(p for p in workspace.cache.rglob("*")) == cache_before
    assert not workspace.out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pin", "kuberay", "v1.7.0"], "kuberay v1.7.0 is already pinned in"),
        (["pin", "volcano", "v1.0.0"], "family 'volcano' is not pinned in"),
        (
            ["pin", "kuberay", "v1.8.0", "--replace", "v0.9.0"],
            "--replace 'v0.9.0': no such release of kuberay",
        ),
        (["pin", "kuberay", "../v1.8.0"], "column 'tag' must be a tag of letters, digits"),
        (["pin", "kuberay", "v1.8.0", "--path", "../x.yaml"], "column 'path' must be a relative"),
    ],
)
def test_what_cannot_be_pinned_is_refused_before_any_request(
    argv: list[str],
    message: str,
    github: GitHub,
    workspace: Workspace,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lock_before = workspace.lock.read_bytes()
    assert main([*argv, *workspace.args()]) == 1
    assert message in capsys.readouterr().err
    assert workspace.lock.read_bytes() == lock_before
    assert github.requests == []
