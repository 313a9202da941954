"""The real operators on ControlPlane: where their builds are, and how each one runs.

`make control-plane` builds each pinned operator release from its Go module
(`controlplane/operators/<family>-<version>/`) and renders its upstream install manifests next
to the binary (see `controlplane/build.py`). For each operator chosen, ControlPlane:

1. creates what the upstream install creates, from those manifests: its namespaces, its
   ServiceAccount and RBAC (the operator runs with exactly the rights upstream gives it), its
   ConfigMaps and Secrets; not its Deployment, Services, APIServices or CRDs (see
   `_manifests.NOT_CREATED`);
2. runs the operator's own binary with the Deployment's arguments and environment, as a local
   process in a sandbox of its own (`_sandbox`: a private network and /tmp, as a pod has),
   authenticated by a client certificate for its ServiceAccount's user name;
3. serves its webhooks the way envtest does: the upstream webhook configurations (and CRD
   conversion webhooks) are installed with `clientConfig.url` on 127.0.0.1, the local port
   that leads to the operator's webhook server, and the CA bundle of a CA made for that
   operator, which issued the operator's serving certificate;
4. waits until the operator's readiness probe answers and its webhook server accepts TLS, then
   creates what the install holds of the operator's own kinds (Trainer's runtimes).

What a local process needs changed, per operator, is written in `FAMILIES` below and in
docs/operators.md: leader election off, the operator's own certificate management off where
it can be switched off (else it is handed our certificate through the Secret it reads), and,
for KubeRay, `HTTP_PROXY` to the simulated Ray dashboards (`_raydash`).
"""

from __future__ import annotations

import base64
import datetime
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from flarekit_testing.controlplane import _manifests as manifests
from flarekit_testing.controlplane._assets import cache_root
from flarekit_testing.controlplane._pki import Authority, KeyPair
from flarekit_testing.controlplane._sandbox import Relay

JSON = dict[str, Any]
#: A webhook certificate outlives the renewal horizon of the operators' certificate managers
#: (cert-controller renews what expires within 90 days).
_WEBHOOK_CERT_VALIDITY = datetime.timedelta(days=400)


class OperatorNotBuilt(RuntimeError):
    """The operator release asked for has no build in the cache."""


@dataclass(frozen=True)
class Build:
    """One built operator release: its binary and its rendered upstream install."""

    family: str
    version: str
    binary: Path
    install: Path

    def objects(self) -> list[JSON]:
        return manifests.load(self.install)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def built_versions(family: str) -> list[str]:
    """The releases of `family` whose operator `make control-plane` built, oldest first."""
    found = []
    for pointer in (cache_root() / "go").glob(f"{family}-v*.current"):
        version = pointer.name[len(family) + 1 : -len(".current")]
        if re.fullmatch(r"v\d+(\.\d+)*", version) and _find(family, version) is not None:
            found.append(version)
    return sorted(found, key=_version_key)


def _find(family: str, version: str) -> Build | None:
    pointer = cache_root() / "go" / f"{family}-{version}.current"
    if not pointer.is_file():
        return None
    folder = Path(pointer.read_text().strip())
    install = folder.parent / "share" / "manifests.yaml"
    binaries = (
        [p for p in folder.iterdir() if p.is_file() and os.access(p, os.X_OK)]
        if folder.is_dir()
        else []
    )
    if len(binaries) != 1 or not install.is_file():
        return None
    return Build(family, version, binaries[0], install)


def find_build(family: str, version: str) -> Build:
    if family not in FAMILIES:
        raise ValueError(f"unknown operator {family!r}: one of {', '.join(FAMILIES)}")
    found = _find(family, version)
    if found is None:
        built = built_versions(family)
        raise OperatorNotBuilt(
            f"the {FAMILIES[family].title} {version} operator is not built: build it with "
            "`make control-plane` (controlplane/operators/"
            f"{family}-{version}); built here: {', '.join(built) or 'none'}"
        )
    return found


# -- what differs per operator ---------------------------------------------------------------


@dataclass
class Context:
    """What a family's adjustments may read and change while the plan is made."""

    families: frozenset[str]  # every operator started with this one
    cert_dir: Path
    objects: list[JSON]
    notes: list[str] = field(default_factory=list)


