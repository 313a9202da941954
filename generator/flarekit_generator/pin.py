"""Pin a new upstream release in the lock file, and say which fields it adds or removes.

When an operator ships a new release, ``flarekit-generate pin kuberay v1.8.0`` adds it beside
the releases already pinned (``--replace v1.7.0`` moves a pin instead). The files of the new
release are the ones the family's newest pinned release has (``--path`` names others); each
is read from the mirror if it has it, else downloaded, and its sha256 and size go into the lock
file, with the commit the tag points at (``--commit``, or GitHub's API). Nothing is written
unless every file was fetched. Then the models are regenerated and, for every kind, the fields
the new release has that the one before it did not (``+``) and the other way round (``-``) are
reported: what a user of the models, and the code built on them, must look at.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flarekit_generator import __version__
from flarekit_generator.catalog import release_key
from flarekit_generator.fetch import (
    DOWNLOAD_TIMEOUT_SECONDS,
    SchemaFetchError,
    _store,
    cached_path,
    fill_cache,
)
from flarekit_generator.field_table import schema_paths
from flarekit_generator.lockfile import (
    LOCK_COLUMNS,
    LockEntry,
    LockFileError,
    _parse_line,
    read_lock,
)
from flarekit_generator.source import load_crds

__all__ = [
    "API_URL_ENV",
    "DEFAULT_API_URL",
    "FieldChanges",
    "PinPlan",
    "field_changes",
    "plan_pin",
    "write_lock",
]

#: Environment variable overriding where tag commits are looked up.
API_URL_ENV = "FLAREKIT_GITHUB_API"
DEFAULT_API_URL = "https://api.github.com"
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass
class PinPlan:
    """The lock file before and after pinning one release, and which release it follows."""

    family: str
    tag: str
    previous_tag: str
    old_entries: list[LockEntry]
    new_entries: list[LockEntry]
    added: list[LockEntry]
    removed: list[LockEntry] = field(default_factory=list)

    def summary(self, lock: Path) -> str:
        moved = f", replacing {self.removed[0].tag}" if self.removed else ""
        lines = [f"pinned {self.family} {self.tag} in {lock}{moved}:"]
        lines += [f"  {e.path}  sha256:{e.sha256}  {e.size} bytes" for e in self.added]
        return "\n".join(lines)


def plan_pin(
    lock: Path,
    family: str,
    tag: str,
    *,
    cache_dir: Path,
    mirror: Path | None,
    base_url: str,
    replace: str | None = None,
    files: Sequence[str] = (),
    commit: str | None = None,
    api_url: str | None = None,
    allow_download: bool = True,
) -> PinPlan:
    """Fetch the new release's files into the cache and work out the new lock entries.

    Raises ``LockFileError`` for a family, tag or path that cannot be pinned and
    ``SchemaFetchError`` when a file or the tag's commit cannot be fetched; the lock file is
    not touched (``write_lock`` writes it).
    """
    entries = read_lock(lock)
    mine = [e for e in entries if e.family == family]
    if not mine:
        known = ", ".join(sorted({e.family for e in entries}))
        raise LockFileError(f"family {family!r} is not pinned in {lock}; pinned: {known}")
    tags = sorted({e.tag for e in mine}, key=release_key)
    if tag in tags:
        raise LockFileError(f"{family} {tag} is already pinned in {lock}")
    if replace is not None and replace not in tags:
        raise LockFileError(
            f"--replace {replace!r}: no such release of {family} in {lock}; pinned: "
            f"{', '.join(tags)}"
        )
    previous = replace or tags[-1]
    template = [e for e in mine if e.tag == previous]
    repo = template[0].repo
    wanted = list(files) or [e.path for e in template]
    for path in wanted:  # the lock file's own checks, before anything is fetched or written
        _parse_line("\t".join((family, repo, tag, "0" * 40, path, "0" * 64, "0")), "new release")
    # The release before is compared with the new one, so its files must be at hand too.
    fill_cache(template, cache_dir, mirror=mirror, base_url=base_url, allow_download=allow_download)
    if commit is None and not allow_download:
        raise SchemaFetchError("offline: pass --commit, the commit the tag points at")
    resolved = commit or _tag_commit(repo, tag, api_url or _api_url())
    if not _COMMIT.fullmatch(resolved):
        raise LockFileError(f"--commit must be 40 lowercase hex digits, got {resolved!r}")
    added: list[LockEntry] = []
    try:
        for path in wanted:
            added.append(
                _fetch_new(
                    family, repo, tag, resolved, path, cache_dir, mirror, base_url, allow_download
                )
            )
    except BaseException:
        for entry in added:  # a release pinned halfway leaves no files behind
            cached_path(entry, cache_dir).unlink(missing_ok=True)
        tag_dir = cache_dir / family / tag
        if tag_dir.is_dir() and not any(tag_dir.iterdir()):
            tag_dir.rmdir()
        raise
    removed = [e for e in mine if e.tag == replace] if replace else []
    kept = [e for e in entries if e not in removed]
    order = list(dict.fromkeys(e.family for e in entries))
    new_entries = sorted(
        kept + added, key=lambda e: (order.index(e.family), release_key(e.tag), e.path)
    )
    return PinPlan(family, tag, previous, entries, new_entries, added, removed)


def write_lock(lock: Path, entries: Sequence[LockEntry]) -> None:
    """Write ``entries`` as the lock file, atomically (a reader never sees half a file)."""
    lines = ["\t".join(LOCK_COLUMNS)]
    lines += [
        "\t".join((e.family, e.repo, e.tag, e.commit, e.path, e.sha256, str(e.size)))
        for e in entries
    ]
    handle, temp = tempfile.mkstemp(dir=lock.parent, prefix=f".{lock.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(temp, lock)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    read_lock(lock)  # what was written reads back


@dataclass(frozen=True)
class FieldChanges:
    """The fields of one kind that appeared (``added``) or disappeared (``removed``)."""

    kind: str  # "<apiVersion> <Kind>"
    added: tuple[str, ...]
    removed: tuple[str, ...]
    new_kind: bool = False
    gone_kind: bool = False

    def lines(self) -> list[str]:
        if self.new_kind:
            return [f"  {self.kind}: new kind ({len(self.added)} fields)"]
        if self.gone_kind:
            return [f"  {self.kind}: no longer served ({len(self.removed)} fields)"]
        if not self.added and not self.removed:
            return [f"  {self.kind}: no field changes"]
        out = [f"  {self.kind}: {len(self.added)} added, {len(self.removed)} removed"]
        out += [f"    + {path}" for path in self.added]
        out += [f"    - {path}" for path in self.removed]
        return out


def field_changes(
    plan: PinPlan,
    cache_dir: Path,
    field_table: dict[str, Any],
    core_paths: dict[tuple[str, str, str], set[str]],
) -> list[FieldChanges]:
    """Per kind of the family: the fields of the new release against the release before it.

    The new release's fields come from the regenerated field table; the previous release's
    too while it is still pinned, else from its CRD files (still in the cache), cut at the
    same embedded Kubernetes types, so that both sides are compared path for path.
    """
    new_id = f"{plan.family}@{plan.tag}"
    old_id = f"{plan.family}@{plan.previous_tag}"
    new = _paths_in_table(field_table, new_id)
    if old_id in field_table["releases"]:
        old = _paths_in_table(field_table, old_id)
    else:
        old = {}
        previous = [e for e in plan.old_entries if e.family == plan.family]
        previous = [e for e in previous if e.tag == plan.previous_tag]
        for crd in load_crds(previous, cache_dir):
            for version in crd.versions:
                if version.served:
                    stops = core_paths.get((crd.group, version.name, crd.kind), set())
                    key = f"{crd.group}/{version.name} {crd.kind}"
                    old[key] = set(schema_paths(version.raw_schema, stops))
    out: list[FieldChanges] = []
    for kind in sorted(set(new) | set(old)):
        before, after = old.get(kind), new.get(kind)
        out.append(
            FieldChanges(
                kind,
                tuple(sorted((after or set()) - (before or set()))),
                tuple(sorted((before or set()) - (after or set()))),
                new_kind=before is None,
                gone_kind=after is None,
            )
        )
    return out


def _paths_in_table(table: dict[str, Any], release: str) -> dict[str, set[str]]:
    bit = 1 << table["releases"].index(release)
    found: dict[str, set[str]] = {}
    for kind, paths in table["kinds"].items():
        having = {path for path, mask in paths.items() if mask & bit}
        if having:
            found[kind] = having
    return found


def _api_url() -> str:
    return os.environ.get(API_URL_ENV) or DEFAULT_API_URL


def _open(url: str, accept: str | None = None) -> Any:
    headers = {"User-Agent": f"flarekit-generator/{__version__}"}
    if accept:
        headers["Accept"] = accept
    request = urllib.request.Request(url, headers=headers)
    return urllib.request.build_opener().open(request, timeout=DOWNLOAD_TIMEOUT_SECONDS)


def _tag_commit(repo: str, tag: str, api_url: str) -> str:
    """The commit ``tag`` points at, from GitHub's API (tags of annotated tags are followed)."""
    url = f"{api_url.rstrip('/')}/repos/{repo}/commits/{tag}"
    try:
        with _open(url, accept="application/vnd.github.sha") as response:
            text: str = response.read(200).decode("ascii", "replace").strip()
    except (OSError, urllib.error.URLError) as error:
        raise SchemaFetchError(
            f"could not look up the commit of {repo} {tag} at {url}: {_reason(error)}; "
            "pass --commit (git ls-remote https://github.com/<repo> 'refs/tags/<tag>^{}')"
        ) from error
    if not _COMMIT.fullmatch(text):
        raise SchemaFetchError(f"{url} did not answer with a commit sha: {text[:60]!r}")
    return text


