"""Build the test control plane (and the operators) from their Go modules, into a cache.

Every Go module under `controlplane/` (this folder, each `controlplane/tools/*/`, each
`controlplane/operators/*/` and each `controlplane/node/*/`) lists the programs it builds as
`tool` lines in its `go.mod`;
`go.mod` and `go.sum` pin every version. This script builds each module's tools into

    <cache>/go/<module>-<key>/bin/

where `<cache>` is `$FLAREKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/flarekit`, else
`~/.cache/flarekit`, and `<key>` hashes the module's pins, sources, the Go release and the
build flags: a build is reused until one of them changes, and two checkouts with the same
pins share it. `<cache>/go/<module>.current` names the bin folder built last. Binaries never
go into the repository.

An operator module may also have a `manifests.txt`: the upstream install manifests the
operator needs at run time (RBAC, webhook configurations, its configuration, Trainer's
runtimes). They are upstream text, so they are not in the repository either: this script
renders them with kustomize (built from `controlplane/tools/kustomize`) from the upstream
module's own files in the Go module cache, exactly the module version `go.mod` pins, into

    <cache>/go/<module>-<key>/share/manifests.yaml

`manifests.txt` has one instruction a line: `resource <dir>` (a kustomization directory of the
upstream module, relative to its root) and optionally `namespace <name>` (the namespace the
upstream overlay that installs those directories would set).

    python controlplane/build.py              # build what is missing, show progress and time
    python controlplane/build.py --newest     # the same, of the operators only each newest
    python controlplane/build.py --matrix     # of the operators, each family's oldest and newest
    python controlplane/build.py --node       # the same and the real node's programs
                                              # (kubelet, kube-proxy, CoreDNS)
    python controlplane/build.py --dir NAME   # print the bin folder of module NAME, build nothing
    python controlplane/build.py --list       # every module, its key and whether it is built

Without Go on the PATH it prints one line and exits 0, unless `CI=true`, where a control plane
that cannot be built is an error. Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLAGS = ("-trimpath",)
LDFLAGS = "-s -w"
# Builds must use exactly the pinned versions: never edit go.mod or go.sum, never ask a
# checksum database for modules whose sums go.sum already has.
GO_ENV = {"GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}


def cache_root() -> Path:
    explicit = os.environ.get("FLAREKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "flarekit"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class Module:
    """One Go module of this folder: its name, where it is, and its cache key."""

    name: str
    path: Path

    def sources(self) -> list[Path]:
        """go.mod, go.sum, stamps.txt and the module's own Go files (not nested modules')."""
        found = [self.path / "go.mod", self.path / "go.sum"]
        if (self.path / "stamps.txt").exists():
            found.append(self.path / "stamps.txt")
        for file in sorted(self.path.rglob("*.go")):
            folders = file.relative_to(self.path).parents
            if not any((self.path / f / "go.mod").exists() for f in folders if f != Path(".")):
                found.append(file)
        return found

    def key(self, go_version: str) -> str:
        digest = hashlib.sha256()
        settings = f"{go_version}\n{' '.join(FLAGS)}\n{LDFLAGS}\n{sorted(GO_ENV.items())}\n"
        digest.update(settings.encode())
        for file in self.sources():
            digest.update(file.relative_to(self.path).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
        return digest.hexdigest()[:16]

    def directory(self, go_version: str) -> Path:
        return cache_root() / "go" / f"{self.name}-{self.key(go_version)}"

    def requirements(self) -> dict[str, str]:
        """Module path -> version, from go.mod's require lines."""
        found: dict[str, str] = {}
        block = False
        for raw in (self.path / "go.mod").read_text().splitlines():
            line = raw.split("//")[0].strip()
            if line == "require (":
                block = True
            elif block and line == ")":
                block = False
            elif block and len(line.split()) == 2:
                found[line.split()[0]] = line.split()[1]
            elif line.startswith("require ") and len(line.split()) == 3:
                found[line.split()[1]] = line.split()[2]
        return found

    def ldflags(self) -> str:
        """`-s -w` and the `-X` version stamps of stamps.txt, with versions filled in."""
        stamps = self.path / "stamps.txt"
        flags = [LDFLAGS]
        if not stamps.exists():
            return LDFLAGS
        versions = self.requirements()

        def fill(match: re.Match[str]) -> str:
            module, _, part = match.group(1).partition(":")
            if module not in versions:
                raise SystemExit(f"{stamps}: {module} is not required in go.mod")
            numbers = versions[module].lstrip("v").split(".")
            return {"": versions[module], "major": numbers[0], "minor": numbers[1]}[part]

        for raw in stamps.read_text().splitlines():
            line = raw.strip()
            if line and not line.startswith("#"):
                symbol, value = line.split(maxsplit=1)
                flags.append(f"-X {symbol}={re.sub(r'{([^}]+)}', fill, value)}")
        return " ".join(flags)

    def tools(self) -> list[str]:
        """The import paths listed as `tool` in go.mod."""
        tools: list[str] = []
        block = False
        for raw in (self.path / "go.mod").read_text().splitlines():
            line = raw.split("//")[0].strip()
            if line == "tool (":
                block = True
            elif block and line == ")":
                block = False
            elif block and line:
                tools.append(line)
            elif line.startswith("tool "):
                tools.append(line.split()[1])
        return tools


