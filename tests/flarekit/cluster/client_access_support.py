"""What KubeRay and the mTLS operator make for a Ray cluster, made by the test instead (neither
runs on these backends): the head Service, and the cluster's CA Secret."""

from __future__ import annotations

import base64
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

import kube_support
from flarekit import Client
from flarekit_testing import ClusterBackend

Backend = ClusterBackend


def new_namespace(backend: Backend, prefix: str) -> tuple[str, Client]:
    """A fresh namespace, and a client of `backend` in it."""
    namespace = kube_support.new_namespace(backend, f"{prefix}-")
    return namespace, kube_support.client_for(backend, namespace=namespace)


def raycluster(name: str, namespace: str) -> dict[str, Any]:
    container = {"name": "ray-head", "image": "rayproject/ray:2.47.1"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "rayVersion": "2.47.1",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
        },
    }


def head_service(
    cluster: str, namespace: str, ports: dict[str, int] | None = None
) -> dict[str, Any]:
    """The head Service as KubeRay makes it: `<cluster>-head-svc`, its named ports."""
    ports = ports or {"gcs-server": 6379, "dashboard": 8265, "client": 10001}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{cluster}-head-svc",
            "namespace": namespace,
            "labels": {"ray.io/cluster": cluster, "ray.io/node-type": "head"},
        },
        "spec": {
            "selector": {"ray.io/cluster": cluster, "ray.io/node-type": "head"},
            "ports": [
                {"name": name, "port": port, "protocol": "TCP", "targetPort": port}
                for name, port in ports.items()
            ],
        },
    }


def make_ca(
    common_name: str = "root-ca", *, rsa_key: bool = True, with_ski: bool = True
) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) of a CA as the operator makes one: RSA 2048 in PKCS#1, CA
    basic constraints, digitalSignature and keyCertSign; or an EC one (other operators)."""
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if rsa_key
        else ec.generate_private_key(ec.SECP256R1())
    )
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if with_ski:
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    cert = builder.sign(key, hashes.SHA256())
    key_format = (
        serialization.PrivateFormat.TraditionalOpenSSL
        if rsa_key
        else serialization.PrivateFormat.PKCS8
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, key_format, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def ca_secret(
    cluster: str,
    namespace: str,
    cert: bytes,
    key: bytes,
    *,
    name: str | None = None,
    keys: tuple[str, str] = ("ca.crt", "ca.key"),
) -> dict[str, Any]:
    """The CA Secret as the operator makes it: `<cluster>-ca-secret-<suffix>`, labelled with
    the cluster's name, the PEMs under ``ca.crt`` and ``ca.key``."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name or f"{cluster}-ca-secret-x7k2p",
            "namespace": namespace,
            "labels": {"ray.openshift.ai/cluster-name": cluster},
        },
        "data": {
            keys[0]: base64.b64encode(cert).decode(),
            keys[1]: base64.b64encode(key).decode(),
        },
    }
