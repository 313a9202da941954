"""Build the real node's container images from Debian packages and PyPI wheels, into a cache.

No registry is reachable where the tests run, so the images that the real node's pods run are
made here and imported into a containerd image store:

- the pods' sandbox ("pause") image: Debian's static `catatonit` in pause mode;
- one Python image with Ray and PyTorch. Its three layers:
  1. Debian bookworm's `python3` (3.11) and `libstdc++6`, `bash`, `wget` (KubeRay's probes),
     `procps` and `ca-certificates`, made by `mmdebstrap` (no apt, no caches, no manuals);
  2. PyTorch (CPU and CUDA libraries, as PyPI ships it) from the pinned virtualenv that
     `tests/flarekit/ray/torch_venv.py` installs (`make torch-venv`), so that the 2.8 GB of
     wheels are downloaded once: its packages, less `triton` (the GPU kernel compiler, which
     nothing on a CPU node loads), pip, setuptools and uv;
  3. `ray[default]` at flarekit's default Ray release (the dashboard and the job server run)
     and NumPy, with what they need beyond layer 2, installed by pip (the newest releases
     that fit, recorded in `images.json`).

The store holds them under names of their own (`localhost/flarekit/...`); a node names the
Python image, when it starts, after what the control plane's flarekit and operators render
by default (`rayproject/ray:<flarekit's default Ray>`, the pinned Trainer runtimes'
`pytorch/pytorch:...`), so that no manifest needs rewriting and no rebuild is needed when
only a name changes. `images.json` beside the store says which name is which image.

The image store (containerd's metadata and the images' unpacked overlayfs snapshots; the
layers' blobs are dropped once unpacked) is built into

    <cache>/node/images-<key>/root

where `<cache>` is `$FLAREKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/flarekit`, else
`~/.cache/flarekit`, and `<key>` hashes the recipe (packages, pins, options) and the
containerd release. A node start copies it into its own scratch directory with hard links (seconds, no
data copied); `<cache>/node/images.current` names the store built last. Images never go into
the repository.

    python controlplane/images.py          # build what is missing, show progress and time
    python controlplane/images.py --dir    # print the store's folder, build nothing
    python controlplane/images.py --list   # the images and what they hold

It needs root (containerd, mmdebstrap), containerd and mmdebstrap (`make real-node` installs
them with apt where they are missing). Standard library only.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: Bumped when the way the images are made changes (the key then changes too).
RECIPE_VERSION = 1
SUITE = "bookworm"
BASE_PACKAGES = (
    "python3",
    "python-is-python3",
    "libstdc++6",  # Ray's and PyTorch's C++ libraries
    "bash",
    "wget",
    "ca-certificates",
    "procps",
)
#: Leave manuals, documentation and translations out of the base layer.
DPKG_OPTIONS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/info/*",
)
RAY_EXTRAS = "default"
#: Installed with Ray (newest releases that fit): PyTorch warns at import without NumPy, and
#: most Ray and PyTorch programs use it.
EXTRA_PACKAGES = ("numpy",)
#: Distributions of the torch virtualenv the image leaves out.
TORCH_LEFT_OUT = ("triton", "pip", "setuptools", "uv")
PAUSE_PACKAGE = "catatonit"
#: The sandbox image's name (containerd's `sandbox_image`); it is never pulled.
PAUSE_IMAGE = "localhost/flarekit/pause:catatonit"
#: The Python image's name in the store (tagged with the store's key).
PYTHON_IMAGE = "localhost/flarekit/python-ray-torch"
PYTHON = "python3.11"
SITE = f"usr/local/lib/{PYTHON}/dist-packages"
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CONTAINERD_NAMESPACE = "k8s.io"


def cache_root() -> Path:
    explicit = os.environ.get("FLAREKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "flarekit"


def default_ray_version() -> str:
    """flarekit's `DEFAULT_RAY_VERSION` (read from its source: this runs before any
    virtualenv exists)."""
    source = (REPO / "src" / "flarekit" / "cluster" / "_defaults.py").read_text()
    found = re.search(r'^DEFAULT_RAY_VERSION = "([^"]+)"', source, re.MULTILINE)
    if found is None:
        raise SystemExit("src/flarekit/cluster/_defaults.py defines no DEFAULT_RAY_VERSION")
    return found.group(1)


def torch_venv() -> tuple[Path, tuple[str, ...]]:
    """The pinned torch virtualenv (created when missing) and its pins."""
    script = REPO / "tests" / "flarekit" / "ray" / "torch_venv.py"
    # Its installer is flarekit-testing's, installed in the repository's virtualenv.
    venv_python = REPO / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    out = subprocess.run([python, str(script)], check=True, capture_output=True, text=True)
    folder = Path(out.stdout.strip().splitlines()[-1])
    pins = (
        tuple((folder / ".complete").read_text().split()) if (folder / ".complete").exists() else ()
    )
    if not (folder / "lib" / PYTHON / "site-packages").is_dir():
        raise SystemExit(f"{folder} is no {PYTHON} virtualenv: the image's Python is Debian's 3.11")
    return folder, pins


def containerd_version() -> str:
    out = subprocess.run(["containerd", "--version"], check=True, capture_output=True, text=True)
    return out.stdout.strip()


@dataclass(frozen=True)
class Recipe:
    """Everything an image store is made from: its key hashes this."""

    ray_version: str
    torch_pins: tuple[str, ...]
    containerd: str
    python_version: str = PYTHON
    suite: str = SUITE
    base_packages: tuple[str, ...] = BASE_PACKAGES
    dpkg_options: tuple[str, ...] = DPKG_OPTIONS
    torch_left_out: tuple[str, ...] = TORCH_LEFT_OUT
    extra_packages: tuple[str, ...] = EXTRA_PACKAGES
    pause: tuple[str, str] = (PAUSE_PACKAGE, PAUSE_IMAGE)
    version: int = RECIPE_VERSION

    def key(self) -> str:
        text = json.dumps(self.__dict__, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def ray_requirement(self) -> str:
        return f"ray[{RAY_EXTRAS}]=={self.ray_version}"

    @property
    def python_image(self) -> str:
        """The Python image's own name in the store."""
        return f"{PYTHON_IMAGE}:{self.key()}"