#: The folder of the real node's modules: kubelet and kube-proxy (from the same
#: k8s.io/kubernetes release as the API server) and CoreDNS. They are built only when asked
#: for (`--node`, or by name): a control plane with KWOK nodes needs none of them.
NODE_FOLDER = "node"


def modules() -> list[Module]:
    """The control plane, then the tools (the operators' manifests need them), then the
    operators, then the real node's programs."""
    found = [Module("controlplane", HERE)]
    for folder in ("tools", "operators", NODE_FOLDER):
        parent = HERE / folder
        if parent.is_dir():
            found += [
                Module(p.name, p) for p in sorted(parent.iterdir()) if (p / "go.mod").is_file()
            ]
    return found


def is_node(module: Module) -> bool:
    return module.path.parent == HERE / NODE_FOLDER


def newest_only(found: list[Module]) -> list[Module]:
    """`found` less every operator release that is not its family's newest (an operator
    module is named `<family>-v<version>`): what the end-to-end tests run."""
    return _operators_at(found, oldest=False)


def oldest_and_newest(found: list[Module]) -> list[Module]:
    """`found` less every operator release that is neither its family's oldest nor its
    newest: what the release matrix runs (a release pinned between them is not built)."""
    return _operators_at(found, oldest=True)


def _operators_at(found: list[Module], oldest: bool) -> list[Module]:
    releases: dict[str, list[tuple[tuple[int, ...], Module]]] = {}
    others: list[Module] = []
    for module in found:
        family, _, version = module.name.rpartition("-v")
        if module.path.parent.name != "operators" or not family:
            others.append(module)
            continue
        number = tuple(int(part) for part in re.findall(r"\d+", version))
        releases.setdefault(family, []).append((number, module))
    chosen: list[Module] = []
    for versions in releases.values():
        versions.sort(key=lambda pair: pair[0])
        ends = [versions[0], versions[-1]] if oldest else [versions[-1]]
        chosen += [module for _, module in dict.fromkeys(ends)]
    return others + chosen


def go_version(go: str) -> str:
    out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GO_ENV)
    return env


