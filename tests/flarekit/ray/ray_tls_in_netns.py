"""A Ray head that requires mutual TLS, and a Ray client that connects with the certificate
`flarekit.generate_tls_cert` made. Runs in a private network and PID namespace.

Run by test_ray_client_tls.py as ``unshare -n -p -f --mount-proc --kill-child python
ray_tls_in_netns.py WORK_DIR``. Inside, as the platform would: a CA Secret for cluster
``tls-demo`` in a FakeCluster (the operator's part), the head's own certificate signed by that
CA, and ``ray start --head`` with ``RAY_USE_TLS=1``, so every gRPC port (the Ray client
server's included) demands a client certificate from that CA. Then, as a user would:
``generate_tls_cert``, ``export_env`` and ``ray.init("ray://127.0.0.1:10001")`` in a fresh
process running a remote function. A client with a certificate from another CA, and one with
none, get no answer to a PING that the right certificate gets answered.

Prints one JSON object per check (``{"check": ..., "ok": ..., "detail": ...}``); exits 0 when
every check passed, 90 if the head did not come up.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from ray_head_in_netns import bring_loopback_up, check_isolated, ray, run_as_init

from flarekit import Client, from_kubeconfig, generate_tls_cert
from flarekit_testing import FakeCluster
from flarekit_testing.apiserver._tls import make_ca as make_ca_pem

CLUSTER, NAMESPACE = "tls-demo", "default"
GCS_PORT, CLIENT_PORT = 6379, 10001
RAY_STARTUP_FAILED = 90
#: Ray's own failure, not the certificate's: its client proxy starts a server per client with
#: PR_SET_PDEATHSIG, and now and then (often on a loaded machine, also without TLS) that
#: server is killed as it starts; the proxy then answers with this. A new connection is what a
#: user would try; only this failure is tried again, and every attempt is reported.
SPECIFIC_SERVER_LOST = "Starting Ray client server failed"
CLIENT_ATTEMPTS = 3

CLIENT_PROGRAM = f"""
import ray
ray.init("ray://127.0.0.1:{CLIENT_PORT}", logging_level="ERROR")

@ray.remote
def double(x):
    return 2 * x

print("RESULT", ray.get(double.remote(21)), flush=True)
ray.shutdown()
"""

#: One real call to the Ray client server (its PING), with the certificate files given:
#: prints ANSWERED, or the gRPC status it failed with (UNAVAILABLE when TLS refused us).
PING = f"""
import sys, grpc
from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc
cert, key, ca = (open(p, "rb").read() if p else None for p in sys.argv[1:4])
credentials = grpc.ssl_channel_credentials(root_certificates=ca, private_key=key,
                                           certificate_chain=cert)
with grpc.secure_channel("127.0.0.1:{CLIENT_PORT}", credentials) as channel:
    stub = ray_client_pb2_grpc.RayletDriverStub(channel)
    ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
    try:
        stub.ClusterInfo(ping, timeout=float(sys.argv[4]), wait_for_ready=sys.argv[5] == "wait")
    except grpc.RpcError as exc:
        print(exc.code().name)
    else:
        print("ANSWERED")
"""


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str) -> tuple[x509.Certificate, rsa.RSAPrivateKey, bytes, bytes]:
    """A CA as the practice cluster's simulated operator makes one: (cert, key, both as PEM)."""
    cert_pem, key_pem = make_ca_pem(common_name)
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return x509.load_pem_x509_certificate(cert_pem), key, cert_pem, key_pem


def sign_head(ca: x509.Certificate, ca_key: rsa.RSAPrivateKey, folder: Path) -> dict[str, str]:
    """The head's own certificate (as the operator's init container makes it): signed by the
    cluster's CA, for 127.0.0.1 and localhost. Returns the head's TLS environment."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.UTC)
    names = [
        x509.DNSName("localhost"),
        x509.DNSName("127.0.0.1"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("ray-head"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(mode=0o700)
    files = {"server.crt": cert.public_bytes(serialization.Encoding.PEM)}
    files["server.key"] = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    files["ca.crt"] = ca.public_bytes(serialization.Encoding.PEM)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return {
        "RAY_USE_TLS": "1",
        "RAY_TLS_SERVER_CERT": str(folder / "server.crt"),
        "RAY_TLS_SERVER_KEY": str(folder / "server.key"),
        "RAY_TLS_CA_CERT": str(folder / "ca.crt"),
    }


def make_client_certificate(work: Path, ca_pem: bytes, ca_key_pem: bytes) -> Path:
    """What a user does: the operator's CA Secret exists; generate_tls_cert reads it."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": f"{CLUSTER}-ca-secret-q8v4d",
            "namespace": NAMESPACE,
            "labels": {"ray.openshift.ai/cluster-name": CLUSTER},
        },
        "data": {
            "ca.crt": base64.b64encode(ca_pem).decode(),
            "ca.key": base64.b64encode(ca_key_pem).decode(),
        },
    }
    with FakeCluster() as fc:
        fc.create(secret)
        client = Client(from_kubeconfig(fc.kubeconfig_path), namespace=NAMESPACE)
        files = generate_tls_cert(CLUSTER, NAMESPACE, base_dir=work / "certs", client=client)
    return files.directory