def recipe() -> Recipe:
    _folder, pins = torch_venv()
    return Recipe(default_ray_version(), pins, containerd_version())


def store_directory(key: str) -> Path:
    return cache_root() / "node" / f"images-{key}"


def current_pointer() -> Path:
    """The file that names the image store built last (what ControlPlane finds)."""
    return cache_root() / "node" / "images.current"


# -- layers ----------------------------------------------------------------------------------


@dataclass
class Layer:
    """One layer tar written to disk, with the digest an image config names it by."""

    path: Path
    diff_id: str = ""
    size: int = 0


class _HashingWriter(io.RawIOBase):
    def __init__(self, out: io.BufferedWriter) -> None:
        self.out, self.digest, self.size = out, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.out.write(data)
        self.digest.update(data)
        self.size += len(data)
        return len(data)


def _write_layer(path: Path, fill: Iterable[tuple[tarfile.TarInfo, Path | bytes | None]]) -> Layer:
    """Write a layer tar from (header, content) pairs; content is a file, bytes or nothing."""
    with open(path, "wb") as raw:
        writer = _HashingWriter(raw)
        with tarfile.open(fileobj=writer, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for info, content in fill:
                if isinstance(content, Path):
                    with open(content, "rb") as data:
                        tar.addfile(info, data)
                elif isinstance(content, bytes):
                    info.size = len(content)
                    tar.addfile(info, io.BytesIO(content))
                else:
                    tar.addfile(info)
    return Layer(path, "sha256:" + writer.digest.hexdigest(), writer.size)


def _directory(name: str, mode: int = 0o755) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, 0
    return info, None


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _tree(
    source: Path, target: str, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[tarfile.TarInfo, Path | bytes | None]]:
    """Every file under `source` as members under `target` (directories, files, symlinks),
    less the top-level entries in `skip`."""
    for entry in sorted(source.iterdir()):
        if entry.name in skip:
            continue
        yield from _entries(entry, f"{target}/{entry.name}")


def _entries(path: Path, name: str) -> Iterator[tuple[tarfile.TarInfo, Path | bytes | None]]:
    stat = path.lstat()
    info = tarfile.TarInfo(name)
    info.mode, info.mtime = stat.st_mode & 0o7777, int(stat.st_mtime)
    if path.is_symlink():
        info.type, info.linkname = tarfile.SYMTYPE, os.readlink(path)
        yield info, None
    elif path.is_dir():
        info.type = tarfile.DIRTYPE
        yield info, None
        for child in sorted(path.iterdir()):
            yield from _entries(child, f"{name}/{child.name}")
    elif path.is_file():
        info.size = stat.st_size
        yield info, path


def _script(path: Path) -> bytes | None:
    """A console script with its first line pointing at the image's Python (pip wrote the
    interpreter that installed it there), or None if `path` is no Python script."""
    data = path.read_bytes()
    first, _, rest = data.partition(b"\n")
    if not first.startswith(b"#!") or b"python" not in first:
        return None
    return b"#!/usr/bin/python3\n" + rest


def _scripts(folder: Path, skip: Iterable[str] = ()) -> Iterator[tuple[tarfile.TarInfo, bytes]]:
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        if path.name in skip or not path.is_file() or path.is_symlink():
            continue
        content = _script(path)
        if content is None:
            continue
        info = tarfile.TarInfo(f"usr/local/bin/{path.name}")
        info.mode, info.mtime = 0o755, int(path.stat().st_mtime)
        yield info, content


def _left_out(site: Path, names: Iterable[str]) -> frozenset[str]:
    """The top-level entries of `site` that belong to the distributions `names` (from each
    one's RECORD), and those distributions' metadata folders."""
    wanted = {re.sub(r"[-_.]+", "_", n).lower() for n in names}
    skip: set[str] = set()
    for meta in site.glob("*.dist-info"):
        dist = re.sub(r"[-_.]+", "_", meta.name[: -len(".dist-info")].rsplit("-", 1)[0]).lower()
        if dist not in wanted:
            continue
        skip.add(meta.name)
        record = meta / "RECORD"
        if record.exists():
            for line in record.read_text().splitlines():
                top = line.split(",", 1)[0].split("/", 1)[0]
                if top and not top.startswith(".."):
                    skip.add(top)
    return frozenset(skip)


def _base_layer(work: Path, rec: Recipe) -> Layer:
    """Debian with Python, as mmdebstrap makes it: a tar of a root file system."""
    out = work / "base.tar"
    command = [
        "mmdebstrap",
        "--quiet",
        "--variant=essential",
        f"--include={','.join(rec.base_packages)}",
        *[f"--dpkgopt={option}" for option in rec.dpkg_options],
        rec.suite,
        str(out),
    ]
    subprocess.run(command, check=True)
    digest, size = hashlib.sha256(), 0
    with open(out, "rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return Layer(out, "sha256:" + digest.hexdigest(), size)


def _torch_layer(work: Path, venv: Path, rec: Recipe) -> Layer:
    site = venv / "lib" / PYTHON / "site-packages"
    skip = _left_out(site, rec.torch_left_out) | {"__pycache__", "_distutils_hack"}
    skip |= {p.name for p in site.glob("distutils-precedence.pth")}

    def members() -> Iterator[tuple[tarfile.TarInfo, Path | bytes | None]]:
        for parent in _parents(SITE):
            yield _directory(parent)
        yield from _tree(site, SITE, skip)
        yield _directory("usr/local/bin")
        yield from _scripts(venv / "bin", skip=("pip", "pip3", f"pip{PYTHON[6:]}", "uv", "uvx"))

    return _write_layer(work / "torch.tar", members())


def _distributions(site: Path) -> list[str]:
    """`name==version` of every distribution installed in `site`."""
    found = []
    for meta in sorted(site.glob("*.dist-info")):
        name, _, version = meta.name[: -len(".dist-info")].rpartition("-")
        found.append(f"{name}=={version}")
    return found


def _ray_layer(work: Path, venv: Path, rec: Recipe) -> tuple[Layer, list[str]]:
    """`ray[default]` and what it needs beyond the torch layer: pip runs with the torch
    virtualenv's interpreter, which sees the packages installed there as satisfied, and
    installs only the rest, into a prefix of its own."""
    prefix = work / "ray-prefix"
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--prefix",
            str(prefix),
            rec.ray_requirement,
            *rec.extra_packages,
        ],
        check=True,
        env={**os.environ, "PIP_NO_WARN_SCRIPT_LOCATION": "1"},
    )
    site = prefix / "lib" / PYTHON / "site-packages"

    def members() -> Iterator[tuple[tarfile.TarInfo, Path | bytes | None]]:
        for parent in _parents(SITE):
            yield _directory(parent)
        yield from _tree(site, SITE, frozenset({"__pycache__"}))
        yield _directory("usr/local/bin")
        yield from _scripts(prefix / "bin")

    layer = _write_layer(work / "ray.tar", members())
    installed = _distributions(site)
    shutil.rmtree(prefix)
    return layer, installed


