"""The plane's certificates: one authority signs the API server's serving certificate, the
client certificates of its components and of users, and `_component_kubeconfig` writes the
kubeconfig a component or user connects with."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from flarekit_testing.controlplane._base import PlaneBase
from flarekit_testing.controlplane._pki import Authority, KeyPair, service_account_keys


@dataclass(frozen=True)
class Issued:
    """What the API server is started with: the authority, the service-account signing keys,
    its serving certificate and its client certificate towards the kubelets."""

    ca: Authority
    service_accounts: KeyPair
    serving: KeyPair
    kubelet_client: KeyPair


class Certificates(PlaneBase):
    """Issuing the plane's certificates and the kubeconfigs that use them."""

    def _issue_certificates(self, root: Path) -> Issued:
        pki = root / "pki"
        pki.mkdir()
        ca = self._ca = Authority(pki)
        sa = service_account_keys(pki)
        serving = ca.serving(
            "apiserver",
            ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            ("127.0.0.1", "10.96.0.1"),
        )
        kubelet_client = ca.client(
            "apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",)
        )
        return Issued(ca, sa, serving, kubelet_client)

    def _component_kubeconfig(self, ca: Authority, name: str, pair: KeyPair) -> Path:
        assert self._dir is not None
        path = self._dir / f"{name}.kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {"server": self.url, "certificate-authority": str(ca.ca_cert)},
                }
            ],
            "users": [
                {
                    "name": name,
                    "user": {"client-certificate": str(pair.cert), "client-key": str(pair.key)},
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": name}}],
            "current-context": "local",
        }
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def certificate_kubeconfig(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig that authenticates with a new client certificate for `user` in
        `groups` (`("system:masters",)` makes it an administrator)."""
        root = self._started()
        assert self._ca is not None
        stem = f"user-{uuid.uuid4().hex[:8]}"
        pair = self._ca.client(stem, user, tuple(groups))
        self._clients.add(user)
        path = self._component_kubeconfig(self._ca, stem, pair)
        assert path.parent == root
        return path
