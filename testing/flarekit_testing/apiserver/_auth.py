"""Bearer-token authentication and an RBAC-like allow/deny policy.

Real clusters reject unauthenticated calls (401) and forbid verbs per user, resource and
namespace (403). Code that handles those answers needs a server that sends them; this module
decides who a token belongs to and whether a request is allowed, and words the denial as
kube-apiserver's authorization filter does.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field

from flarekit_testing.apiserver import _errors

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
#: What any authenticated user may create to learn about itself.
SELF_REVIEWS = ("selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews")


@dataclass(frozen=True)
class Attributes:
    """What a resource request wants to do, in the authorizer's terms."""

    user: str
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""


@dataclass(frozen=True)
class Rule:
    """Matches requests; a None field matches anything. `resource` may be `plural/subresource`."""

    verbs: frozenset[str] | None = None
    resources: frozenset[str] | None = None
    groups: frozenset[str] | None = None
    namespaces: frozenset[str] | None = None
    names: frozenset[str] | None = None
    users: frozenset[str] | None = None

    def matches(self, a: Attributes) -> bool:
        resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        return (
            (self.verbs is None or a.verb in self.verbs)
            and (
                self.resources is None or resource in self.resources or a.resource in self.resources
            )
            and (self.groups is None or a.group in self.groups)
            and (self.namespaces is None or a.namespace in self.namespaces)
            and (self.names is None or a.name in self.names)
            and (self.users is None or a.user in self.users)
        )


def _set(value: str | list[str] | tuple[str, ...] | None, what: str) -> frozenset[str] | None:
    if value is None:
        return None
    values = [value] if isinstance(value, str) else list(value)
    if what == "verb":
        unknown = [v for v in values if v not in VERBS]
        if unknown:
            raise ValueError(f"unknown verb(s) {unknown}: allowed values are {', '.join(VERBS)}")
    return frozenset(values)


def rule(
    verb: str | list[str] | None = None,
    resource: str | list[str] | None = None,
    group: str | list[str] | None = None,
    namespace: str | list[str] | None = None,
    name: str | list[str] | None = None,
    user: str | list[str] | None = None,
) -> Rule:
    """Build a Rule from friendly arguments (a string or a list each; None means any)."""
    return Rule(
        verbs=_set(verb, "verb"),
        resources=_set(resource, "resource"),
        groups=_set(group, "group"),
        namespaces=_set(namespace, "namespace"),
        names=_set(name, "name"),
        users=_set(user, "user"),
    )


@dataclass
class Policy:
    """Tokens and rules. A user with an allow-list may do only what it lists; denies win."""

    admin_user: str = "flarekit-admin"
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _users: dict[str, str] = field(default_factory=dict)
    _allow: dict[str, list[Rule]] = field(default_factory=dict)
    _deny: list[Rule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._users[self.admin_token] = self.admin_user

    def add_token(
        self, user: str, allow: list[Rule] | None = None, token: str | None = None
    ) -> str:
        token = token or secrets.token_urlsafe(24)
        with self._lock:
            self._users[token] = user
            if allow is not None:
                self._allow[user] = list(allow)
        return token

    def deny(self, r: Rule) -> Rule:
        with self._lock:
            self._deny.append(r)
        return r

    def clear(self) -> None:
        """Drop every deny rule (tokens and allow-lists stay)."""
        with self._lock:
            self._deny.clear()

    def authenticate(self, authorization: str | None) -> str:
        """The user behind an `Authorization: Bearer` header; 401 otherwise."""
        # The scheme is case-insensitive, as in kube-apiserver ("bearer" is what the
        # official in-cluster loader sends).
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _errors.unauthorized()
        with self._lock:
            user = self._users.get(token.strip())
        if user is None:
            raise _errors.unauthorized()
        return user

    def allows(self, a: Attributes) -> bool:
        """Whether `a` is allowed: not denied, and on the user's allow-list if it has one.

        Every authenticated user may ask about itself (the self reviews), as Kubernetes'
        `system:basic-user` role grants, unless a deny rule says otherwise.
        """
        with self._lock:
            if any(r.matches(a) for r in self._deny):
                return False
            allow = self._allow.get(a.user)
            if allow is None or a.resource in SELF_REVIEWS:
                return True
            return any(r.matches(a) for r in allow)

    def is_admin(self, user: str) -> bool:
        with self._lock:
            return user not in self._allow

    def groups(self, user: str) -> list[str]:
        """The user's groups: the admin is in `system:masters`, as a cluster admin is."""
        base = ["system:authenticated"]
        return ["system:masters", *base] if user == self.admin_user else base

    def allow_rules(self, user: str) -> list[Rule] | None:
        """The user's allow-list (None: may do anything not denied)."""
        with self._lock:
            rules = self._allow.get(user)
            return None if rules is None else list(rules)

    def user_for_token(self, token: str) -> str | None:
        with self._lock:
            return self._users.get(token)

    def authorize(self, a: Attributes) -> None:
        """Raise 403 Forbidden, worded as the apiserver does, unless `a` is allowed."""
        if self.allows(a):
            return
        resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        why = f'User "{a.user}" cannot {a.verb} resource "{resource}" in API group "{a.group}"'
        why += f' in the namespace "{a.namespace}"' if a.namespace else " at the cluster scope"
        raise _errors.forbidden(a.resource, a.group, a.name, why)
