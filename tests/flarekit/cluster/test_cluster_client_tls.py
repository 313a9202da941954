"""Ray client certificates for clusters with Ray mTLS: the CA Secret made as the operator
makes it, on FakeCluster and on the real control plane with the same code; the certificate
checked with cryptography's verifier and with `openssl verify`."""

from __future__ import annotations

import base64
import ipaddress
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from client_access_support import (
    Backend,
    ca_secret,
    make_ca,
    new_namespace,
    raycluster,
)
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import PolicyBuilder, Store

import flarekit
from flarekit import (
    CASecretInvalid,
    CASecretNotFound,
    Client,
    ConfigError,
    RayClientTLS,
    from_kubeconfig,
    generate_tls_cert,
)
from flarekit.cluster import Cluster, ClusterConfiguration, _client_tls, export_env, remove_tls_cert
from flarekit_testing import FakeCluster, RayClusterController


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _check_chain(files: RayClientTLS, ca_pem: bytes) -> x509.Certificate:
    """The client certificate chains to the CA as a TLS server checks a client's."""
    ca = x509.load_pem_x509_certificate(ca_pem)
    leaf = _load(files.cert)
    verifier = PolicyBuilder().store(Store([ca])).build_client_verifier()
    verified = verifier.verify(leaf, [])
    assert verified.chain[-1] == ca
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is part of the test tools"
    for purpose in ("sslclient", "sslserver"):
        run = subprocess.run(
            [
                openssl,
                "verify",
                "-purpose",
                purpose,
                "-CAfile",
                str(files.ca_cert),
                str(files.cert),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0 and run.stdout.strip().endswith(": OK"), run.stdout + run.stderr
    return leaf


def test_generate_on_both_backends(backend: Backend, tmp_path: Path) -> None:
    namespace, client = new_namespace(backend, "tls")
    ca_pem, ca_key = make_ca()
    backend.create(raycluster("rc", namespace))
    backend.create(ca_secret("rc", namespace, ca_pem, ca_key))

    cluster = Cluster(ClusterConfiguration("rc", num_workers=0), client=client)
    files = cluster.generate_tls_cert(base_dir=tmp_path)

    assert files.directory == tmp_path / namespace / "rc"
    assert files.ca_cert.read_bytes() == ca_pem
    leaf = _check_chain(files, ca_pem)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == {
        "localhost",
        "rc-head-svc",
        f"rc-head-svc.{namespace}.svc",
        f"rc-head-svc.{namespace}.svc.cluster.local",
    }
    assert set(sans.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    }
    purposes = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(purposes) == {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH}
    usage = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and not usage.value.key_cert_sign
    constraints = leaf.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca is False

    for path in (files.ca_cert, files.cert, files.key):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(files.directory.stat().st_mode) == 0o700

    environ: dict[str, str] = {}
    files.export_env(environ)
    assert environ == {
        "RAY_USE_TLS": "1",
        "RAY_TLS_SERVER_CERT": str(files.cert),
        "RAY_TLS_SERVER_KEY": str(files.key),
        "RAY_TLS_CA_CERT": str(files.ca_cert),
    }


def test_kept_while_good_renewed_when_forced_or_the_ca_rotates(tmp_path: Path) -> None:
    with FakeCluster() as fc:
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
        first_ca, first_key = make_ca("first")
        fc.create(ca_secret("rc", "default", first_ca, first_key))
        files = generate_tls_cert("rc", base_dir=tmp_path, client=client)
        made = files.cert.read_bytes()

        assert generate_tls_cert("rc", base_dir=tmp_path, client=client).cert.read_bytes() == made
        forced = generate_tls_cert("rc", base_dir=tmp_path, force_regenerate=True, client=client)
        assert forced.cert.read_bytes() != made
        _check_chain(forced, first_ca)

        second_ca, second_key = make_ca("second", rsa_key=False, with_ski=False)
        secret = ca_secret("rc", "default", second_ca, second_key)
        fc.patch("secrets", "rc-ca-secret-x7k2p", {"data": secret["data"]}, "default")
        rotated = generate_tls_cert("rc", base_dir=tmp_path, client=client)
        assert rotated.ca_cert.read_bytes() == second_ca
        _check_chain(rotated, second_ca)
        assert sorted(p.name for p in tmp_path.joinpath("default").iterdir()) == ["rc"]


def test_the_simulated_operators_secret_and_the_codeflare_flow(tmp_path: Path) -> None:
    # The practice cluster's simulated KubeRay makes the CA Secret the platform's does.
    controller = RayClusterController(ca_secret=True)
    with FakeCluster(tick_interval=0.05, controllers=[controller]) as fc:
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
        fc.create(raycluster("demo", "default"))
        cluster = Cluster(ClusterConfiguration("demo", num_workers=0), client=client)
        cluster.wait_ready(timeout=30, progress=False)
        environ: dict[str, str] = {}
        files = cluster.generate_tls_cert(base_dir=tmp_path)
        assert export_env("demo", "default", base_dir=tmp_path, environ=environ) == files
        assert environ["RAY_TLS_CA_CERT"] == str(files.ca_cert)
        _check_chain(files, files.ca_cert.read_bytes())
        assert remove_tls_cert("demo", "default", base_dir=tmp_path)
        assert not files.directory.exists()
        assert not remove_tls_cert("demo", "default", base_dir=tmp_path)
        with pytest.raises(FileNotFoundError, match="call generate_tls_cert"):
            export_env("demo", "default", base_dir=tmp_path, environ=environ)


def test_missing_secret_or_key_names_them_and_writes_nothing(tmp_path: Path) -> None:
    base = tmp_path / "tls"
    with FakeCluster() as fc:
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
        with pytest.raises(CASecretNotFound, match=r"ray\.openshift\.ai/cluster-name=rc"):
            generate_tls_cert("rc", base_dir=base, client=client)
        # a secret with the label but another name (e.g. the OAuth one) is not the CA
        ca_pem, ca_key = make_ca()
        fc.create(ca_secret("rc", "default", ca_pem, ca_key, name="rc-oauth-config"))
        with pytest.raises(CASecretNotFound):
            generate_tls_cert("rc", base_dir=base, client=client)

        broken = ca_secret("rc", "default", ca_pem, ca_key, keys=("ca.crt", "private"))
        fc.create(broken)
        with pytest.raises(CASecretInvalid) as exc:
            generate_tls_cert("rc", base_dir=base, client=client)
        text = str(exc.value)
        assert "'rc-ca-secret-x7k2p'" in text and "'ca.key' or 'tls.key'" in text
        assert "it has: ca.crt, private" in text

        other_pem, _ = make_ca("other")
        key_b64 = broken["data"]["private"]
        mismatched = {"ca.crt": base64.b64encode(other_pem).decode(), "ca.key": key_b64}
        fc.patch("secrets", "rc-ca-secret-x7k2p", {"data": mismatched}, "default")
        with pytest.raises(CASecretInvalid, match=r"'ca.key' is not the key of 'ca.crt'"):
            generate_tls_cert("rc", base_dir=base, client=client)
        fc.patch("secrets", "rc-ca-secret-x7k2p", {"data": {"ca.crt": "bm90IGEgUEVN"}}, "default")
        with pytest.raises(CASecretInvalid, match=r"'ca.crt' is not a PEM certificate"):
            generate_tls_cert("rc", base_dir=base, client=client)
    assert not base.exists()


def test_bad_arguments_are_refused_before_any_request(tmp_path: Path) -> None:
    with FakeCluster() as fc:
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
        before = len(fc.requests)
        with pytest.raises(ConfigError) as exc:
            generate_tls_cert("Bad_Name", "-ns", days=0, base_dir=tmp_path, client=client)
        assert exc.value.fields == ["cluster_name", "namespace", "days"]
        assert len(fc.requests) == before
    assert list(tmp_path.iterdir()) == []


def test_a_failure_halfway_leaves_nothing_new_and_keeps_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "deep" / "tls"
    with FakeCluster() as fc:
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
        ca_pem, ca_key = make_ca()
        fc.create(ca_secret("rc", "default", ca_pem, ca_key))
        real_write = _client_tls._write_private
        written: list[str] = []

        def fail_on_the_key(path: Path, content: bytes) -> None:
            if path.name == "tls.key":
                raise OSError(28, "No space left on device")
            written.append(path.name)
            real_write(path, content)

        monkeypatch.setattr(_client_tls, "_write_private", fail_on_the_key)
        with pytest.raises(OSError, match="No space left"):
            generate_tls_cert("rc", base_dir=base, client=client)
        assert written == ["ca.crt", "tls.crt"]  # it did fail halfway
        assert not (tmp_path / "deep").exists()

        monkeypatch.setattr(_client_tls, "_write_private", real_write)
        files = generate_tls_cert("rc", base_dir=base, client=client)
        before = {p.name: p.read_bytes() for p in files.directory.iterdir()}
        monkeypatch.setattr(_client_tls, "_write_private", fail_on_the_key)
        with pytest.raises(OSError, match="No space left"):
            generate_tls_cert("rc", base_dir=base, force_regenerate=True, client=client)
        assert {p.name: p.read_bytes() for p in files.directory.iterdir()} == before
        assert sorted(p.name for p in files.directory.parent.iterdir()) == ["rc"]


def test_codeflare_names_point_here() -> None:
    with pytest.raises(AttributeError, match=r"use flarekit\.generate_tls_cert"):
        flarekit.generate_cert  # noqa: B018