def _pause_layer(work: Path) -> Layer:
    """Debian's catatonit (statically linked) as /pause."""
    download = work / "pause-deb"
    download.mkdir()
    subprocess.run(
        # apt's download sandbox user could not write into the (root-owned) folder.
        ["apt-get", "download", "--quiet=2", "-o", "APT::Sandbox::User=root", PAUSE_PACKAGE],
        cwd=download,
        check=True,
    )
    (deb,) = download.glob("*.deb")
    unpacked = download / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    binary = unpacked / "usr" / "bin" / "catatonit"
    info = tarfile.TarInfo("pause")
    info.mode, info.size, info.mtime = 0o755, binary.stat().st_size, 0
    layer = _write_layer(work / "pause.tar", [(info, binary)])
    shutil.rmtree(download)
    return layer


# -- images ----------------------------------------------------------------------------------


@dataclass
class Image:
    """A docker-archive image: its layers, its configuration and its names."""

    names: tuple[str, ...]
    layers: list[Layer]
    config: dict[str, object] = field(default_factory=dict)

    def config_json(self) -> bytes:
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": self.config,
            "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in self.layers]},
            "history": [{"created_by": "flarekit controlplane/images.py"} for _ in self.layers],
        }
        return json.dumps(config, sort_keys=True).encode()


