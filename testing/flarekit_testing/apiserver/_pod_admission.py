"""What kube-apiserver's default admission plugins add to a new pod (ServiceAccount,
DefaultTolerationSeconds, Priority).

Why apart from `pods`: the pod strategy calls it once per create; what the plugins add is a
list of Kubernetes defaults of its own, read against the plugins' documentation.
"""

from __future__ import annotations

import secrets
from typing import Any

__all__ = ["TOKEN_PATH", "admit"]

JSON = dict[str, Any]

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_UNTOLERATED = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _token_volume(name: str) -> JSON:
    return {
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


def admit(pod: JSON) -> None:
    """What kube-apiserver's default admission plugins add to a new pod: the service account
    (ServiceAccount: `default`, its token as a projected volume mounted in every container),
    tolerations of not-ready and unreachable nodes for 300 s (DefaultTolerationSeconds), the
    default priority and preemption policy (Priority)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = account
    containers = [
        c
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]
    if spec.get("automountServiceAccountToken") is not False:
        suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
        volume = f"kube-api-access-{suffix}"
        spec["volumes"] = [*(spec.get("volumes") or []), _token_volume(volume)]
        for c in containers:
            mounts = c.get("volumeMounts") or []
            if not any(m.get("mountPath") == TOKEN_PATH for m in mounts if isinstance(m, dict)):
                c["volumeMounts"] = [
                    *mounts,
                    {"name": volume, "readOnly": True, "mountPath": TOKEN_PATH},
                ]
    tolerations = list(spec.get("tolerations") or [])
    for key in _UNTOLERATED:
        if not any(isinstance(t, dict) and t.get("key") in (key, None) for t in tolerations):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    spec["tolerations"] = tolerations
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"
