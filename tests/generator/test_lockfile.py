"""The lock file pins exactly the mirrored CRD files, and bad lock lines fail clearly."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from flarekit_generator import paths
from flarekit_generator.lockfile import LOCK_COLUMNS, LockEntry, LockFileError, read_lock

REPO_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = REPO_ROOT.parent / "shared" / "schemas" / "MANIFEST.tsv"

HEADER = "\t".join(LOCK_COLUMNS)
GOOD_ROW = "\t".join(
    [
        "kueue",
        "kubernetes-sigs/kueue",
        "v0.10.6",
        "a" * 40,
        "config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml",
        "b" * 64,
        "11361",
    ]
)


def _write_lock(tmp_path: Path, *rows: str, header: str = HEADER) -> Path:
    path = tmp_path / "crds.lock.tsv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _manifest_rows() -> list[dict[str, str]]:
    assert MANIFEST.is_file(), f"the schema mirror index {MANIFEST} is missing"
    with MANIFEST.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def test_lock_pins_exactly_the_manifest() -> None:
    expected = [
        LockEntry(
            family=row["family"],
            repo=row["repo"],
            tag=row["tag"],
            commit=row["commit"],
            path=row["path"],
            sha256=row["sha256"],
            size=int(row["bytes"]),
        )
        for row in _manifest_rows()
    ]
    assert read_lock(paths.REPO_ROOT / "schemas" / "crds.lock.tsv") == expected


def test_lock_covers_every_family_and_tag_in_the_manifest() -> None:
    pinned = {(entry.family, entry.tag) for entry in read_lock()}
    mirrored = {(row["family"], row["tag"]) for row in _manifest_rows()}
    assert pinned == mirrored
    assert {"kuberay", "kueue", "jobset", "appwrapper", "trainer"} <= {f for f, _ in pinned}


def test_default_path_comes_from_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAREKIT_SCHEMA_LOCK", str(_write_lock(tmp_path, GOOD_ROW)))
    [entry] = read_lock()
    assert entry.family == "kueue"
    assert entry.size == 11361


def test_entry_file_name_and_url(tmp_path: Path) -> None:
    [entry] = read_lock(_write_lock(tmp_path, GOOD_ROW))
    assert entry.file_name == "kueue.x-k8s.io_cohorts.yaml"
    expected = (
        "http://127.0.0.1:8080/kubernetes-sigs/kueue/v0.10.6/"
        "config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml"
    )
    assert entry.url("http://127.0.0.1:8080/") == expected
    assert entry.url("https://raw.githubusercontent.com").startswith(
        "https://raw.githubusercontent.com/kubernetes-sigs/kueue/v0.10.6/config/"
    )


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    assert len(read_lock(_write_lock(tmp_path, "", GOOD_ROW, ""))) == 1


def _replace(column: str, value: str) -> str:
    fields = GOOD_ROW.split("\t")
    fields[LOCK_COLUMNS.index(column)] = value
    return "\t".join(fields)


@pytest.mark.parametrize(
    ("column", "value", "allowed"),
    [
        ("sha256", "B" * 64, "64 lowercase hex digits"),
        ("sha256", "b" * 63, "64 lowercase hex digits"),
        ("sha256", "g" * 64, "64 lowercase hex digits"),
        ("commit", "abc", "40 lowercase hex digits"),
        ("repo", "kueue", "'<owner>/<name>'"),
        ("family", "", "a name of letters"),
        ("tag", "v1/../../x", "a tag of letters"),
        ("path", "../etc/passwd", "relative file path"),
        ("path", "/abs/file.yaml", "relative file path"),
        ("bytes", "-5", "non-negative whole number"),
        ("bytes", "12kB", "non-negative whole number"),
    ],
)
def test_bad_column_names_line_column_and_allowed_values(
    tmp_path: Path, column: str, value: str, allowed: str
) -> None:
    lock = _write_lock(tmp_path, GOOD_ROW, _replace(column, value))
    with pytest.raises(LockFileError) as raised:
        read_lock(lock)
    message = str(raised.value)
    assert f"{lock} line 3" in message
    assert repr(column) in message
    assert allowed in message
    assert repr(value) in message


def test_wrong_column_count(tmp_path: Path) -> None:
    lock = _write_lock(tmp_path, GOOD_ROW + "\textra")
    with pytest.raises(LockFileError, match=r"line 2: expected 7 tab-separated columns .* got 8"):
        read_lock(lock)


def test_wrong_header(tmp_path: Path) -> None:
    lock = _write_lock(tmp_path, GOOD_ROW, header="family\trepo\ttag\tpath\tsha256")
    with pytest.raises(LockFileError, match=r"line 1: header must be .*family repo tag commit"):
        read_lock(lock)


def test_header_only(tmp_path: Path) -> None:
    with pytest.raises(LockFileError, match="no files are pinned"):
        read_lock(_write_lock(tmp_path))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LockFileError, match="lock file not found"):
        read_lock(tmp_path / "absent.tsv")


def test_duplicate_cache_location_is_refused(tmp_path: Path) -> None:
    other_path = _replace("path", "elsewhere/kueue.x-k8s.io_cohorts.yaml")
    lock = _write_lock(tmp_path, GOOD_ROW, other_path)
    with pytest.raises(LockFileError, match=r"line 3: kueue/v0.10.6/.*already pinned on line 2"):
        read_lock(lock)