def report(check: str, ok: bool, detail: str = "") -> bool:
    print(json.dumps({"check": check, "ok": ok, "detail": detail[-3000:]}), flush=True)
    return ok


def ping(env: dict[str, str], cert: str, key: str, ca: str, wait: float) -> str:
    """The Ray client server's answer to a PING made with these files; with `wait`, the call
    waits up to that long for the server to come up."""
    mode = "wait" if wait > 10 else "once"
    run = subprocess.run(
        [sys.executable, "-c", PING, cert, key, ca, str(wait), mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=wait + 60,
    )
    return (run.stdout.strip().splitlines() or [run.stderr.strip()])[-1]


def main(work: Path) -> int:
    bring_loopback_up()
    ca, ca_key, ca_pem, ca_key_pem = make_ca(f"{CLUSTER}-ca")
    head_env = {**os.environ, **sign_head(ca, ca_key, work / "head")}
    head_env["RAY_USAGE_STATS_ENABLED"] = "0"
    client_dir = make_client_certificate(work, ca_pem, ca_key_pem)
    plain = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    cert, key, ca_file = (str(client_dir / n) for n in ("tls.crt", "tls.key", "ca.crt"))
    try:
        start = ray(
            "start",
            "--head",
            f"--port={GCS_PORT}",
            "--node-ip-address=127.0.0.1",
            f"--ray-client-server-port={CLIENT_PORT}",
            "--include-dashboard=false",
            "--num-cpus=1",
            "--num-gpus=0",
            "--object-store-memory=100000000",
            "--disable-usage-stats",
            f"--temp-dir={work / 'ray'}",
            env=head_env,
        )
        up = start.returncode == 0 and ping(plain, cert, key, ca_file, 90) == "ANSWERED"
        if not report("head up, client certificate accepted", up, start.stdout + start.stderr):
            return RAY_STARTUP_FAILED
        user_env = {**plain, "RAY_USAGE_STATS_ENABLED": "0"}
        exported: dict[str, str] = {}
        from flarekit.cluster import export_env

        export_env(CLUSTER, NAMESPACE, base_dir=work / "certs", environ=exported)
        tries = []
        for _ in range(CLIENT_ATTEMPTS):
            run = subprocess.run(
                [sys.executable, "-c", CLIENT_PROGRAM],
                env={**user_env, **exported},
                capture_output=True,
                text=True,
                timeout=180,
            )
            tries.append(run.stdout + run.stderr)
            if SPECIFIC_SERVER_LOST not in run.stderr:
                break
        results = [
            report(
                "ray.init with the exported certificate runs a task",
                run.returncode == 0 and "RESULT 42" in run.stdout,
                f"after {len(tries)} attempt(s):\n" + "\n--- next attempt ---\n".join(tries),
            )
        ]
        _, _, other_pem, other_key_pem = make_ca("another-ca")
        stranger = make_client_certificate(work / "stranger", other_pem, other_key_pem)
        wrong = ping(plain, str(stranger / "tls.crt"), str(stranger / "tls.key"), ca_file, 10)
        results.append(
            report("a certificate from another CA is refused", wrong == "UNAVAILABLE", wrong)
        )
        bare = ping(plain, "", "", ca_file, 10)
        results.append(report("no client certificate is refused", bare == "UNAVAILABLE", bare))
        return 0 if all(results) else 1
    finally:
        stop = ray("stop", "--force", env=head_env)
        print(f"ray stop: exit {stop.returncode}", flush=True)


if __name__ == "__main__":
    check_isolated()
    sys.exit(run_as_init(lambda: main(Path(sys.argv[1]))))
