"""Hostile and large ``-f`` files: time and peak memory of ``flarekit cluster render`` on them.

Each file is given to ``flarekit cluster render -f FILE --out-dir DIR`` in a fresh process (no
cluster needed), which reads it with the bounds of ``flarekit.client._input_files``. Reported
per file: the exit code (0 rendered, 3 refused by a check, 2 refused as a file), wall time and
peak resident memory of that process, as ratios to the same command on a small valid file
measured in the same run (the interpreter's start and imports are most of it), and the time
of reading alone. The limits for the hostile files (the alias bomb and the 10,000-level files)
are 2 s and 200 MB for the whole command; the 50 MB parameter files are accepted or refused
in seconds (`flarekit._sizes` checks what the API server would refuse before any YAML is
written, and YAML is written by libyaml).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

LIMIT_SECONDS = 2.0
LIMIT_MB = 200.0
#: What "in seconds" means for a 50 MB parameter file.
LARGE_SECONDS = 10.0


def _alias_bomb() -> bytes:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


def _big_yaml(size: int) -> bytes:
    lines = ["name: big", "extra_labels:"]
    total, i = 0, 0
    while total < size:
        line = f"  label-number-{i}: value-{i}-xxxxxxxxxxxxxxxxxxxx"
        lines.append(line)
        total += len(line) + 1
        i += 1
    return ("\n".join(lines) + "\n").encode()


def _big_json(size: int) -> bytes:
    count = size // 48
    body = ",".join(f'"label-number-{i}":"value-{i}-xxxxxxxxxxxxxxxxxx"' for i in range(count))
    return ('{"name":"big","extra_labels":{' + body + "}}").encode()


def files() -> dict[str, bytes]:
    deep = 10_000
    return {
        "small valid file (baseline)": b"name: demo\nnum_workers: 2\n",
        "alias bomb (9 levels of 9 aliases)": _alias_bomb(),
        "10,000-level JSON": (
            '{"name": "x", "v": ' + '{"a": ' * deep + "1" + "}" * deep + "}"
        ).encode(),
        "10,000-level YAML (flow)": ("name: x\nv: " + "[" * deep + "]" * deep + "\n").encode(),
        "Latin-1 file": "name: d\xe9mo\n".encode("latin-1"),
        "50 MB YAML": _big_yaml(50_000_000),
        "50 MB JSON": _big_json(50_000_000),
        "50 MB environment (JSON, refused: too large to store)": _environment(50_000_000),
        "50 MB annotation (JSON, refused: over 256 KiB)": (
            '{"name":"big","annotations":{"note":"' + "x" * 50_000_000 + '"}}'
        ).encode(),
        "50 MB YAML of a 1.2 MB RayCluster (rendered)": _commented(50_000_000, 5000),
    }


def _environment(size: int) -> bytes:
    count = size // 420
    body = ",".join(f'"VARIABLE_{i}":"{"v" * 400}"' for i in range(count))
    return ('{"name":"big","envs":{' + body + "}}").encode()


def _commented(size: int, variables: int) -> bytes:
    """A parameter file of `size` bytes, mostly comments, whose environment renders to an
    object the API server stores."""
    env = "".join(f"  V{i}: {'v' * 100}\n" for i in range(variables))
    comment = "# " + "c" * 97 + "\n"
    padding = comment * max(0, (size - len(env)) // len(comment))
    return f"name: big\n{padding}envs:\n{env}".encode()


#: Started from a small process: a child's peak memory counts what it had before exec, and the
#: benchmark itself holds the large files.
_MEASURE = """
import os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - started, usage.ru_maxrss / 1024)
"""

#: Reading alone (flarekit.client._input_files): whether the file is read or refused, and how
#: long it takes.
_READ = """
import sys, time
from flarekit.client._input_files import InputError, decode, load_text, read_file
started = time.perf_counter()
try:
    load_text(decode(read_file(sys.argv[1], "f"), "f"), "f")
    verdict = "read"
except InputError:
    verdict = "refused"
print(verdict, time.perf_counter() - started)
"""


def _measure(command: list[str]) -> tuple[list[str], int, float, float]:
    """The command's own output lines, exit code, wall seconds and peak RSS (MB)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, env=env
    )
    lines = done.stdout.splitlines()
    code, seconds, mb = lines[-1].split()
    return lines[:-1], int(code), float(seconds), float(mb)


def _run(path: Path, out: Path) -> tuple[int, float, float]:
    """Exit code, wall seconds and peak RSS (MB) of `flarekit cluster render -f path`."""
    command = [sys.executable, "-m", "flarekit.cli", "cluster", "render", "-f", str(path)]
    _, code, seconds, mb = _measure([*command, "--out-dir", str(out)])
    return code, seconds, mb


def _read(path: Path) -> tuple[str, float, float]:
    """Whether flarekit.client._input_files reads or refuses `path`, its seconds and its
    process's peak MB."""
    lines, _, _, mb = _measure([sys.executable, "-c", _READ, str(path)])
    verdict, seconds = lines[-1].split()
    return verdict, float(seconds), mb


def main() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, tuple[Path, int]] = {}
        for index, (name, data) in enumerate(files().items()):
            paths[name] = (Path(tmp) / f"input-{index}", len(data))
            paths[name][0].write_bytes(data)
        _run(paths["small valid file (baseline)"][0], Path(tmp) / "warm-up")
        base_seconds = base_mb = 0.0
        for name, (path, size) in paths.items():
            code, seconds, mb = _run(path, Path(tmp) / "out")
            verdict, read_seconds, read_mb = _read(path)
            if not rows:
                base_seconds, base_mb = seconds, mb
            note = ""
            if "bomb" in name or "10,000" in name:
                within = seconds < LIMIT_SECONDS and mb < LIMIT_MB
                note = "within 2 s / 200 MB" if within else "OVER 2 s / 200 MB"
            elif name.startswith("50 MB"):
                note = "in seconds" if seconds < LARGE_SECONDS else f"OVER {LARGE_SECONDS:g} s"
            rows.append(
                {
                    "file": name,
                    "size": f"{size / 1e6:.2f} MB" if size > 10**5 else f"{size} B",
                    "exit": str(code),
                    "command": f"{seconds:.2f} s ({seconds / base_seconds:.1f}x), "
                    f"{mb:.0f} MB ({mb / base_mb:.1f}x)",
                    "reading alone": f"{verdict} in {read_seconds:.2f} s, process {read_mb:.0f} MB",
                    "limits": note,
                }
            )
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