Adjust = Callable[[JSON, Context], None]


def _leader_election_off(document: JSON, _context: Context) -> None:
    document.setdefault("leaderElection", {})["leaderElect"] = False


def _internal_certs_off(document: JSON, context: Context) -> None:
    document["internalCertManagement"] = {"enable": False}
    document.setdefault("webhook", {})["certDir"] = str(context.cert_dir)


APPWRAPPER_FRAMEWORK = "workload.codeflare.dev/appwrapper"
APPWRAPPER_EXTERNAL = "AppWrapper.v1beta2.workload.codeflare.dev"
PYTORCHJOB_FRAMEWORK = "kubeflow.org/pytorchjob"


def _kueue(document: JSON, context: Context) -> None:
    _leader_election_off(document, context)
    integrations = document.setdefault("integrations", {})
    frameworks = integrations.setdefault("frameworks", [])
    if "training-operator" in context.families and PYTORCHJOB_FRAMEWORK not in frameworks:
        # Kueue v0.19's default configuration leaves the training-operator's kinds out (its
        # manifests keep them as comments): an admin who runs it enables them, as here.
        frameworks.append(PYTORCHJOB_FRAMEWORK)
        context.notes.append("PyTorchJob integration enabled")
    if "appwrapper" in context.families and APPWRAPPER_FRAMEWORK not in (
        integrations.get("frameworks") or []
    ):
        # Kueue releases without a built-in AppWrapper integration: AppWrapper's own
        # documented Kueue set-up (AppWrapper then runs Kueue's job reconciler itself).
        external = integrations.setdefault("externalFrameworks", [])
        if APPWRAPPER_EXTERNAL not in external:
            external.append(APPWRAPPER_EXTERNAL)
        role = manifests.named(context.objects, "ClusterRole", "kueue-manager-role")
        if role is not None:
            role.setdefault("rules", []).append(
                {
                    "apiGroups": ["workload.codeflare.dev"],
                    "resources": ["appwrappers"],
                    "verbs": ["get", "list", "watch"],
                }
            )
        context.notes.append("AppWrapper registered as an external framework")


def _jobset(document: JSON, context: Context) -> None:
    _leader_election_off(document, context)
    _internal_certs_off(document, context)


def _trainer(document: JSON, context: Context) -> None:
    _leader_election_off(document, context)
    document["certManagement"] = {"enable": False}


def _appwrapper(document: JSON, _context: Context) -> None:
    document.setdefault("controllerManager", {})["leaderElection"] = False


@dataclass(frozen=True)
class Family:
    """How one operator family is run as a local process.

    `config_map`: the ConfigMap with its configuration; `config_from`: "file" (passed as the
    `--config` file the Deployment names) or "api" (the operator reads the ConfigMap itself);
    `adjust`: the changes to that configuration. Certificates: "config" (the configuration
    switches the operator's own certificate management off and names the folder our
    certificate is in), "tmpdir" (switched off; our certificate is where the webhook server
    looks by default, under `TMPDIR`), "secret" (it cannot be switched off: the Secret it keeps
    its certificate in holds ours, which its certificate manager accepts and keeps, with
    `ca_name` the name it gives its CA). `args`/`env`: added to the Deployment's."""

    title: str
    certificates: str = "none"
    config_map: str | None = None
    config_from: str = "file"
    adjust: Adjust | None = None
    ca_name: str | None = None
    cert_secret: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    #: Plain HTTP from the operator into the cluster goes to the simulated Ray dashboards.
    cluster_http: bool = False


