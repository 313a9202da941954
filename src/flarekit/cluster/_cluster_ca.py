"""A Ray cluster's own certificate authority: found in its CA Secret, read, and used to sign a
client certificate.

Why: where the platform turns on mTLS for Ray (OpenShift AI does, for every cluster), the
operator gives each RayCluster a CA of its own, kept in a Secret named
``<cluster>-ca-secret-<suffix>`` (``ca-secret-<cluster>`` in older releases) and labelled
``ray.openshift.ai/cluster-name=<cluster>``, with the PEM certificate and key under ``ca.crt``
and ``ca.key``; the head accepts only clients whose certificate that CA signed. The Secret is
read through the `Client`, and everything wrong with it (missing, a key missing, not PEM, a
key that does not belong to the certificate, an expired CA) is an error naming the Secret and
the key. The client certificate carries what Ray's gRPC server and client check: clientAuth
(and serverAuth, as Ray uses one pair for both roles), the head Service's DNS names, localhost
and loopback. `cryptography` is imported only here and only when used (the ``tls`` extra).
"""

from __future__ import annotations

import base64
import binascii
import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING

import flarekit.client

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes

    from flarekit.client import Client, GenericResource

__all__ = [
    "CA_SECRET_LABEL",
    "CASecretInvalid",
    "CASecretNotFound",
    "ClusterCA",
    "find_ca_secret",
    "make_client_certificate",
    "read_ca",
]

#: The label the operator puts on a cluster's CA Secret (its value: the cluster's name).
CA_SECRET_LABEL = "ray.openshift.ai/cluster-name"
#: Where the CA certificate and key may be in the Secret, in the order they are looked for.
CA_CERT_KEYS = ("ca.crt", "tls.crt")
CA_KEY_KEYS = ("ca.key", "tls.key")
#: How far back a new certificate's validity starts (clocks of client and head differ).
CLOCK_SKEW = datetime.timedelta(minutes=5)


class CASecretNotFound(LookupError):
    """The cluster has no CA Secret: mTLS is off there, or the operator has not made it yet."""


class CASecretInvalid(ValueError):
    """The CA Secret lacks a key, or holds something that is not a usable CA."""


# -- the CA Secret ------------------------------------------------------------------------------


def _is_ca_secret(name: str, cluster: str) -> bool:
    return name.startswith(f"{cluster}-ca-secret-") or name == f"ca-secret-{cluster}"


def find_ca_secret(client: Client, namespace: str, cluster: str) -> GenericResource:
    """The cluster's CA Secret (the newest, should there be several)."""
    secrets = client.list(
        flarekit.client.generic_resource("v1", "Secret", "secrets"),
        namespace=namespace,
        label_selector={CA_SECRET_LABEL: cluster},
    )
    candidates = [
        s for s in secrets if s.metadata and _is_ca_secret(s.metadata.name or "", cluster)
    ]
    if not candidates:
        raise CASecretNotFound(
            f"no CA Secret for Ray cluster {namespace}/{cluster} (a Secret labelled "
            f"{CA_SECRET_LABEL}={cluster} named {cluster}-ca-secret-<suffix> or "
            f"ca-secret-{cluster}): the operator makes it once the cluster is up on a platform "
            "with Ray mTLS (e.g. OpenShift AI); without mTLS, ray.init needs no certificate"
        )

    def created(secret: GenericResource) -> tuple[str, str]:
        """RFC 3339 times in UTC sort as text."""
        meta = secret.metadata
        return (meta.creation_timestamp or "", meta.name or "") if meta else ("", "")

    return max(candidates, key=created)


def _pem(secret: GenericResource, keys: tuple[str, ...], what: str) -> tuple[str, bytes]:
    """(key, decoded value) of the first of `keys` the Secret has."""
    name = secret.metadata.name if secret.metadata is not None else "?"
    data = secret.field("data")
    entries = data if isinstance(data, dict) else {}
    for key in keys:
        value = entries.get(key)
        if isinstance(value, str) and value:
            try:
                return key, base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise CASecretInvalid(f"Secret {name!r}: data key {key!r} is not base64") from None
    have = ", ".join(sorted(entries)) or "none"
    raise CASecretInvalid(
        f"Secret {name!r} has no {what} (data key {' or '.join(map(repr, keys))}; it has: {have})"
    )


@dataclass(frozen=True)
class ClusterCA:
    """The cluster's CA: its (first) certificate and key, and the PEM text as the Secret has
    it (written out whole: it may be a bundle)."""

    certificate: x509.Certificate
    key: CertificateIssuerPrivateKeyTypes
    pem: bytes


def read_ca(secret: GenericResource) -> ClusterCA:
    """The CA certificate and key in the Secret, checked to belong together and be valid now."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa

    name = secret.metadata.name if secret.metadata is not None else "?"
    cert_key, cert_pem = _pem(secret, CA_CERT_KEYS, "CA certificate")
    key_key, key_pem = _pem(secret, CA_KEY_KEYS, "CA private key")
    try:
        certificate = x509.load_pem_x509_certificate(cert_pem)
    except ValueError as exc:
        raise CASecretInvalid(
            f"Secret {name!r}: {cert_key!r} is not a PEM certificate ({exc})"
        ) from None
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as exc:
        raise CASecretInvalid(
            f"Secret {name!r}: {key_key!r} is not an unencrypted PEM private key ({exc})"
        ) from None
    if not isinstance(
        key,
        rsa.RSAPrivateKey
        | ec.EllipticCurvePrivateKey
        | ed25519.Ed25519PrivateKey
        | ed448.Ed448PrivateKey
        | dsa.DSAPrivateKey,
    ):
        raise CASecretInvalid(f"Secret {name!r}: {key_key!r} is a key that cannot sign")
    public = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*public) != certificate.public_key().public_bytes(*public):
        raise CASecretInvalid(f"Secret {name!r}: {key_key!r} is not the key of {cert_key!r}")
    now = datetime.datetime.now(datetime.UTC)
    if certificate.not_valid_after_utc <= now:
        raise CASecretInvalid(
            f"Secret {name!r}: the CA certificate expired on {certificate.not_valid_after_utc}"
        )
    return ClusterCA(certificate, key, cert_pem)


# -- the client certificate ---------------------------------------------------------------------


def head_dns_names(cluster: str, namespace: str, service: str | None = None) -> list[str]:
    """The names the head is reached by in the cluster (KubeRay's Service name by default)."""
    svc = service or f"{cluster}-head-svc"
    return [svc, f"{svc}.{namespace}.svc", f"{svc}.{namespace}.svc.cluster.local"]


def make_client_certificate(
    ca: ClusterCA, cluster: str, namespace: str, days: int, service: str | None = None
) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM): a new ECDSA P-256 key and its certificate signed by `ca`."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    not_after = min(now + datetime.timedelta(days=days), ca.certificate.not_valid_after_utc)
    try:
        ski = ca.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        authority = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)
    except x509.ExtensionNotFound:
        authority = x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key())
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", "::1")]
    names += [x509.DNSName(n) for n in head_dns_names(cluster, namespace, service)]
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    purposes = [ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "ray-client"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, f"{namespace}/{cluster}"),
        ]
    )
    algorithm = (
        None
        if isinstance(ca.key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey)
        else hashes.SHA256()
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.ExtendedKeyUsage(purposes), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(authority, critical=False)
        .sign(ca.key, algorithm)
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem
