"""The plane's users: the admin, restricted and direct-access tokens it starts with, users
added later as ServiceAccounts with RBAC rules, and service-account tokens."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from flarekit_testing.apiserver import ApiError, Rule
from flarekit_testing.controlplane._base import JSON, NotSupportedByRealServer, PlaneBase

ADMIN = "flarekit-admin"
RESTRICTED = "flarekit-restricted"
DIRECT = "flarekit-direct"
USERS_NAMESPACE = "flarekit-users"


def write_token_file(root: Path, tokens: dict[str, str]) -> Path:
    """The API server's static token file for the three users the plane starts with."""
    path = root / "tokens.csv"
    path.write_text(
        f'{tokens[ADMIN]},{ADMIN},{ADMIN},"system:masters"\n'
        f"{tokens[RESTRICTED]},{RESTRICTED},{RESTRICTED}\n"
        f'{tokens[DIRECT]},{DIRECT},{DIRECT},"system:masters"\n'
    )
    path.chmod(0o600)
    return path


class Users(PlaneBase):
    """Tokens, and users with the rights RBAC grants them."""

    @property
    def token(self) -> str:
        """The bearer token of the admin user written into the kubeconfig."""
        return self._tokens[ADMIN]

    @property
    def restricted_token(self) -> str:
        """The bearer token of a user with no rights beyond those of every authenticated
        user (discovery, self reviews): anything else it asks is answered 403."""
        return self._tokens[RESTRICTED]

    def add_user(self, name: str, allow: list[Rule] | None = None) -> str:
        """A new user and its bearer token. Without `allow` it may do anything (bound to
        cluster-admin); with `allow` exactly what the rules grant, as RBAC rules.

        The user is a ServiceAccount in the `flarekit-users` namespace (a real API server
        reads static tokens only at start), so the server names it
        `system:serviceaccount:flarekit-users:<name>`."""
        rest = self.rest
        with contextlib.suppress(ApiError):
            rest.request("POST", "/api/v1/namespaces", {"metadata": {"name": USERS_NAMESPACE}})
        rest.request(
            "POST",
            f"/api/v1/namespaces/{USERS_NAMESPACE}/serviceaccounts",
            {"metadata": {"name": name}},
        )
        subject = {"kind": "ServiceAccount", "name": name, "namespace": USERS_NAMESPACE}
        role_name = f"flarekit-user-{name}"
        if allow is None:
            role_ref = {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            }
            self._bind(role_name, role_ref, subject, None)
        else:
            self._grant(role_name, subject, allow)
        token = rest.request(
            "POST",
            f"/api/v1/namespaces/{USERS_NAMESPACE}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 86400},
            },
        )["status"]["token"]
        self._clients.add(f"system:serviceaccount:{USERS_NAMESPACE}:{name}")
        return str(token)

    def _grant(self, role_name: str, subject: JSON, allow: list[Rule]) -> None:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        cluster_rules: list[JSON] = []
        by_namespace: dict[str, list[JSON]] = {}
        for rule in allow:
            if rule.users is not None:
                raise NotSupportedByRealServer(
                    "RBAC rules name no users: give add_user(...) rules without `user`"
                )
            entry: JSON = {
                "verbs": sorted(rule.verbs) if rule.verbs is not None else ["*"],
                "apiGroups": sorted(rule.groups) if rule.groups is not None else ["*"],
                "resources": sorted(rule.resources) if rule.resources is not None else ["*"],
            }
            if rule.names is not None:
                entry["resourceNames"] = sorted(rule.names)
            if rule.namespaces is None:
                cluster_rules.append(entry)
            else:
                for namespace in rule.namespaces:
                    by_namespace.setdefault(namespace, []).append(entry)
        if cluster_rules:
            self.rest.request(
                "POST",
                f"{rbac}/clusterroles",
                {"metadata": {"name": role_name}, "rules": cluster_rules},
            )
            self._bind(
                role_name,
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
                subject,
                None,
            )
        for namespace, rules in by_namespace.items():
            self.rest.request(
                "POST",
                f"{rbac}/namespaces/{namespace}/roles",
                {"metadata": {"name": role_name}, "rules": rules},
            )
            self._bind(
                role_name,
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
                subject,
                namespace,
            )

    def _bind(self, name: str, role_ref: JSON, subject: JSON, namespace: str | None) -> None:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        kind = "rolebindings" if namespace else "clusterrolebindings"
        prefix = f"{rbac}/namespaces/{namespace}" if namespace else rbac
        self.rest.request(
            "POST",
            f"{prefix}/{kind}",
            {"metadata": {"name": name}, "roleRef": role_ref, "subjects": [subject]},
        )

    def deny(self, *args: Any, **kwargs: Any) -> Rule:
        raise NotSupportedByRealServer(
            "RBAC only grants: there are no deny rules on a real API server. Use "
            "add_user(name, allow=[...]) or restricted_token for a user that gets 403"
        )

    def service_account_token(self, namespace: str, account: str) -> str:
        """A token of ServiceAccount `namespace/account`, requested as the kubelet requests
        a pod's projected token (valid for a day). Requests made with it are not the
        clients': they stay out of the request log."""
        token = self.rest.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 86400},
            },
        )["status"]["token"]
        return str(token)