FAMILIES: dict[str, Family] = {
    "kuberay": Family("KubeRay", args=("--enable-leader-election=false",), cluster_http=True),
    # Kueue keeps its internal certificate management: without it, v0.19 insists on a
    # metrics certificate mounted by cert-manager at /etc/kueue/metrics/certs.
    "kueue": Family(
        "Kueue",
        certificates="secret",
        config_map="kueue-manager-config",
        adjust=_kueue,
        ca_name="kueue-ca",
        cert_secret="kueue-webhook-server-cert",
    ),
    "jobset": Family(
        "JobSet", certificates="config", config_map="jobset-manager-config", adjust=_jobset
    ),
    # Trainer v2.0 has no configuration file and always manages its certificate; from v2.1 a
    # configuration file switches that off (see `_family`).
    "trainer": Family(
        "Kubeflow Trainer",
        certificates="secret",
        ca_name="kubeflow-trainer-ca",
        cert_secret="kubeflow-trainer-webhook-cert",
        needs=("jobset",),
    ),
    "appwrapper": Family(
        "AppWrapper",
        certificates="secret",
        config_map="appwrapper-operator-config",
        config_from="api",
        adjust=_appwrapper,
        ca_name="appwrapper-ca",
        cert_secret="appwrapper-webhook-server-cert",
    ),
    "training-operator": Family(
        "Kubeflow training-operator",
        certificates="secret",
        ca_name="training-operator-ca",
        cert_secret="training-operator-webhook-cert",
    ),
}
_TRAINER_CONFIG = "kubeflow-trainer-config"


def _family(name: str, objects: list[JSON]) -> Family:
    family = FAMILIES[name]
    if name == "trainer" and manifests.named(objects, "ConfigMap", _TRAINER_CONFIG) is not None:
        return Family(
            family.title,
            certificates="tmpdir",
            config_map=_TRAINER_CONFIG,
            adjust=_trainer,
            needs=family.needs,
        )
    return family


# -- the plan for one operator ---------------------------------------------------------------


@dataclass
class Plan:
    """Everything the control plane creates and starts for one operator."""

    build: Build
    family: Family
    workload: manifests.Workload
    directory: Path
    before: list[JSON]  # created before the operator starts
    after: list[JSON]  # created once it is ready (objects of its own kinds)
    conversions: dict[str, JSON]  # CRD name -> conversion webhook
    argv: list[str]
    env: dict[str, str]
    inbound: list[Relay]
    readiness: tuple[int, str] | None  # host port and path of the readiness probe
    webhook_ports: list[int]  # host ports of its webhook servers
    webhook_ca: bytes
    cert_secret: JSON | None
    notes: list[str]
    #: Files the sandbox's /tmp holds (path there -> our file): the certificate Secret's
    #: keys where the Deployment mounts that Secret.
    files: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.build.family}-operator"


_BUILT_IN_GROUP = re.compile(r"(^|\.)k8s\.io$|^(apps|batch|policy|autoscaling)$")


def _is_built_in(obj: Mapping[str, Any]) -> bool:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return not group or bool(_BUILT_IN_GROUP.search(group))


