"""``flarekit-generate``: the default command, package names, families, and what it refuses.

Generation here reads the repository's verified schema cache (``make schemas``), one family
at a time, so each run takes seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flarekit_generator import __version__, paths
from flarekit_generator.__main__ import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"flarekit-generator {__version__}\n"


def test_generate_is_the_default_command_and_writes_the_named_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--package", "mysdk._crds", "--families", "kuberay", "--out", str(tmp_path)]) == 0
    package = tmp_path / "mysdk" / "_crds"
    assert capsys.readouterr().out.startswith(f"generated {package}: ")
    init = (package / "__init__.py").read_text(encoding="utf-8")
    assert "kuberay, vendored by flarekit-generator" in init
    assert '"kuberay": ("v1.1.1", "v1.4.2", "v1.7.0")' in init
    assert not (tmp_path / "mysdk" / "__init__.py").exists()
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "flarekit_models" not in text, path
        assert "import mysdk" not in text and "from mysdk" not in text, path
    # A second run replaces the package it wrote itself, and leaves nothing else behind.
    assert main(["--package", "mysdk._crds", "--families", "kuberay", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mysdk"]
    assert sorted(p.name for p in (tmp_path / "mysdk").iterdir()) == ["_crds"]


def test_a_directory_it_did_not_write_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = tmp_path / "mysdk" / "_crds"
    own.mkdir(parents=True)
    (own / "__init__.py").write_text('"""The SDK\'s own code."""\n', encoding="utf-8")
    (own / "client.py").write_text("X = 1\n", encoding="utf-8")

    assert main(["--package", "mysdk._crds", "--families", "kueue", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{own} exists and was not written by flarekit-generator" in err
    assert sorted(p.name for p in own.iterdir()) == ["__init__.py", "client.py"]
    assert sorted(p.name for p in (tmp_path / "mysdk").iterdir()) == ["_crds"]


@pytest.mark.parametrize(
    ("package", "bad"),
    [("my-sdk.crds", "'my-sdk'"), ("mysdk.class", "'class'"), ("mysdk..crds", "''")],
)
def test_a_package_name_that_is_not_a_module_name_is_refused(
    package: str, bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--package", package, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"--package {package!r}: {bad} is not a Python identifier" in err
    assert "such as 'flarekit_models' or 'mysdk._crds'" in err
    assert list(tmp_path.iterdir()) == []


def test_unknown_families_are_refused_with_the_pinned_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--families", "kuberay,volcano", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "--families: volcano not pinned in" in err
    assert "allowed: appwrapper, appwrapper-mcad, jobset, kuberay, kueue, trainer" in err
    assert list(tmp_path.iterdir()) == []


def test_outside_a_repository_the_output_directory_must_be_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(paths, "in_repository", lambda: False)
    monkeypatch.delenv(paths.OUTPUT_ENV, raising=False)
    assert paths.lock_file() == paths.PACKAGE_DIR / "crds.lock.tsv"  # the copy a wheel ships
    assert main(["--families", "kuberay"]) == 1
    assert "no output directory: pass --out DIR" in capsys.readouterr().err


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_second_run_with_nothing_changed_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--package", "mysdk._crds", "--families", "jobset", "--out", str(tmp_path)]
    assert main(args) == 0
    package = tmp_path / "mysdk" / "_crds"
    assert capsys.readouterr().out.startswith(f"generated {package}: ")
    before = _snapshot(tmp_path)
    assert main(args) == 0
    assert capsys.readouterr().out == (
        f"{package} is up to date: nothing written (--force regenerates it)\n"
    )
    assert _snapshot(tmp_path) == before
    # Another family selection is another package: generated again.
    assert main([*args[:3], "jobset,kuberay", *args[4:]]) == 0
    assert capsys.readouterr().out.startswith(f"generated {package}: ")


@pytest.mark.parametrize("change", ["edit", "remove", "add", "force"])
def test_a_package_changed_on_disk_or_forced_is_generated_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    args = ["--package", "mysdk._crds", "--families", "jobset", "--out", str(tmp_path)]
    assert main(args) == 0
    package = tmp_path / "mysdk" / "_crds"
    written = _snapshot(package)
    some = next(p for p in sorted(package.rglob("*.py")) if p.name != "__init__.py")
    if change == "edit":
        some.write_text(some.read_text(encoding="utf-8") + "\nX = 1\n", encoding="utf-8")
    elif change == "remove":
        some.unlink()
    elif change == "add":
        (package / "extra.py").write_text("X = 1\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*args, "--force"] if change == "force" else args) == 0
    assert capsys.readouterr().out.startswith(f"generated {package}: ")
    assert {k: v[1] for k, v in _snapshot(package).items()} == {k: v[1] for k, v in written.items()}


def test_the_stamp_covers_the_generator_code_the_lock_and_the_runtime(tmp_path: Path) -> None:
    from flarekit_generator import stamp

    lock = tmp_path / "crds.lock.tsv"
    lock.write_bytes(paths.lock_file().read_bytes())
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    for module in paths.runtime_dir().glob("*.py"):
        (runtime / module.name).write_bytes(module.read_bytes())
    first = stamp.input_digest(lock, runtime, "flarekit_models", None)
    assert stamp.input_digest(lock, runtime, "flarekit_models", None) == first
    assert stamp.input_digest(lock, runtime, "mysdk._crds", None) != first
    assert stamp.input_digest(lock, runtime, "flarekit_models", ["kueue"]) != first
    (runtime / "_types.py").write_text("# changed\n", encoding="utf-8")
    changed_runtime = stamp.input_digest(lock, runtime, "flarekit_models", None)
    assert changed_runtime != first
    lock.write_bytes(lock.read_bytes() + b"\n")
    assert stamp.input_digest(lock, runtime, "flarekit_models", None) != changed_runtime