def _fetch_new(
    family: str,
    repo: str,
    tag: str,
    commit: str,
    path: str,
    cache_dir: Path,
    mirror: Path | None,
    base_url: str,
    allow_download: bool,
) -> LockEntry:
    """Read one file of the new release, pin what was read, and keep it in the cache."""
    unpinned = LockEntry(family, repo, tag, commit, path, "0" * 64, 0)
    candidate = mirror / family / tag / unpinned.file_name if mirror else None
    if candidate is not None and candidate.is_file():
        data = candidate.read_bytes()
    elif not allow_download:
        where = f"the mirror {mirror}" if mirror else "a mirror (none given)"
        raise SchemaFetchError(
            f"offline: {family}/{tag}/{unpinned.file_name} is not in {where}, and downloads "
            "are disabled"
        )
    else:
        url = unpinned.url(base_url)
        try:
            with _open(url) as response:
                data = response.read()
        except urllib.error.HTTPError as error:
            error.close()
            raise SchemaFetchError(
                f"could not download {family} {tag} {path} from {url}: HTTP {error.code} "
                f"{error.reason}; if the release moved or renamed the file, name the files "
                "with --path"
            ) from error
        except OSError as error:
            raise SchemaFetchError(
                f"could not download {family} {tag} {path} from {url}: {_reason(error)}"
            ) from error
    entry = LockEntry(family, repo, tag, commit, path, hashlib.sha256(data).hexdigest(), len(data))
    # Through the cache's own verified write, so the cache never holds a half-written file.
    where = str(candidate) if candidate is not None and candidate.is_file() else base_url
    _store(entry, io.BytesIO(data), cached_path(entry, cache_dir), where)
    return entry


def _reason(error: BaseException) -> str:
    return str(error.reason) if isinstance(error, urllib.error.URLError) else repr(error)