def _archive(images: list[Image], out: io.BufferedWriter) -> None:
    """Stream a `docker save`-style archive of `images` (layers shared by digest)."""
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        written: set[str] = set()
        manifest = []
        for image in images:
            config = image.config_json()
            config_name = hashlib.sha256(config).hexdigest() + ".json"
            info = tarfile.TarInfo(config_name)
            info.size = len(config)
            tar.addfile(info, io.BytesIO(config))
            layers = []
            for layer in image.layers:
                name = f"{layer.diff_id.split(':')[1]}/layer.tar"
                if name not in written:
                    info = tarfile.TarInfo(name)
                    info.size = layer.size
                    with open(layer.path, "rb") as blob:
                        tar.addfile(info, blob)
                    written.add(name)
                layers.append(name)
            manifest.append(
                {"Config": config_name, "RepoTags": list(image.names), "Layers": layers}
            )
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


class Containerd:
    """A containerd of our own for importing: its root is the store being built, its state
    and socket in a scratch folder, in a mount namespace of its own (the overlay mounts it
    makes while unpacking cannot outlive it), without its Kubernetes (CRI) plugin."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root, self.scratch = root, scratch
        self.socket = scratch / "containerd.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Containerd:
        config = self.scratch / "containerd.toml"
        config.write_text(
            "version = 2\n"
            f'root = "{self.root}"\n'
            f'state = "{self.scratch / "state"}"\n'
            'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
            f'[grpc]\n  address = "{self.socket}"\n'
        )
        log = open(self.scratch / "containerd.log", "wb")
        self.proc = subprocess.Popen(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "containerd",
                "--config",
                str(config),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"containerd did not start:\n{(self.scratch / 'containerd.log').read_text()[-3000:]}"
                )
            time.sleep(0.1)
        return self

    def ctr(self, *args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["ctr", "--address", str(self.socket), "--namespace", CONTAINERD_NAMESPACE, *args],
            stdin=stdin,
        )

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _import(images: list[Image], root: Path, scratch: Path) -> None:
    """Import `images` and unpack them into overlayfs snapshots, then drop the layers' blobs
    from the content store: containers start from the unpacked snapshots, so keeping both
    would take the images' size twice (what containerd's `discard_unpacked_layers` does for
    pulled images)."""
    with Containerd(root, scratch) as containerd:
        proc = containerd.ctr(
            "images", "import", "--snapshotter", "overlayfs", "-", stdin=subprocess.PIPE
        )
        assert proc.stdin is not None
        try:
            _archive(images, proc.stdin)  # type: ignore[arg-type]
        finally:
            proc.stdin.close()
        if proc.wait() != 0:
            raise SystemExit("ctr images import failed")
        layers = sorted({layer.diff_id for image in images for layer in image.layers})
        if containerd.ctr("content", "rm", *layers).wait() != 0:
            raise SystemExit("ctr content rm failed")
    # containerd forgets them at once and deletes their files at its next garbage collection,
    # which a store that is only copied never runs: delete them here.
    blobs = root / "io.containerd.content.v1.content" / "blobs"
    for digest in layers:
        algorithm, _, hexdigest = digest.partition(":")
        (blobs / algorithm / hexdigest).unlink(missing_ok=True)


def _size(folder: Path) -> int:
    seen: set[int] = set()
    total = 0
    for path in folder.rglob("*"):
        stat = path.lstat()
        if path.is_file() and not path.is_symlink() and stat.st_ino not in seen:
            seen.add(stat.st_ino)
            total += stat.st_size
    return total


def build(rec: Recipe) -> Path:
    """Build the image store of `rec` unless it is there; returns its folder."""
    target = store_directory(rec.key())
    if (target / ".complete").exists():
        print(f"  images: cached in {target}", flush=True)
        _point_at(target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another checkout may be building the same
        if (target / ".complete").exists():
            _point_at(target)
            return target
        return _build_locked(rec, target)


def _step(what: str) -> float:
    print(f"  images: {what}...", flush=True)
    return time.monotonic()


def _done(started: float, detail: str = "") -> None:
    print(f"          done in {time.monotonic() - started:.0f} s{detail}", flush=True)


def _build_locked(rec: Recipe, target: Path) -> Path:
    started = time.monotonic()
    venv, _pins = torch_venv()
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    work = Path(tempfile.mkdtemp(prefix="flarekit-images-", dir=target.parent))
    try:
        t = _step(
            f"base layer: Debian {rec.suite} with {', '.join(rec.base_packages)} (mmdebstrap)"
        )
        base = _base_layer(work, rec)
        _done(t, f", {base.size / 2**20:.0f} MiB")
        t = _step(f"torch layer: {', '.join(rec.torch_pins)} from {venv}")
        torch = _torch_layer(work, venv, rec)
        _done(t, f", {torch.size / 2**20:.0f} MiB")
        t = _step(f"ray layer: {rec.ray_requirement} (pip)")
        ray, installed = _ray_layer(work, venv, rec)
        _done(t, f", {ray.size / 2**20:.0f} MiB")
        t = _step(f"pause image: Debian's {PAUSE_PACKAGE}")
        pause = _pause_layer(work)
        _done(t)
        python = Image(
            (rec.python_image,),
            [base, torch, ray],
            {"Env": [PATH_ENV, "LANG=C.UTF-8"], "Cmd": ["/bin/bash"], "WorkingDir": "/"},
        )
        sandbox = Image((PAUSE_IMAGE,), [pause], {"Entrypoint": ["/pause", "-P"]})
        t = _step(f"importing into containerd as {rec.python_image} and {PAUSE_IMAGE}")
        _import([sandbox, python], staging / "root", work)
        _done(t)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = _size(staging / "root")
    (staging / "images.json").write_text(
        json.dumps(
            {
                "python": rec.python_image,
                "pause": PAUSE_IMAGE,
                "ray_version": rec.ray_version,
                "torch": list(rec.torch_pins),
                "ray_layer": installed,
                "recipe": rec.__dict__,
            },
            default=list,
            indent=1,
        )
    )
    (staging / ".complete").write_text(f"{size}\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    _forget_old_stores(target)
    _point_at(target)
    print(
        f"  images: built in {time.monotonic() - started:.0f} s, {size / 2**30:.1f} GiB -> {target}",
        flush=True,
    )
    return target


def _point_at(target: Path) -> None:
    current_pointer().write_text(f"{target}\n")


def _forget_old_stores(keep: Path, count: int = 2) -> None:
    """Remove all but the newest `count` stores (other recipes)."""
    stores = [
        p for p in keep.parent.glob("images-*") if p.is_dir() and p != keep and ".tmp" not in p.name
    ]
    stores.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in stores[count - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", action="store_true", help="print the store's folder and exit")
    parser.add_argument("--list", action="store_true", help="list the images and their names")
    args = parser.parse_args(argv)
    rec = recipe()
    if args.dir:
        print(store_directory(rec.key()))
        return 0
    if args.list:
        print(f"{PAUSE_IMAGE}\tDebian's {PAUSE_PACKAGE}")
        print(
            f"{rec.python_image}\tDebian {rec.suite} {PYTHON}, "
            f"{', '.join(rec.torch_pins)}, {rec.ray_requirement}"
        )
        return 0
    if os.geteuid() != 0:
        print(
            "error: building the node's images needs root (containerd, mmdebstrap)", file=sys.stderr
        )
        return 1
    for tool in ("containerd", "ctr", "mmdebstrap", "dpkg-deb", "apt-get"):
        if shutil.which(tool) is None:
            print(f"error: {tool} is missing (`make real-node` installs it)", file=sys.stderr)
            return 1
    print(f"Container images of the real node (cache {cache_root() / 'node'}):", flush=True)
    build(rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
