"""kubectl, the binary `make` placed in the virtualenv, one command per operation.

Objects are read from `-o json` (with `--show-managed-fields`, so that ownership is compared
too). A failure is the `Status` the server answered, read from the last failed response in
kubectl's `-v=9` log, so that its reason and causes are compared as sent (kubectl prints a 422
or an apply conflict without them). What kubectl prints itself (a diff, a wait, a watched
table) is compared as printed, ages masked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from differential import Failure

JSON = dict[str, Any]

_RESPONSE = re.compile(r'"Response" verb="\w+" url="[^"]*" status="(\d+)')
_BODY = re.compile(r'"Response Body" body=(?:"((?:[^"\\]|\\.)*)"|<\n\t(.*?)\n >)', re.S)


def _bodies(log: str) -> list[tuple[int, str]]:
    """(status, body) of every response in a `-v=9` log, in order."""
    out: list[tuple[int, str]] = []
    status = 0
    for line in re.finditer(rf"{_RESPONSE.pattern}|{_BODY.pattern}", log, re.S):
        if line.group(1):
            status = int(line.group(1))
        elif line.group(2) is not None:
            out.append((status, json.loads(f'"{line.group(2)}"')))
        elif line.group(3) is not None:
            out.append((status, line.group(3).replace("\n\t", "\n")))
    return out


def _failure(log: str) -> Failure:
    """The server's answer to the last failed request, else kubectl's own error."""
    failed = [(s, b) for s, b in _bodies(log) if s >= 400]
    if failed:
        status, body = failed[-1]
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        return Failure.from_status(parsed, status, body)
    message = "\n".join(line for line in log.splitlines() if not line.startswith(("I1", "\t")))
    return Failure(0, "ClientError", message.strip())


class Kubectl:
    name = "kubectl"

    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary, self.kubeconfig = binary, kubeconfig

    def _command(self, *args: str) -> list[str]:
        return [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args]

    def _env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig), "KUBECTL_EXTERNAL_DIFF": ""}

    def _exec(self, *args: str, stdin: JSON | None = None, timeout: float = 90) -> Any:
        return subprocess.run(
            self._command("-v=9", *args),
            input=json.dumps(stdin) if stdin is not None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self._env(),
        )

    def _run(self, *args: str, stdin: JSON | None = None) -> str:
        done = self._exec(*args, stdin=stdin)
        if done.returncode != 0:
            raise _failure(done.stderr)
        return str(done.stdout)

    def _json(self, *args: str, stdin: JSON | None = None) -> JSON:
        text = self._run(*args, "-o", "json", "--show-managed-fields", stdin=stdin)
        out: JSON = json.loads(text)
        return out

    @staticmethod
    def _type(api_version: str, kind: str) -> str:
        group, _, version = api_version.rpartition("/")
        return f"{kind}.{version}.{group}" if group else kind

    @staticmethod
    def _where(namespace: str | None) -> list[str]:
        return ["-n", namespace] if namespace else []

    def create(self, obj: JSON) -> JSON:
        return self._json("create", "-f", "-", stdin=obj)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON:
        return self._json("get", self._type(api_version, kind), name, *self._where(namespace))

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]:
        extra = ["-l", labels] if labels else []
        body = self._json("get", self._type(api_version, kind), *self._where(namespace), *extra)
        items: list[JSON] = body.get("items") or []
        return items

    def replace(self, obj: JSON) -> JSON:
        return self._json("replace", "-f", "-", stdin=obj)

    def _patch(
        self, api_version: str, kind: str, name: str, ns: str | None, patch: JSON, how: str
    ) -> JSON:
        type_ = self._type(api_version, kind)
        return self._json(
            "patch", type_, name, *self._where(ns), "--type", how, "-p", json.dumps(patch)
        )

    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._patch(api_version, kind, name, namespace, patch, "merge")

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._patch(api_version, kind, name, namespace, patch, "strategic")

    def apply(self, obj: JSON, manager: str, force: bool = False, dry_run: bool = False) -> JSON:
        args = ["apply", "--server-side", f"--field-manager={manager}", "-f", "-"]
        if force:
            args.append("--force-conflicts")
        if dry_run:
            args.append("--dry-run=server")
        return self._json(*args, stdin=obj)

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> JSON:
        """The server's answer to the DELETE (a Status, or the object still terminating)."""
        cascade = [f"--cascade={policy.lower()}"] if policy else []
        done = self._exec(
            "delete",
            self._type(api_version, kind),
            name,
            *self._where(namespace),
            "--wait=false",
            *cascade,
        )
        if done.returncode != 0:
            raise _failure(done.stderr)
        answered: JSON = json.loads(_bodies(done.stderr)[-1][1])
        return answered

    def client_apply(self, obj: JSON) -> JSON:
        return self._json("apply", "-f", "-", stdin=obj)

    def diff(self, obj: JSON, server_side: bool, manager: str = "") -> JSON:
        """`kubectl diff` (exit 0: no change, 1: a change, else an error) and its lines."""
        args = ["diff", "-f", "-"]
        if server_side:
            args += ["--server-side", f"--field-manager={manager}"]
        done = subprocess.run(
            self._command(*args),
            input=json.dumps(obj),
            capture_output=True,
            text=True,
            timeout=90,
            env=self._env(),
        )
        if done.returncode > 1:
            raise _failure(self._exec(*args, stdin=obj).stderr)
        changed = [
            line
            for line in done.stdout.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        return {"exit": done.returncode, "changed": changed}

    def explain(self, path: str) -> list[str]:
        return [line.rstrip() for line in self._run("explain", path).splitlines()]

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        self._run("set", "image", f"{kind}/{name}", f"{container}={image}", "-n", namespace)

    def table(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> JSON:
        named = [name] if name else []
        args = ["get", self._type(api_version, kind), *named, *self._where(namespace), "-o", "wide"]
        return _table(self._run(*args).splitlines())

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        done = self._exec("auth", "can-i", verb, resource, "-n", namespace)
        if done.stdout.strip() in ("yes", "no"):
            return bool(done.stdout.strip() == "yes")
        raise _failure(done.stderr)

    def wait(
        self, api_version: str, kind: str, name: str, namespace: str | None, condition: str
    ) -> bool:
        """`kubectl wait --for=<condition>`: whether it was met within the timeout."""
        done = self._exec(
            "wait",
            self._type(api_version, kind),
            name,
            *self._where(namespace),
            f"--for={condition}",
            "--timeout=60s",
        )
        if done.returncode == 0:
            return True
        if "timed out waiting" in done.stderr:
            return False
        raise _failure(done.stderr)

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        resource_version: str,
        seconds: int,
        bookmarks: bool = False,
        events: int = 0,
    ) -> list[JSON]:
        """A watch as `kubectl get --raw` streams it: one event a line, until the timeout."""
        group, _, version = api_version.rpartition("/")
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        query = f"watch=1&timeoutSeconds={seconds}&resourceVersion={resource_version}"
        if bookmarks:
            query += "&allowWatchBookmarks=true"
        path = f"{base}/namespaces/{namespace}/{kind.lower()}s?{query}"
        return [json.loads(line) for line in self._run("get", "--raw", path).splitlines() if line]

    def watch_table(
        self, api_version: str, kind: str, namespace: str, labels: str, during: Callable[[], Any]
    ) -> JSON:
        """`kubectl get -w` while `during()` changes things: the lines it printed."""
        command = self._command(
            "get", self._type(api_version, kind), "-n", namespace, "-l", labels, "-w"
        )
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self._env()
        ) as watching:
            try:
                assert watching.stdout is not None
                first = [watching.stdout.readline(), watching.stdout.readline()]
                during()
                time.sleep(2.0)  # the changes' events reach kubectl
            finally:
                watching.terminate()
            rest, _ = watching.communicate(timeout=30)
        return _table([*first, *rest.splitlines()])

    def close(self) -> None:
        pass


def _table(lines: list[str]) -> JSON:
    """A printed table: its header row and cells, split where kubectl pads columns (a header
    line again in the middle stays a row of its own, as kubectl printed it)."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip()]
    return {"columns": rows[0] if rows else [], "rows": rows[1:]}
