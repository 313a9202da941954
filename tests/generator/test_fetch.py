"""Filling the schema cache: from the cache, a mirror, or a local HTTP server.

The HTTP server listens on 127.0.0.1 and serves a temporary directory laid out
like raw.githubusercontent.com (``<repo>/<tag>/<path>``), built at test time from
a few small pinned files of the shared schema mirror.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from http_support import serve_directory

from flarekit_generator.fetch import (
    FillReport,
    SchemaFetchError,
    SchemaIntegrityError,
    cached_path,
    fill_cache,
    run_schemas_command,
)
from flarekit_generator.lockfile import LOCK_COLUMNS, LockEntry, read_lock

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_SCHEMAS = REPO_ROOT.parent / "shared" / "schemas"
PROXY_VARIABLES = (
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
)


def _mirrored(entry: LockEntry) -> Path:
    path = SHARED_SCHEMAS / entry.family / entry.tag / entry.file_name
    assert path.is_file(), f"{path} is missing from the shared schema mirror"
    return path


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files_under(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


@pytest.fixture
def entries() -> list[LockEntry]:
    """The small kueue v0.10.6 CRDs (a few kB each): enough files, fast to serve."""
    small = [e for e in read_lock() if e.family == "kueue" and e.tag == "v0.10.6" and e.size < 8000]
    assert len(small) >= 4
    return small


@dataclass
class RawServer:
    """A local stand-in for raw.githubusercontent.com and the paths it was asked for."""

    root: Path
    base_url: str = ""
    requests: list[str] = field(default_factory=list)

    def served(self, entry: LockEntry) -> Path:
        return self.root / entry.repo / entry.tag / entry.path

    def request_path(self, entry: LockEntry) -> str:
        return f"/{entry.repo}/{entry.tag}/{entry.path}"


@pytest.fixture
def server(
    tmp_path: Path, entries: list[LockEntry], monkeypatch: pytest.MonkeyPatch
) -> Iterator[RawServer]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    raw = RawServer(root=tmp_path / "raw")
    for entry in entries:
        target = raw.served(entry)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_mirrored(entry), target)

    with serve_directory(raw.root, raw.requests) as url:
        raw.base_url = url
        yield raw


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _mirror_of(tmp_path: Path, entries: list[LockEntry]) -> Path:
    mirror = tmp_path / "mirror"
    for entry in entries:
        target = mirror / entry.family / entry.tag / entry.file_name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_mirrored(entry), target)
    return mirror


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_download_fills_the_cache(server: RawServer, entries: list[LockEntry], cache: Path) -> None:
    report = fill_cache(entries, cache, mirror=None, base_url=server.base_url)

    assert report == FillReport(cached=0, copied=0, downloaded=len(entries))
    assert sorted(server.requests) == sorted(server.request_path(e) for e in entries)
    for entry in entries:
        assert cached_path(entry, cache) == cache / "kueue" / "v0.10.6" / entry.file_name
        assert cached_path(entry, cache).read_bytes() == _mirrored(entry).read_bytes()
    assert _files_under(cache) == sorted(cached_path(e, cache) for e in entries)


def test_tampered_download_is_refused_and_not_cached(
    server: RawServer, entries: list[LockEntry], cache: Path
) -> None:
    entry = entries[0]
    tampered = bytearray(_mirrored(entry).read_bytes())
    tampered[len(tampered) // 2] ^= 0x01  # same size, one bit different
    server.served(entry).write_bytes(bytes(tampered))

    with pytest.raises(SchemaIntegrityError) as raised:
        fill_cache([entry], cache, mirror=None, base_url=server.base_url)

    message = str(raised.value)
    assert entry.path in message
    assert "kueue v0.10.6" in message
    assert entry.url(server.base_url) in message
    assert f"expected: {entry.sha256}" in message
    assert f"actual:   {_sha256(bytes(tampered))}" in message
    assert raised.value.actual_sha256 == _sha256(bytes(tampered))
    assert _files_under(cache) == []


def test_truncated_download_among_good_ones_leaves_only_good_files(
    server: RawServer, entries: list[LockEntry], cache: Path
) -> None:
    bad = entries[1]
    server.served(bad).write_bytes(_mirrored(bad).read_bytes()[:100])

    with pytest.raises(SchemaIntegrityError, match=r"actual: .* \(100 bytes\)"):
        fill_cache(entries, cache, mirror=None, base_url=server.base_url)

    assert not cached_path(bad, cache).exists()
    for path in _files_under(cache):  # whatever finished is verified; no temporary files
        assert not path.name.endswith(".part")
        assert path in {cached_path(e, cache) for e in entries if e != bad}


def test_missing_upstream_file_gives_a_clear_error(
    server: RawServer, entries: list[LockEntry], cache: Path
) -> None:
    entry = entries[0]
    server.served(entry).unlink()

    with pytest.raises(SchemaFetchError) as raised:
        fill_cache([entry], cache, mirror=None, base_url=server.base_url)

    message = str(raised.value)
    assert "HTTP 404" in message
    assert entry.url(server.base_url) in message
    assert f"kueue v0.10.6 {entry.path}" in message
    assert _files_under(cache) == []


def test_unreachable_server_gives_a_clear_error(entries: list[LockEntry], cache: Path) -> None:
    base_url = _closed_port_url()
    with pytest.raises(SchemaFetchError) as raised:
        fill_cache(entries[:1], cache, mirror=None, base_url=base_url)
    message = str(raised.value)
    assert f"from {entries[0].url(base_url)}" in message
    assert "SCHEMA_MIRROR" in message
    assert _files_under(cache) == []


def test_mirror_is_preferred_over_download(
    server: RawServer, entries: list[LockEntry], cache: Path, tmp_path: Path
) -> None:
    mirror = _mirror_of(tmp_path, entries[:2])

    report = fill_cache(entries, cache, mirror=mirror, base_url=server.base_url)

    assert report == FillReport(cached=0, copied=2, downloaded=len(entries) - 2)
    assert sorted(server.requests) == sorted(server.request_path(e) for e in entries[2:])
    for entry in entries:
        assert cached_path(entry, cache).read_bytes() == _mirrored(entry).read_bytes()


def test_tampered_mirror_file_is_refused_without_falling_back(
    server: RawServer, entries: list[LockEntry], cache: Path, tmp_path: Path
) -> None:
    entry = entries[0]
    mirror = _mirror_of(tmp_path, [entry])
    mirrored = mirror / entry.family / entry.tag / entry.file_name
    mirrored.write_bytes(mirrored.read_bytes() + b"# appended\n")

    with pytest.raises(SchemaIntegrityError) as raised:
        fill_cache([entry], cache, mirror=mirror, base_url=server.base_url)

    assert f"source:   {mirrored}" in str(raised.value)
    assert entry.sha256 in str(raised.value)
    assert server.requests == []
    assert _files_under(cache) == []


def test_cached_files_are_not_fetched_again(
    server: RawServer, entries: list[LockEntry], cache: Path
) -> None:
    fill_cache(entries, cache, mirror=None, base_url=server.base_url)
    server.requests.clear()

    report = fill_cache(entries, cache, mirror=None, base_url=server.base_url)

    assert report == FillReport(cached=len(entries), copied=0, downloaded=0)
    assert server.requests == []


@pytest.mark.parametrize("corrupt", [b"", b"kind: NotTheCRD\n"])
def test_corrupted_cached_file_is_fetched_again(
    server: RawServer, entries: list[LockEntry], cache: Path, corrupt: bytes
) -> None:
    fill_cache(entries, cache, mirror=None, base_url=server.base_url)
    server.requests.clear()
    victim = entries[-1]
    cached_path(victim, cache).write_bytes(corrupt)

    report = fill_cache(entries, cache, mirror=None, base_url=server.base_url)

    assert report == FillReport(cached=len(entries) - 1, copied=0, downloaded=1)
    assert server.requests == [server.request_path(victim)]
    assert cached_path(victim, cache).read_bytes() == _mirrored(victim).read_bytes()


def test_corrupted_cached_file_is_removed_even_when_it_cannot_be_refetched(
    entries: list[LockEntry], cache: Path
) -> None:
    entry = entries[0]
    cached_path(entry, cache).parent.mkdir(parents=True)
    cached_path(entry, cache).write_bytes(b"stale")

    with pytest.raises(SchemaFetchError, match="downloads are disabled"):
        fill_cache([entry], cache, mirror=None, allow_download=False)

    assert not cached_path(entry, cache).exists()


def test_offline_without_the_file_lists_what_is_missing(
    entries: list[LockEntry], cache: Path, tmp_path: Path
) -> None:
    mirror = _mirror_of(tmp_path, entries[:1])
    with pytest.raises(SchemaFetchError) as raised:
        fill_cache(entries, cache, mirror=mirror, allow_download=False)
    message = str(raised.value)
    assert f"{len(entries) - 1} pinned schema file(s)" in message
    assert str(mirror) in message
    for entry in entries[1:]:
        assert f"kueue/v0.10.6/{entry.file_name}" in message


def test_base_url_must_be_http(entries: list[LockEntry], cache: Path) -> None:
    with pytest.raises(ValueError, match=r"base_url must be an http:// or https:// URL"):
        fill_cache(entries, cache, mirror=None, base_url="file:///etc")


def test_whole_lock_from_the_shared_mirror(cache: Path) -> None:
    lock = read_lock()
    unreachable = _closed_port_url()

    first = fill_cache(lock, cache, mirror=SHARED_SCHEMAS, base_url=unreachable)
    second = fill_cache(lock, cache, mirror=SHARED_SCHEMAS, allow_download=False)

    assert first == FillReport(cached=0, copied=len(lock), downloaded=0)
    assert second == FillReport(cached=len(lock), copied=0, downloaded=0)
    assert len(_files_under(cache)) == len(lock)


def _use_small_lock(
    tmp_path: Path, entries: list[LockEntry], monkeypatch: pytest.MonkeyPatch
) -> Path:
    rows = [
        "\t".join([e.family, e.repo, e.tag, e.commit, e.path, e.sha256, str(e.size)])
        for e in entries
    ]
    lock = tmp_path / "small.lock.tsv"
    lock.write_text("\n".join(["\t".join(LOCK_COLUMNS), *rows]) + "\n", encoding="utf-8")
    cache = tmp_path / "command-cache"
    monkeypatch.setenv("FLAREKIT_SCHEMA_LOCK", str(lock))
    monkeypatch.setenv("FLAREKIT_SCHEMA_CACHE", str(cache))
    return cache


def test_schemas_command_reports_where_files_came_from(
    tmp_path: Path,
    entries: list[LockEntry],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = _use_small_lock(tmp_path, entries, monkeypatch)
    monkeypatch.setenv("SCHEMA_MIRROR", str(_mirror_of(tmp_path, entries[:2])))
    cached_path(entries[2], cache).parent.mkdir(parents=True)
    shutil.copyfile(_mirrored(entries[2]), cached_path(entries[2], cache))
    monkeypatch.setenv("FLAREKIT_SCHEMA_BASE_URL", _closed_port_url())

    assert run_schemas_command(offline=True) == 1
    assert "downloads are disabled" in capsys.readouterr().err

    monkeypatch.setenv("SCHEMA_MIRROR", str(SHARED_SCHEMAS))
    assert run_schemas_command(offline=True) == 0
    n = len(entries)
    assert capsys.readouterr().out == (
        f"{n} schema files verified (3 cached, {n - 3} from mirror, 0 downloaded)\n"
    )


def test_schemas_command_downloads_and_refuses_tampered_files(
    server: RawServer,
    tmp_path: Path,
    entries: list[LockEntry],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _use_small_lock(tmp_path, entries, monkeypatch)
    monkeypatch.setenv("SCHEMA_MIRROR", str(tmp_path / "no-mirror-here"))
    monkeypatch.setenv("FLAREKIT_SCHEMA_BASE_URL", server.base_url)
    good = server.served(entries[0]).read_bytes()
    server.served(entries[0]).write_bytes(good.replace(b"kueue", b"queue", 1))

    assert run_schemas_command() == 1
    err = capsys.readouterr().err
    assert "sha256 mismatch" in err
    assert entries[0].path in err

    server.served(entries[0]).write_bytes(good)
    assert run_schemas_command() == 0
    # Downloads still queued when the tampered file was refused were cancelled,
    # so how many files the first run cached depends on thread timing.
    summary = re.fullmatch(
        r"(\d+) schema files verified \((\d+) cached, 0 from mirror, (\d+) downloaded\)\n",
        capsys.readouterr().out,
    )
    assert summary is not None
    total, cached, downloaded = map(int, summary.groups())
    assert total == cached + downloaded == len(entries)
    assert downloaded >= 1


def test_schemas_command_rejects_a_bad_base_url(
    tmp_path: Path,
    entries: list[LockEntry],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _use_small_lock(tmp_path, entries, monkeypatch)
    monkeypatch.setenv("FLAREKIT_SCHEMA_BASE_URL", "ftp://127.0.0.1/")
    assert run_schemas_command() == 1
    assert "FLAREKIT_SCHEMA_BASE_URL must be an http:// or https:// URL" in capsys.readouterr().err
