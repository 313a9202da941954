"""Zipping a job's local working_dir and py_modules: what goes in, the content-hash name,
the excludes and the size limit (checked before any request). The uploads themselves run
against a real Ray head in test_ray_jobs_integration.py."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from flarekit.ray import RayJobClient, RayJobValidationError
from flarekit.ray._jobs_upload import local_packages, package


def _tree(root: Path) -> Path:
    files = {
        "main.py": "print('main')\n",
        "pkg/__init__.py": "",
        "pkg/util.py": "X = 1\n",
        "data/big.bin": "0" * 1000,
        "model.ckpt": "weights",
        "build/out.txt": "built",
        "sub/build/keep.txt": "kept: the anchored pattern is for the top only",
        ".git/HEAD": "ref: refs/heads/main\n",
        "pkg/__pycache__/util.cpython-312.pyc": "bytecode",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _names(data: bytes) -> list[str]:
    return sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())


def test_working_dir_is_zipped_without_the_excludes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "project")
    found = package(root, field="f", excludes=["data/", "*.ckpt", "/build"])
    assert _names(found.data) == ["main.py", "pkg/__init__.py", "pkg/util.py",
                                  "sub/build/keep.txt"]  # fmt: skip
    assert found.uri == f"gcs://{found.name}" and found.name.startswith("_ray_pkg_")
    assert found.name.endswith(".zip") and len(found.name) == len("_ray_pkg_.zip") + 40


def test_the_name_follows_the_content_not_the_clock(tmp_path: Path) -> None:
    root = _tree(tmp_path / "project")
    first = package(root, field="f")
    os.utime(root / "main.py", (1_000_000, 1_000_000))
    again = package(root, field="f")
    assert again.name == first.name and again.data == first.data
    (root / "main.py").write_text("print('changed')\n")
    assert package(root, field="f").name != first.name


def test_py_modules_keep_their_own_name_at_the_top(tmp_path: Path) -> None:
    root = _tree(tmp_path / "project")
    env = {"py_modules": [str(root / "pkg"), str(root / "main.py"), "s3://bucket/m.zip"]}
    prepared = local_packages(env)
    modules = prepared["py_modules"]
    assert isinstance(modules, list)
    assert _names(modules[0].data) == ["pkg/__init__.py", "pkg/util.py"]
    assert _names(modules[1].data) == ["main.py"]
    assert modules[2] == "s3://bucket/m.zip"


def test_too_large_is_refused_before_any_request(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    (root / "noise.bin").write_bytes(os.urandom(64 * 1024))
    # nothing listens on port 9: any request would fail with RayDashboardUnavailable instead
    client = RayJobClient("http://127.0.0.1:9", retries=0, max_upload_bytes=32 * 1024)
    with pytest.raises(RayJobValidationError) as info:
        client.submit("python main.py", runtime_env={"working_dir": str(root)})
    assert info.value.field == "runtime_env['working_dir']"
    assert "KiB zipped, more than the 32.0 KiB a job may upload" in str(info.value)
    assert "excludes" in str(info.value)
