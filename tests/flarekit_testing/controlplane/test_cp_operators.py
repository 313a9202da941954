"""How an operator's upstream install becomes a local process: what is created, what is
changed (and only that), where the builds are found. On small installs written here in the
shape kustomize renders upstream's."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from flarekit_testing.controlplane import _manifests as manifests
from flarekit_testing.controlplane._operators import (
    Build,
    OperatorNotBuilt,
    built_versions,
    find_build,
    make_plan,
    order,
)

JSON = dict[str, Any]


def _deployment(namespace: str, container: JSON, volumes: list[JSON] | None = None) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "op-controller-manager", "namespace": namespace},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "op-controller-manager",
                    "containers": [{"name": "kube-rbac-proxy"}, container],
                    "volumes": volumes or [],
                }
            }
        },
    }


def _webhook_service(name: str, namespace: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"ports": [{"port": 443, "targetPort": "webhook-server"}]},
    }


def _webhooks(kind: str, service: str, namespace: str) -> JSON:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {
            "name": f"op-{kind.lower()}",
            "annotations": {"cert-manager.io/inject-ca-from": "x/y"},
        },
        "webhooks": [
            {
                "name": "vthing.kb.io",
                "clientConfig": {
                    "service": {"name": service, "namespace": namespace, "path": "/validate"}
                },
                "failurePolicy": "Fail",
            }
        ],
    }


def _kueue_like(config_map: str = "kueue-manager-config") -> list[JSON]:
    """An install shaped like Kueue's (and JobSet's): configuration file, internal
    certificates in a mounted Secret, a CRD with a conversion webhook, a role, a visibility
    APIService."""
    ns = "kueue-system"
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": True},
        "webhook": {"port": 9443},
        "integrations": {"frameworks": ["batch/job", "ray.io/raycluster"]},
    }
    container = {
        "name": "manager",
        "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
        "ports": [{"name": "webhook-server", "containerPort": 9443}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}},
        "env": [{"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "volumeMounts": [{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"}],
    }
    volumes = [{"name": "cert", "secret": {"secretName": "kueue-webhook-server-cert"}}]
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {
                            "name": "kueue-webhook-service",
                            "namespace": ns,
                            "path": "/convert",
                        }
                    },
                    "conversionReviewVersions": ["v1"],
                },
            }
        },
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "op-controller-manager", "namespace": ns},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "kueue-manager-role"},
            "rules": [],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": config_map, "namespace": ns},
            "data": {"controller_manager_config.yaml": yaml.safe_dump(config)},
        },
        crd,
        _webhook_service("kueue-webhook-service", ns),
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.visibility"},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "kueue-webhook-server-cert", "namespace": ns},
        },
        _deployment(ns, container, volumes),
        _webhooks("ValidatingWebhookConfiguration", "kueue-webhook-service", ns),
    ]


def _build(tmp_path: Path, family: str, objects: list[JSON]) -> Build:
    binary = tmp_path / "bin" / family
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    install = tmp_path / "share" / "manifests.yaml"
    install.parent.mkdir(parents=True, exist_ok=True)
    install.write_text(yaml.safe_dump_all(objects))
    return Build(family, "v0.0.1", binary, install)


def _ports() -> Any:
    ports = iter(range(40000, 40100))
    return lambda: next(ports)


def test_an_operator_runs_with_its_install_and_only_the_local_changes(tmp_path: Path) -> None:
    """JobSet's configuration switches its own certificate management off."""
    folder = tmp_path / "op"
    folder.mkdir()
    install = _kueue_like("jobset-manager-config")
    plan = make_plan(_build(tmp_path, "jobset", install), ["jobset"], folder, _ports())
    kinds = sorted(o["kind"] for o in plan.before)
    # Deployment, Service, CRD and APIService are not created; everything else is.
    assert kinds == [
        "ClusterRole", "ConfigMap", "Namespace", "Secret", "ServiceAccount",
        "ValidatingWebhookConfiguration",
    ]  # fmt: skip
    [hooks] = manifests.of_kind(plan.before, "ValidatingWebhookConfiguration")
    [hook] = hooks["webhooks"]
    assert hook["clientConfig"]["url"] == f"https://127.0.0.1:{plan.webhook_ports[0]}/validate"
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == plan.webhook_ca
    assert "annotations" not in hooks["metadata"] or not hooks["metadata"]["annotations"]
    assert hook["failurePolicy"] == "Fail"  # untouched
    # The configuration file: certificate management and leader election off, our cert dir.
    config_arg = next(a for a in plan.argv if a.startswith("--config="))
    config = yaml.safe_load(Path(config_arg.split("=", 1)[1]).read_text())
    assert config["leaderElection"]["leaderElect"] is False
    assert config["internalCertManagement"] == {"enable": False}
    cert_dir = Path(config["webhook"]["certDir"])
    assert (cert_dir / "tls.crt").is_file() and (cert_dir / "tls.key").is_file()
    assert config["webhook"]["port"] == 9443  # upstream's port, inside the sandbox
    assert config["integrations"] == {"frameworks": ["batch/job", "ray.io/raycluster"]}
    assert plan.cert_secret is None and plan.files == {}
    assert plan.argv[1:] == ["--zap-log-level=2", config_arg]
    assert plan.env == {"POD_NS": "kueue-system"}
    assert plan.workload.user == "system:serviceaccount:kueue-system:op-controller-manager"
    # Relays: the webhook port and the readiness probe.
    assert sorted(r.port for r in plan.inbound) == [8081, 9443]
    assert plan.readiness is not None and plan.readiness[1] == "/readyz"
    # The conversion webhook calls the same local port.
    conversion = plan.conversions["things.example.com"]
    assert conversion["webhook"]["clientConfig"]["url"].endswith(
        f":{plan.webhook_ports[0]}/convert"
    )
    # The serving certificate covers 127.0.0.1 and the Service's name.
    cert = x509.load_pem_x509_certificate((cert_dir / "tls.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "kueue-webhook-service.kueue-system.svc" in names.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


@pytest.mark.parametrize("with_appwrapper", [False, True])
def test_kueue_keeps_its_certificate_management_and_registers_appwrapper_where_needed(
    tmp_path: Path, with_appwrapper: bool
) -> None:
    folder = tmp_path / "op"
    folder.mkdir()
    families = ["kueue", "appwrapper"] if with_appwrapper else ["kueue"]
    plan = make_plan(_build(tmp_path, "kueue", _kueue_like()), families, folder, _ports())
    config_arg = next(a for a in plan.argv if a.startswith("--config="))
    config = yaml.safe_load(Path(config_arg.split("=", 1)[1]).read_text())
    assert config["leaderElection"]["leaderElect"] is False
    assert "internalCertManagement" not in config and "certDir" not in config["webhook"]
    assert plan.cert_secret is not None
    assert plan.cert_secret["metadata"]["name"] == "kueue-webhook-server-cert"
    [secret] = manifests.of_kind(plan.before, "Secret")  # ours, in place of the empty one
    assert secret is plan.cert_secret
    [role] = manifests.of_kind(plan.before, "ClusterRole")
    if with_appwrapper:
        # AppWrapper v1.0's documented Kueue set-up, as this Kueue has no AppWrapper framework.
        external = config["integrations"]["externalFrameworks"]
        assert external == ["AppWrapper.v1beta2.workload.codeflare.dev"]
        assert role["rules"][0]["resources"] == ["appwrappers"]
    else:
        assert "externalFrameworks" not in config["integrations"]
        assert role["rules"] == []


@pytest.mark.parametrize("with_training_operator", [False, True])
def test_kueue_queues_pytorchjobs_where_the_training_operator_runs(
    tmp_path: Path, with_training_operator: bool
) -> None:
    folder = tmp_path / "op"
    folder.mkdir()
    families = ["kueue", "training-operator"] if with_training_operator else ["kueue"]
    plan = make_plan(_build(tmp_path, "kueue", _kueue_like()), families, folder, _ports())
    config_arg = next(a for a in plan.argv if a.startswith("--config="))
    config = yaml.safe_load(Path(config_arg.split("=", 1)[1]).read_text())
    added = ["kubeflow.org/pytorchjob"] if with_training_operator else []
    assert config["integrations"]["frameworks"] == ["batch/job", "ray.io/raycluster", *added]


def test_an_operator_that_keeps_its_certificate_gets_ours_in_its_secret(tmp_path: Path) -> None:
    """Trainer v2.0 manages its own certificate: the Secret it reads holds our CA and
    certificate (its certificate manager keeps valid ones), mounted where the pod would."""
    ns = "kubeflow-system"
    mount = "/tmp/k8s-webhook-server/serving-certs"
    container = {
        "name": "manager",
        "volumeMounts": [{"name": "cert", "mountPath": mount, "readOnly": True}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}},
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubeflow-trainer-controller-manager", "namespace": ns},
        "spec": {"ports": [{"port": 443, "targetPort": 9443}]},
    }
    volumes = [{"name": "cert", "secret": {"secretName": "kubeflow-trainer-webhook-cert"}}]
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed", "namespace": ns},
    }
    objects = [
        service,
        _deployment(ns, container, volumes),
        _webhooks("ValidatingWebhookConfiguration", "kubeflow-trainer-controller-manager", ns),
        runtime,
    ]
    folder = tmp_path / "op"
    folder.mkdir()
    plan = make_plan(_build(tmp_path, "trainer", objects), ["trainer", "jobset"], folder, _ports())
    assert plan.after == [runtime]  # created once the operator is ready
    secret = plan.cert_secret
    assert secret is not None and secret["metadata"]["name"] == "kubeflow-trainer-webhook-cert"
    assert secret in plan.before
    ca = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
    assert ca == x509.load_pem_x509_certificate(plan.webhook_ca)
    ca_names = ca.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ca_names.get_values_for_type(x509.DNSName) == ["kubeflow-trainer-ca"]
    assert base64.b64decode(secret["data"]["ca.key"]).startswith(b"-----BEGIN RSA PRIVATE KEY")
    assert sorted(plan.files) == [
        f"{mount}/{k}" for k in ("ca.crt", "ca.key", "tls.crt", "tls.key")
    ]
    assert (
        Path(plan.files[f"{mount}/tls.crt"]).read_text()
        == base64.b64decode(secret["data"]["tls.crt"]).decode()
    )