class Progress:
    """One status line per module: packages compiled out of those the build needs."""

    def __init__(self, name: str, total: int) -> None:
        self.name, self.total, self.done = name, max(total, 1), 0
        self.tty = sys.stdout.isatty()
        self.last_tenth = -1

    def step(self, package: str) -> None:
        self.done += 1
        percent = min(100, 100 * self.done // self.total)
        if self.tty:
            sys.stdout.write(f"\r  {self.name}: {percent:3d}% {package[-60:]:<60}")
            sys.stdout.flush()
        elif percent // 10 != self.last_tenth:
            self.last_tenth = percent // 10
            print(f"  {self.name}: {percent}% ({self.done} packages compiled)", flush=True)

    def close(self) -> None:
        if self.tty:
            sys.stdout.write("\r" + " " * 80 + "\r")
            sys.stdout.flush()


def _forget_old_builds(module: Module, keep: Path, count: int = 3) -> None:
    """Remove all but the newest `count` builds of a module (other pins, older Go)."""
    builds = [
        p
        for p in keep.parent.glob(f"{module.name}-*")
        if p.is_dir() and p != keep and ".tmp" not in p.name
    ]
    builds.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in builds[count - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def _point_at(module: Module, target: Path) -> None:
    """Record `target`'s bin folder as the module's current build (what flarekit_testing's
    ControlPlane finds when no folder is configured)."""
    (cache_root() / "go" / f"{module.name}.current").write_text(f"{target / 'bin'}\n")


def build(module: Module, go: str, version: str) -> Path:
    """Build `module`'s tools into the cache unless they are there; returns the bin folder."""
    target = module.directory(version)
    done = target / "bin" / ".complete"
    if done.exists():
        print(f"  {module.name}: cached in {target}", flush=True)
        _point_at(module, target)
        return target / "bin"
    tools = module.tools()
    if not tools:
        raise SystemExit(f"{module.path / 'go.mod'} lists no `tool` to build")
    started = time.monotonic()
    env = _env()
    listed = subprocess.run(
        [go, "list", "-deps", *tools], cwd=module.path, env=env, capture_output=True, text=True
    )
    if listed.returncode != 0:
        raise SystemExit(f"{module.name}: go list failed:\n{listed.stderr.strip()}")
    progress = Progress(module.name, len(listed.stdout.split()))
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    command = [
        go,
        "build",
        "-v",
        *FLAGS,
        f"-ldflags={module.ldflags()}",
        "-o",
        str(staging / "bin") + os.sep,
        *tools,
    ]
    proc = subprocess.Popen(
        command,
        cwd=module.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    errors: list[str] = []
    for line in proc.stdout:
        line = line.rstrip()
        if line and " " not in line and not line.startswith("#"):
            progress.step(line)
        else:
            errors.append(line)
    progress.close()
    if proc.wait() != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = "\n".join(errors[-40:])
        raise SystemExit(f"{module.name}: go build failed:\n{tail}")
    (staging / "bin" / ".complete").write_text("".join(f"{t}\n" for t in tools) + f"{version}\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    _forget_old_builds(module, keep=target)
    _point_at(module, target)
    print(f"  {module.name}: built in {time.monotonic() - started:.0f} s -> {target}", flush=True)
    return target / "bin"


def manifest_instructions(module: Module) -> tuple[str | None, list[str]]:
    """`manifests.txt`'s namespace (or None) and resource directories."""
    namespace: str | None = None
    resources: list[str] = []
    path = module.path / "manifests.txt"
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#")[0].strip()
        if not line:
            continue
        word, _, value = line.partition(" ")
        if word == "namespace" and value.strip():
            namespace = value.strip()
        elif word == "resource" and value.strip():
            resources.append(value.strip())
        else:
            raise SystemExit(f"{path}:{number}: expected `resource <dir>` or `namespace <name>`")
    if not resources:
        raise SystemExit(f"{path} names no `resource`")
    return namespace, resources


def export_manifests(module: Module, go: str, version: str, kustomize: Path) -> None:
    """Render the upstream manifests `manifests.txt` names into the build's share folder,
    unless the same instructions were rendered with the same kustomize before."""
    if not (module.path / "manifests.txt").exists():
        return
    share = module.directory(version) / "share"
    digest = hashlib.sha256(
        (module.path / "manifests.txt").read_bytes() + str(kustomize).encode()
    ).hexdigest()
    done = share / ".complete"
    if done.exists() and done.read_text().strip() == digest:
        return
    namespace, resources = manifest_instructions(module)
    env = _env()
    tool = module.tools()[0]
    found = subprocess.run(
        [go, "list", "-f", "{{.Module.Dir}}", tool],
        cwd=module.path,
        env=env,
        capture_output=True,
        text=True,
    )
    if found.returncode != 0 or not found.stdout.strip():
        raise SystemExit(f"{module.name}: cannot find the module of {tool}:\n{found.stderr}")
    upstream = Path(found.stdout.strip())
    share.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flarekit-kustomize-") as scratch:
        # A kustomization of our own that includes the upstream directories, so that several
        # of them (and the overlay's namespace) render as one install.
        lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization"]
        if namespace:
            lines.append(f"namespace: {namespace}")
        lines.append("resources:")
        for resource in resources:
            folder = upstream / resource
            if not folder.is_dir():
                raise SystemExit(f"{module.name}: {resource} is not a folder of {upstream}")
            lines.append(f"- {os.path.relpath(folder, scratch)}")
        (Path(scratch) / "kustomization.yaml").write_text("\n".join(lines) + "\n")
        rendered = subprocess.run(
            [str(kustomize), "build", scratch], capture_output=True, text=True, env=env
        )
    if rendered.returncode != 0:
        raise SystemExit(f"{module.name}: kustomize build failed:\n{rendered.stderr.strip()}")
    (share / "manifests.yaml").write_text(rendered.stdout)
    done.write_text(digest + "\n")
    print(f"  {module.name}: upstream manifests rendered into {share}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", metavar="MODULE", help="print MODULE's bin folder and exit")
    parser.add_argument("--list", action="store_true", help="list modules and their state")
    parser.add_argument(
        "--newest",
        action="store_true",
        help="of the operators, only the newest release of each family (what `make test` runs)",
    )
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="of the operators, each family's oldest and newest release (the release matrix)",
    )
    parser.add_argument(
        "--node",
        action="store_true",
        help="also the real node's programs (kubelet, kube-proxy, CoreDNS)",
    )
    parser.add_argument("modules", nargs="*", help="modules to build (default: all but the node's)")
    args = parser.parse_args(argv)
    go = shutil.which("go")
    if go is None:
        message = "go is not on the PATH: the real control plane cannot be built here"
        if in_ci():
            print(f"error: {message} (CI=true requires it)", file=sys.stderr)
            return 1
        print(f"skipped: {message}; its tests will be skipped", file=sys.stderr)
        return 0
    version = go_version(go)
    known = {m.name: m for m in modules()}
    if args.dir is not None:
        if args.dir not in known:
            print(f"unknown module {args.dir!r}: one of {', '.join(known)}", file=sys.stderr)
            return 2
        print(known[args.dir].directory(version) / "bin")
        return 0
    if args.list:
        for module in known.values():
            built = (module.directory(version) / "bin" / ".complete").exists()
            print(f"{module.name}\t{module.key(version)}\t{'built' if built else 'missing'}")
        return 0
    if args.modules:
        chosen = [known[n] for n in args.modules]
    else:
        chosen = [m for m in known.values() if args.node or not is_node(m)]
    if args.newest:
        chosen = newest_only(chosen)
    elif args.matrix:
        chosen = oldest_and_newest(chosen)
    wants_manifests = [m for m in chosen if (m.path / "manifests.txt").exists()]
    if wants_manifests and "kustomize" in known and known["kustomize"] not in chosen:
        chosen.insert(0, known["kustomize"])
    started = time.monotonic()
    print(f"Go modules under controlplane/ ({version}, cache {cache_root() / 'go'}):")
    for module in chosen:
        build(module, go, version)
    if wants_manifests:
        if "kustomize" not in known:
            raise SystemExit("manifests.txt needs controlplane/tools/kustomize, which is missing")
        kustomize = known["kustomize"].directory(version) / "bin" / "kustomize"
        for module in wants_manifests:
            export_manifests(module, go, version, kustomize)
    what = "control plane, operators and node" if args.node else "control plane and operators"
    print(f"{what} ready in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
