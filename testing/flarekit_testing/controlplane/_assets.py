"""Where the control plane's programs are.

The programs are real Kubernetes binaries: etcd and kube-apiserver are required;
kube-controller-manager, kube-scheduler and kwok (fake nodes that run pods) are used when
present. They are looked for, in order:

1. the `binaries=` folder given to `ControlPlane`;
2. `FLAREKIT_CONTROLPLANE_ASSETS`, a folder;
3. `KUBEBUILDER_ASSETS`, a folder, as controller-runtime's envtest uses it (envtest ships
   etcd, kube-apiserver and kubectl only: the control plane then runs without controllers,
   scheduler and nodes, and says so);
4. the folder that `make control-plane` built last (`<cache>/go/controlplane.current`, where
   `<cache>` is `$FLAREKIT_CACHE_DIR`, `$XDG_CACHE_HOME/flarekit` or `~/.cache/flarekit`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REQUIRED = ("etcd", "kube-apiserver")
OPTIONAL = ("kube-controller-manager", "kube-scheduler", "kwok")
ENV = "FLAREKIT_CONTROLPLANE_ASSETS"
ENVTEST_ENV = "KUBEBUILDER_ASSETS"


class AssetsNotFound(RuntimeError):
    """The control plane's binaries are not where any of the documented places point."""


def cache_root() -> Path:
    explicit = os.environ.get("FLAREKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "flarekit"


def current_pointer() -> Path:
    """The file in which `make control-plane` records the bin folder it built last."""
    return cache_root() / "go" / "controlplane.current"


@dataclass(frozen=True)
class Assets:
    """The control plane's programs found in one folder (absent optional ones are None)."""

    folder: Path
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path | None
    kube_scheduler: Path | None
    kwok: Path | None

    @property
    def missing(self) -> list[str]:
        return [
            name
            for name, path in zip(
                OPTIONAL,
                (self.kube_controller_manager, self.kube_scheduler, self.kwok),
                strict=True,
            )
            if path is None
        ]


def _executable(folder: Path, name: str) -> Path | None:
    path = folder / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _in(folder: Path, source: str) -> Assets:
    absent = [name for name in REQUIRED if _executable(folder, name) is None]
    if absent:
        raise AssetsNotFound(
            f"{source} points at {folder}, which has no executable {' or '.join(absent)}"
        )
    etcd, apiserver = _executable(folder, "etcd"), _executable(folder, "kube-apiserver")
    assert etcd is not None and apiserver is not None
    return Assets(
        folder,
        etcd,
        apiserver,
        _executable(folder, "kube-controller-manager"),
        _executable(folder, "kube-scheduler"),
        _executable(folder, "kwok"),
    )


def find_assets(binaries: str | os.PathLike[str] | None = None) -> Assets:
    """The control plane's programs, from the first documented place that is set."""
    if binaries is not None:
        return _in(Path(binaries), "binaries=")
    for env in (ENV, ENVTEST_ENV):
        value = os.environ.get(env)
        if value:
            return _in(Path(value), env)
    pointer = current_pointer()
    if pointer.is_file():
        return _in(Path(pointer.read_text().strip()), str(pointer))
    raise AssetsNotFound(
        "no control plane binaries: build them with `make control-plane` (needs Go), or set "
        f"{ENV} (or {ENVTEST_ENV}, as for envtest) to a folder with etcd and kube-apiserver"
    )
