"""The programs local pods find on their PATH: this Python, and torchrun and ray run by it.

Why: a pod's command says ``python``, ``torchrun`` or ``ray``, meaning the ones in its
image. Here they mean this interpreter (whose packages the user installed: flarekit, Ray,
the job's own) with PyTorch from the cached virtualenv added at the end of its path
(`_torch`): a folder of small wrappers goes first on the pod's PATH (so that ``torchrun
--no-python python``, Ray's job entrypoints and scripts that call ``python`` all find them),
and a ``sitecustomize`` on its PYTHONPATH appends torch's site-packages (then runs any other
``sitecustomize`` the environment has).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

from flarekit_testing.local import _torch

__all__ = ["Tools"]

_SITECUSTOMIZE = '''\
"""Local pods of flarekit's practice cluster: PyTorch from the cached virtualenv, after
everything else on the path."""
import importlib.machinery
import importlib.util
import os
import site
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _extra in {extra!r}:
    if _extra not in sys.path:
        site.addsitedir(_extra)
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
'''


class Tools:
    """The wrappers folder and the site folder of one kubelet, under `root`."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.site = root / "site"
        self._torch: Path | None = None
        self._made = False

    def torch_site(self) -> Path | None:
        """torch's site-packages for local pods, when PyTorch is installed (here or cached)."""
        if importlib.util.find_spec("torch") is not None:
            return None  # this environment has its own
        folder, _ = _torch.find()
        return _torch.site_packages(folder) if folder is not None else None

    def torch_missing(self) -> str | None:
        """Why ``torchrun`` cannot run here, or None."""
        if importlib.util.find_spec("torch") is not None or self.torch_site() is not None:
            return None
        return _torch.find()[1]

    def ray_missing(self) -> str | None:
        if importlib.util.find_spec("ray") is not None:
            return None
        return (
            "Ray is not installed in this Python environment, so no Ray runs here: pip "
            "install 'flarekit-testing[local]' (it brings ray[default])"
        )

    def make(self) -> None:
        if self._made:
            return
        self.bin.mkdir(parents=True, exist_ok=True)
        self.site.mkdir(parents=True, exist_ok=True)
        python = shlex.quote(sys.executable)
        wrappers = {
            "python": f'exec {python} "$@"',
            "python3": f'exec {python} "$@"',
            "torchrun": f'exec {python} -m torch.distributed.run "$@"',
            "ray": f'exec {python} -m ray.scripts.scripts "$@"',
        }
        for name, line in wrappers.items():
            path = self.bin / name
            path.write_text(f"#!/bin/sh\n{line}\n")
            path.chmod(0o755)
        torch_site = self.torch_site()
        extra = [str(torch_site)] if torch_site is not None else []
        (self.site / "sitecustomize.py").write_text(_SITECUSTOMIZE.format(extra=extra))
        self._made = True

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """`env` with the wrappers first on PATH and the site folder first on PYTHONPATH."""
        self.make()
        out = dict(env)
        out["PATH"] = os.pathsep.join([str(self.bin), *filter(None, [env.get("PATH")])])
        out["PYTHONPATH"] = os.pathsep.join(
            [str(self.site), *filter(None, [env.get("PYTHONPATH")])]
        )
        return out

    def program(self, name: str) -> str | None:
        """The wrapper for `name` (``python``, ``torchrun``, ``ray``...), if there is one."""
        self.make()
        path = self.bin / name
        return str(path) if path.exists() else None