def test_operators_are_ordered_and_partners_required() -> None:
    assert order(["trainer", "kuberay", "jobset"]) == ["kuberay", "jobset", "trainer"]
    with pytest.raises(ValueError, match="'trainer' needs 'jobset'"):
        order(["trainer"])
    with pytest.raises(ValueError, match="unknown operator 'volcano'"):
        order(["volcano"])


def test_builds_are_found_by_their_pointer_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAREKIT_CACHE_DIR", str(tmp_path))
    for version in ("v0.8.2", "v0.12.0"):
        build = _build(tmp_path / f"jobset-{version}-key", "jobset", [])
        (tmp_path / "go").mkdir(exist_ok=True)
        (tmp_path / "go" / f"jobset-{version}.current").write_text(f"{build.binary.parent}\n")
    assert built_versions("jobset") == ["v0.8.2", "v0.12.0"]
    assert find_build("jobset", "v0.12.0").binary.name == "jobset"
    with pytest.raises(OperatorNotBuilt, match=r"JobSet v0.9.0 .*built here: v0.8.2, v0.12.0"):
        find_build("jobset", "v0.9.0")


def test_an_install_is_read_from_its_json_copy_once_read(tmp_path: Path) -> None:
    install = tmp_path / "manifests.yaml"
    install.write_text(yaml.safe_dump_all(_kueue_like()))
    first = manifests.load(install)
    [copy] = tmp_path.glob("manifests.*.json")
    assert manifests.load(install) == first == _kueue_like()
    # Another install (another digest) is read from its YAML, not from the old copy.
    install.write_text(yaml.safe_dump_all(_kueue_like("other-config")))
    assert manifests.load(install) == _kueue_like("other-config")
    assert len(list(tmp_path.glob("manifests.*.json"))) == 2 and copy.exists()
