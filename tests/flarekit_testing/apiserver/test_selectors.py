"""Label and field selectors: the API server's grammar, matching and error messages."""

from __future__ import annotations

import pytest

from flarekit_testing.apiserver._selectors import (
    label_selector_from_dict,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "ray", "env": "prod", "tier": "gpu", "size": "8"}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("app=ray", True),
        ("app==ray", True),
        ("app=spark", False),
        ("app!=spark", True),
        ("missing!=x", True),  # != also matches when the key is absent
        ("env in (prod,dev)", True),
        ("env in (dev)", False),
        ("env notin (dev, test)", True),
        ("missing notin (x)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=ray,env=prod", True),
        ("app=ray,env=dev", False),
        ("  app = ray ,  env in ( prod )  ", True),
        ("size>4", True),
        ("size<4", False),
        ("app>4", False),  # not an integer label value
        ("tier in (in, notin, gpu)", True),  # keywords are values inside parentheses
        ("app=", False),
        ("missing=", False),
    ],
)
def test_label_selector_matching(text: str, matches: bool) -> None:
    assert parse_label_selector(text).matches(LABELS) is matches


def test_empty_value_matches_empty_label() -> None:
    assert parse_label_selector("a=").matches({"a": ""})
    assert parse_label_selector("a in (,x)").matches({"a": ""})


def test_canonical_string_form() -> None:
    selector = parse_label_selector("z notin (b,a), !y, x, w == 1, v in (foo,,baz)")
    assert str(selector) == "v in (,baz,foo),w==1,x,!y,z notin (a,b)"
    assert parse_label_selector("").empty


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
    ],
)
def test_label_selector_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_label_selector(text)
    assert str(err.value) == message


def test_invalid_label_key_is_reported_with_apiserver_wording() -> None:
    with pytest.raises(ValueError) as err:
        parse_label_selector("bad key!=x")
    assert str(err.value).startswith("unable to parse requirement: found 'key'")
    with pytest.raises(ValueError) as err:
        parse_label_selector("a@b=c")
    assert str(err.value) == (
        'unable to parse requirement: <nil>: Invalid value: "a@b": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )


def test_prefixed_keys() -> None:
    assert parse_label_selector("ray.io/node-type=head").matches({"ray.io/node-type": "head"})
    with pytest.raises(ValueError, match="prefix part a lowercase RFC 1123 subdomain"):
        parse_label_selector("Ray.IO/x=1")
    with pytest.raises(ValueError, match="a qualified name must consist"):
        parse_label_selector("a/b/c")


def test_invalid_label_value() -> None:
    with pytest.raises(ValueError) as err:
        parse_label_selector("a=" + "v" * 64)
    assert str(err.value) == (
        'unable to parse requirement: values[0][a]: Invalid value: "' + "v" * 64 + '": '
        "must be no more than 63 characters"
    )
    with pytest.raises(ValueError, match=r"values\[0\]\[a\]: Invalid value: \"-x\""):
        parse_label_selector("a in (-x)")


def test_label_selector_from_dict() -> None:
    sel = {
        "matchLabels": {"ray.io/cluster": "demo", "app": "ray"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "gpu", "operator": "DoesNotExist"},
            {"key": "zone", "operator": "NotIn", "values": ["b"]},
            {"key": "tier", "operator": "Exists"},
        ],
    }
    text = label_selector_from_dict(sel)
    assert text == "app=ray,env in (dev,prod),!gpu,ray.io/cluster=demo,tier,zone notin (b)"
    assert parse_label_selector(text).matches(
        {"app": "ray", "env": "dev", "ray.io/cluster": "demo", "tier": "x"}
    )
    assert label_selector_from_dict({}) == ""


@pytest.mark.parametrize(
    ("sel", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Near"}]}, '"Near" is not a valid'),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "values must be non-empty"),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "values must be empty",
        ),
        ({"matchLabels": {"a": "not ok"}}, r"values\[0\]\[a\]: Invalid value"),
        ({"matchLabels": {"": "x"}}, 'key: Invalid value: "": name part must be non-empty'),
    ],
)
def test_label_selector_from_dict_errors(sel: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        label_selector_from_dict(sel)


# --- field selectors -----------------------------------------------------------------------

OBJ = {"metadata": {"name": "demo", "namespace": "team-a"}}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("metadata.name=demo", True),
        ("metadata.name==demo", True),
        ("metadata.name!=demo", False),
        ("metadata.namespace=team-a,metadata.name=demo", True),
        ("metadata.namespace!=team-a", False),
        ("metadata.namespace=team-b", False),
        ("metadata.name=demo,", True),  # empty terms are skipped
    ],
)
def test_field_selector_matching(text: str, matches: bool) -> None:
    assert parse_field_selector(text).matches(OBJ) is matches


def test_field_selector_cluster_scoped_namespace_is_empty() -> None:
    cluster_scoped = {"metadata": {"name": "q"}}
    assert parse_field_selector("metadata.namespace=").matches(cluster_scoped)
    assert not parse_field_selector("metadata.namespace=x").matches(cluster_scoped)


def test_field_selector_escapes() -> None:
    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d")
    assert selector.matches({"metadata": {"name": "a,b=c\\d"}})
    assert str(selector) == r"metadata.name=a\,b\=c\\d"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "spec.foo=1",
            '"spec.foo" is not a known field selector: only "metadata.name", '
            '"metadata.namespace"',
        ),
        (
            "metadata.name =x",
            '"metadata.name " is not a known field selector: only "metadata.name", '
            '"metadata.namespace"',
        ),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
        (r"metadata.name=a\x", "invalid field selector: invalid escape sequence: \\x"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_field_selector(text)
    assert str(err.value) == message
