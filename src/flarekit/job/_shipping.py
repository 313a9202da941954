"""Local files and extra packages for a job's container, without building an image.

A data scientist's training function imports a helper module next to the notebook and needs a
package the image lacks. The Kubeflow SDK answers the second with ``packages_to_install``
(``pip install`` before the function runs); codeflare-sdk zips local files into the job. Here
both travel inside the job's own command: a short bootstrap (``python -c``) writes the files
into a fresh directory, ``pip install``s the packages into another (``--target``, so nothing
outside the container's temporary directory is touched), puts both first on ``PYTHONPATH``
(the files' directory is also ``FLAREKIT_FILES``) and then replaces itself with the job's
real command. No second object (ConfigMap, Secret) is created, so there is nothing to clean
up and nothing is left behind when a create fails; the price is a size limit: the files,
base64-encoded in the object, may take at most `MAX_FILES_BYTES` together (the API server
refuses objects above about 1.5 MiB). A failed ``pip install`` ends the container with pip's
exit code and says so in the log.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from flarekit._validation import ValidationReport

__all__ = ["MAX_FILES_BYTES", "check_files", "check_packages", "shipped_command"]

#: The most bytes of local files a job carries (before base64 encoding).
MAX_FILES_BYTES = 512 * 1024
_FILE_NAME = re.compile(r"[-._a-zA-Z0-9]+")

_BOOTSTRAP = """\
import base64, json, os, subprocess, sys, tempfile
spec, argv, paths = json.loads(sys.argv[1]), sys.argv[2:], []
if spec["files"]:
    folder = tempfile.mkdtemp(prefix="flarekit-files-")
    for name, data in spec["files"].items():
        with open(os.path.join(folder, name), "wb") as out:
            out.write(base64.b64decode(data))
    os.environ["FLAREKIT_FILES"] = folder
    paths.append(folder)
if spec["packages"]:
    target = tempfile.mkdtemp(prefix="flarekit-packages-")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-warn-script-location", "--target", target, *spec["packages"]]
    code = subprocess.call(pip)
    if code:
        print("flarekit: pip install", *spec["packages"], "failed with exit code", code,
              file=sys.stderr, flush=True)
        sys.exit(code)
    paths.append(target)
old = os.environ.get("PYTHONPATH")
os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
sys.stdout.flush()
if argv[0] in ("python", "python3"):
    argv[0] = sys.executable
os.execvp(argv[0], argv)
"""


def check_packages(report: ValidationReport, field: str, value: object) -> list[str]:
    """pip requirement strings (``"numpy==2.1"``, a wheel's path or URL), as a list."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        report.add(field, value, "expected a list of strings", "e.g. ['numpy==2.1', 'tqdm']")
        return []
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip() or item.strip().startswith("-"):
            report.add(
                f"{field}[{i}]", item, "not a requirement",
                "a requirement such as 'numpy>=2' (pip options go in env, e.g. PIP_INDEX_URL)",
            )  # fmt: skip
        else:
            out.append(item.strip())
    return out


def check_files(report: ValidationReport, field: str, value: object) -> dict[str, bytes]:
    """Local files by the name they get in the job (their base name), read now; at most
    `MAX_FILES_BYTES` together."""
    if value is None:
        return {}
    if isinstance(value, str | os.PathLike) or not isinstance(value, Sequence):
        report.add(field, value, "expected a list of paths", "e.g. ['helpers.py', 'config.yaml']")
        return {}
    files: dict[str, bytes] = {}
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, str | os.PathLike):
            report.add(where, item, "expected a path", "a local file's path")
            continue
        path = Path(item)
        if not path.is_file():
            what = "a directory" if path.is_dir() else "no such file"
            report.add(where, str(item), what, "the path of a local file (list each file)")
            continue
        if not _FILE_NAME.fullmatch(path.name) or path.name in files:
            problem = "a second file named so" if path.name in files else "an unusable file name"
            report.add(where, str(item), problem, "distinct names of letters, digits, '-._'")
            continue
        files[path.name] = path.read_bytes()
    total = sum(len(data) for data in files.values())
    if total > MAX_FILES_BYTES:
        report.add(
            field, f"{total} bytes", f"more than the {MAX_FILES_BYTES} bytes a job can carry",
            "smaller files; put data sets in a volume or object storage",
        )  # fmt: skip
    return files


def shipped_command(
    command: Sequence[str], packages: Sequence[str], files: dict[str, bytes]
) -> list[str]:
    """`command` behind the bootstrap that installs `packages` and writes `files` first
    (`command` itself when there is neither)."""
    if not packages and not files:
        return list(command)
    spec = {
        "packages": list(packages),
        "files": {name: base64.b64encode(data).decode("ascii") for name, data in files.items()},
    }
    return ["python", "-c", _BOOTSTRAP, json.dumps(spec, sort_keys=True), *command]