def make_plan(
    build: Build,
    families: Iterable[str],
    directory: Path,
    free_port: Callable[[], int],
) -> Plan:
    """The plan to run `build` (its files go into `directory`, which must exist)."""
    objects = build.objects()
    family = _family(build.family, objects)
    load = manifests.workload(objects)
    cert_dir = directory / "certs"
    if family.certificates == "tmpdir":
        cert_dir = directory / "tmp" / "k8s-webhook-server" / "serving-certs"
    cert_dir.mkdir(parents=True)
    context = Context(frozenset(families), cert_dir, objects)

    # Local ports for the operator's webhook servers, one per port of the operator.
    refs = manifests.service_refs(objects)
    by_target: dict[int, int] = {}
    host_port_of: dict[str, int] = {}
    for ref in refs:
        target = manifests.service_target(objects, load, ref)
        host_port_of[str(ref["name"])] = by_target.setdefault(target, free_port())
    inbound = [Relay(port, host) for port, host in by_target.items()]
    probe = load.readiness()
    readiness = None
    if probe is not None:
        host = by_target.get(probe[0]) or free_port()
        if probe[0] not in by_target:
            inbound.append(Relay(probe[0], host))
        readiness = (host, probe[1])

    # The webhook CA and serving certificate, for 127.0.0.1 and the Services' names.
    authority = Authority(
        directory,
        family.ca_name or f"flarekit-{build.family}-webhook-ca",
        validity=_WEBHOOK_CERT_VALIDITY,
        use_rsa=True,
        name_as_dns=family.ca_name is not None,
    )
    dns = sorted({f"{r['name']}.{r.get('namespace') or load.namespace}.svc" for r in refs})
    serving = authority.serving("webhook-serving", (*dns, "localhost"), ("127.0.0.1",))
    if refs:
        (cert_dir / "tls.crt").write_bytes(serving.cert.read_bytes())
        (cert_dir / "tls.key").write_bytes(serving.key.read_bytes())
        (cert_dir / "tls.key").chmod(0o600)

    # The configuration, adjusted.
    args = load.args()
    env = load.env()
    if family.config_map is not None and family.adjust is not None:
        key, document = manifests.config_document(objects, family.config_map)
        family.adjust(document, context)
        objects = manifests.with_config(objects, family.config_map, key, document)
        if family.config_from == "file":
            path = directory / key
            path.write_text(yaml.safe_dump(document, sort_keys=False))
            args = [a for a in args if not a.startswith("--config=")] + [f"--config={path}"]
    args += list(family.args)
    env.update(family.env)
    if family.certificates == "tmpdir":
        env["TMPDIR"] = str(directory / "tmp")

    cert_secret = None
    files: dict[str, str] = {}
    if family.certificates == "secret" and refs:
        cert_secret = _secret(family, load.namespace, authority, serving)
        files = _secret_volume(cert_secret, load, directory / "secret-volume")

    before: list[JSON] = []
    after: list[JSON] = []
    for obj in objects:
        kind = obj.get("kind")
        if kind in manifests.NOT_CREATED:
            continue
        if kind in manifests.WEBHOOK_KINDS:
            before.append(manifests.local_webhooks(obj, host_port_of, authority.ca_pem))
        elif kind == "Secret" and cert_secret is not None:
            if obj["metadata"]["name"] != cert_secret["metadata"]["name"]:
                before.append(obj)
        elif _is_built_in(obj):
            before.append(obj)
        else:
            after.append(obj)
    if cert_secret is not None:
        before.append(cert_secret)
    return Plan(
        build=build,
        family=family,
        workload=load,
        directory=directory,
        before=before,
        after=after,
        conversions=manifests.conversions(objects, host_port_of, authority.ca_pem),
        argv=[str(build.binary), *args],
        env=env,
        inbound=inbound,
        readiness=readiness,
        webhook_ports=sorted(set(host_port_of.values())),
        webhook_ca=authority.ca_pem,
        cert_secret=cert_secret,
        notes=context.notes,
        files=files,
    )


def _secret_volume(secret: JSON, load: manifests.Workload, folder: Path) -> dict[str, str]:
    """The Secret's keys as the kubelet would write them where the Deployment mounts it
    (the operator waits for its certificate to appear there)."""
    name = str(secret["metadata"]["name"])
    mount = load.secret_mount(name)
    if mount is None:
        raise manifests.ManifestError(f"the operator's Deployment does not mount Secret {name}")
    folder.mkdir()
    files = {}
    for key, value in secret["data"].items():
        (folder / key).write_bytes(base64.b64decode(value))
        (folder / key).chmod(0o600)
        files[f"{mount.rstrip('/')}/{key}"] = str(folder / key)
    return files


def _secret(family: Family, namespace: str, authority: Authority, serving: KeyPair) -> JSON:
    assert family.cert_secret is not None

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": family.cert_secret, "namespace": namespace},
        "type": "Opaque",
        "data": {
            "ca.crt": b64(authority.ca_pem),
            "ca.key": b64(authority.ca_key_pem),
            "tls.crt": b64(serving.cert.read_bytes()),
            "tls.key": b64(serving.key.read_bytes()),
        },
    }


def order(families: Iterable[str]) -> list[str]:
    """The families in a fixed order, each after those it needs; raises for a family whose
    partner is missing."""
    chosen = list(dict.fromkeys(families))
    for name in chosen:
        if name not in FAMILIES:
            raise ValueError(f"unknown operator {name!r}: one of {', '.join(FAMILIES)}")
        for needed in FAMILIES[name].needs:
            if needed not in chosen:
                raise ValueError(
                    f"operator {name!r} needs {needed!r} too ({FAMILIES[name].title} runs its "
                    f"jobs through {FAMILIES[needed].title}): add it to operators=[...]"
                )
    return [name for name in FAMILIES if name in chosen]
