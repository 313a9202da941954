"""Certificates and keys for a throwaway control plane, as kubeadm would lay them out.

One CA signs the API server's serving certificate (127.0.0.1, localhost and the in-cluster
service names) and the client certificates of every component and user: a client certificate's
common name is the user name and its organizations are the groups, as kube-apiserver's x509
authenticator reads them. A separate RSA key pair signs and verifies service-account tokens.
Everything is fresh per control plane and lives in its temporary directory.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_PEM = serialization.Encoding.PEM
_VALIDITY = datetime.timedelta(days=2)


def _subject(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    # RSA keys in PKCS #1 ("RSA PRIVATE KEY"), which is what every Go program reads; EC keys
    # in PKCS #8.
    form = (
        serialization.PrivateFormat.TraditionalOpenSSL
        if isinstance(key, rsa.RSAPrivateKey)
        else serialization.PrivateFormat.PKCS8
    )
    path.write_bytes(key.private_bytes(_PEM, form, serialization.NoEncryption()))
    path.chmod(0o600)


def _new_key(use_rsa: bool) -> ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey:
    if use_rsa:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


class Authority:
    """A CA that issues serving and client certificates into one directory.

    The defaults suit the control plane (EC keys, two days). An operator that insists on
    managing its own webhook certificate is handed one it accepts: `use_rsa` keys (PKCS #1),
    a `validity` beyond its renewal horizon and the CA's `name` as a DNS name too (its
    certificate manager checks the CA certificate against that name)."""

    def __init__(
        self,
        directory: Path,
        name: str = "flarekit-controlplane-ca",
        *,
        validity: datetime.timedelta = _VALIDITY,
        use_rsa: bool = False,
        name_as_dns: bool = False,
    ) -> None:
        self.directory = directory
        self._validity = validity
        self._use_rsa = use_rsa
        self._now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
        self._key = _new_key(use_rsa)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_subject(name))
            .issuer_name(_subject(name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._now)
            .not_valid_after(self._now + validity)
        )
        if name_as_dns:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False
            )
        self._cert = (
            builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        self.ca_cert = directory / "ca.crt"
        self.ca_key = directory / "ca.key"
        self.ca_cert.write_bytes(self._cert.public_bytes(_PEM))
        _write_key(self.ca_key, self._key)

    @property
    def ca_pem(self) -> bytes:
        return self._cert.public_bytes(_PEM)

    @property
    def ca_key_pem(self) -> bytes:
        return self.ca_key.read_bytes()

    def _issue(
        self,
        file_stem: str,
        subject: x509.Name,
        usage: list[x509.ObjectIdentifier],
        names: list[x509.GeneralName] | None = None,
    ) -> KeyPair:
        key = _new_key(self._use_rsa)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._now)
            .not_valid_after(self._now + self._validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = KeyPair(self.directory / f"{file_stem}.crt", self.directory / f"{file_stem}.key")
        pair.cert.write_bytes(cert.public_bytes(_PEM))
        _write_key(pair.key, key)
        return pair

    def serving(self, file_stem: str, dns: tuple[str, ...], ips: tuple[str, ...]) -> KeyPair:
        """A TLS server certificate for these DNS names and IP addresses."""
        names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        return self._issue(
            file_stem, _subject(dns[0] if dns else ips[0]), [ExtendedKeyUsageOID.SERVER_AUTH], names
        )

    def client(self, file_stem: str, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate that authenticates as `user` in `groups`."""
        return self._issue(file_stem, _subject(user, groups), [ExtendedKeyUsageOID.CLIENT_AUTH])


def service_account_keys(directory: Path) -> KeyPair:
    """The RSA key that signs service-account tokens, and its public half that verifies them."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pair = KeyPair(directory / "sa.pub", directory / "sa.key")
    _write_key(pair.key, key)
    pair.cert.write_bytes(
        key.public_key().public_bytes(_PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return pair
