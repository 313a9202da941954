"""The review APIs: who am I, may I, what may I (authentication.k8s.io, authorization.k8s.io).

`kubectl auth can-i` / `whoami`, codeflare-sdk's auth detection and operators' permission
checks create SelfSubjectAccessReviews, SelfSubjectRulesReviews, SelfSubjectReviews and
TokenReviews. These are not stored: the server answers the request object with a status
computed from FakeCluster's own tokens and rules (`add_user(allow=...)`, `deny(...)`), the
way kube-apiserver answers from its authenticator and RBAC. Every authenticated user may
create the self reviews (RBAC's `system:basic-user`); a TokenReview needs the right to
create `tokenreviews`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit_testing.apiserver import _apply, _errors
from flarekit_testing.apiserver._auth import Attributes, Policy, Rule
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._meta import timestamp
from flarekit_testing.apiserver._resources import ResourceType, Version
from flarekit_testing.apiserver._schema_shapes import STRING, atomic_list, kind_schema, obj
from flarekit_testing.apiserver._strategy import Strategy

JSON = dict[str, Any]

AUTHN = "authentication.k8s.io"
AUTHZ = "authorization.k8s.io"
AUDIENCE = "https://kubernetes.default.svc"

#: What RBAC's default roles give every authenticated user (system:basic-user,
#: system:public-info-viewer, system:discovery), as kube-apiserver lists them.
BASIC_RESOURCE_RULES: list[JSON] = [
    {
        "verbs": ["create"],
        "apiGroups": [AUTHZ],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
    {"verbs": ["create"], "apiGroups": [AUTHN], "resources": ["selfsubjectreviews"]},
]
PUBLIC_PATHS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
DISCOVERY_PATHS = [
    *("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*"),
    *("/readyz", "/version", "/version/"),
]
BASIC_NON_RESOURCE_RULES: list[JSON] = [
    {"verbs": ["get"], "nonResourceURLs": PUBLIC_PATHS},
    {"verbs": ["get"], "nonResourceURLs": DISCOVERY_PATHS},
]


class Review(Strategy):
    """A create-only kind answered, not stored."""

    generation = False
    typed = True

    def answer(self, policy: Policy, user: str, doc: JSON) -> JSON:
        raise NotImplementedError


def _attributes_spec() -> JSON:
    resource = obj(
        {
            k: STRING
            for k in ("namespace", "verb", "group", "version", "resource", "subresource", "name")
        },
        open_=True,
    )
    return obj(
        {
            "resourceAttributes": resource,
            "nonResourceAttributes": obj({"path": STRING, "verb": STRING}),
        }
    )


def _invalid(kind: str, group: str, path: str, why: str) -> _errors.ApiError:
    return _errors.invalid(
        kind, group, "", [_errors.Cause("FieldValueInvalid", f"Invalid value: null: {why}", path)]
    )


class AccessReview(Review):
    def answer(self, policy: Policy, user: str, doc: JSON) -> JSON:
        spec = doc.get("spec") or {}
        resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if (resource is None) == (non_resource is None):
            raise _invalid(
                "",
                AUTHZ,
                "spec.resourceAttributes",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        if resource is not None:
            allowed = policy.allows(
                Attributes(
                    user,
                    str(resource.get("verb", "")),
                    str(resource.get("group", "")),
                    str(resource.get("resource", "")),
                    str(resource.get("subresource", "")),
                    str(resource.get("namespace", "")),
                    str(resource.get("name", "")),
                )
            )
        else:
            assert isinstance(non_resource, dict)
            path = str(non_resource.get("path", ""))
            verb = str(non_resource.get("verb", ""))
            allowed = policy.is_admin(user) and policy.allow_rules(user) is None
            allowed = allowed or (verb == "get" and _path_allowed(path, DISCOVERY_PATHS))
        out = copy_json(doc)
        out["status"] = {"allowed": allowed}
        return out


def _path_allowed(path: str, patterns: list[str]) -> bool:
    return any(p == path or (p.endswith("*") and path.startswith(p[:-1])) for p in patterns)


def _rbac_rule(rule: Rule) -> JSON:
    """One FakeCluster rule as the RBAC policy rule a rules review lists."""

    def values(found: frozenset[str] | None) -> list[str]:
        return sorted(found) if found is not None else ["*"]

    out: JSON = {
        "verbs": values(rule.verbs),
        "apiGroups": values(rule.groups),
        "resources": values(rule.resources),
    }
    if rule.names is not None:
        out["resourceNames"] = sorted(rule.names)
    return out


class RulesReview(Review):
    def answer(self, policy: Policy, user: str, doc: JSON) -> JSON:
        namespace = str((doc.get("spec") or {}).get("namespace", ""))
        if not namespace:
            raise _errors.invalid(
                "SelfSubjectRulesReview",
                AUTHZ,
                "",
                [_errors.Cause("FieldValueRequired", "Required value", "spec.namespace")],
            )
        rules = policy.allow_rules(user)
        resource_rules = copy_json(BASIC_RESOURCE_RULES)
        non_resource = copy_json(BASIC_NON_RESOURCE_RULES)
        if rules is None:
            resource_rules.append({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
            non_resource.insert(0, {"verbs": ["*"], "nonResourceURLs": ["*"]})
        else:
            resource_rules.extend(
                _rbac_rule(r)
                for r in rules
                if r.namespaces is None or namespace in r.namespaces
                if r.users is None or user in r.users
            )
        out = copy_json(doc)
        out["metadata"] = {}
        out["spec"] = {}
        out["status"] = {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource,
            "incomplete": False,
        }
        return out


def _user_info(policy: Policy, user: str) -> JSON:
    """A user as the token authenticator describes it (its uid is its name, as in the token
    file of flarekit's ControlPlane)."""
    return {"username": user, "uid": user, "groups": policy.groups(user)}


class SelfReview(Review):
    def answer(self, policy: Policy, user: str, doc: JSON) -> JSON:
        out = copy_json(doc)
        out["metadata"] = {"creationTimestamp": timestamp()}
        out["status"] = {"userInfo": _user_info(policy, user)}
        return out


class TokenReview(Review):
    def answer(self, policy: Policy, user: str, doc: JSON) -> JSON:
        spec = doc.get("spec") or {}
        token = str(spec.get("token", ""))
        found = policy.user_for_token(token) if token else None
        out = copy_json(doc)
        if found is None:
            out["status"] = {"user": {}, "error": "invalid bearer token"}
            return out
        audiences = spec.get("audiences") or [AUDIENCE]
        out["status"] = {
            "authenticated": True,
            "user": _user_info(policy, found),
            "audiences": audiences,
        }
        return out


def _kind(group: str, kind: str, plural: str, strategy: Review, spec: JSON | None) -> ResourceType:
    schema = kind_schema(
        spec=spec, status={"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    return ResourceType(
        group=group,
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        list_kind=f"{kind}List",
        namespaced=False,
        versions=(Version("v1", True, True, schema),),
        strategy=strategy,
        verbs=("create",),
    )


REVIEW_KINDS = (
    _kind(AUTHN, "SelfSubjectReview", "selfsubjectreviews", SelfReview(), None),
    _kind(
        AUTHN,
        "TokenReview",
        "tokenreviews",
        TokenReview(),
        obj({"token": STRING, "audiences": atomic_list(STRING)}),
    ),
    _kind(
        AUTHZ,
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        AccessReview(),
        _attributes_spec(),
    ),
    _kind(
        AUTHZ,
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        RulesReview(),
        obj({"namespace": STRING}),
    ),
)


def is_review(rt: ResourceType) -> bool:
    return isinstance(rt.strategy, Review)


def answer(
    policy: Policy,
    user: str,
    rt: ResourceType,
    doc: Mapping[str, Any],
    manager: str,
    api_version: str,
) -> JSON:
    """The review `doc` answered for `user` (metadata as kube-apiserver returns it)."""
    assert isinstance(rt.strategy, Review)
    body = dict(doc)
    body["apiVersion"], body["kind"] = api_version, rt.kind
    body.pop("status", None)
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    body["metadata"] = {k: v for k, v in (meta or {}).items() if k in ("name", "labels")}
    if rt.kind in ("SelfSubjectAccessReview", "TokenReview"):
        _apply.record_update(None, body, manager, api_version, "", False)
    return rt.strategy.answer(policy, user, body)
