"""Server `Warning` headers become `ServerWarning`s that point at the caller's line."""

from __future__ import annotations

import warnings

import pytest
from client_support import fc, raycluster  # noqa: F401  (fc: a fixture, used by `client`)

from flarekit import Client, ServerWarning
from flarekit.client._warnings import parse_warning_header
from flarekit_models.ray import v1alpha1


def test_warning_points_at_the_calling_line(client: Client, ns: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client.create(raycluster("w", bogus=1), namespace=ns, field_validation="Warn")
    [warning] = caught
    assert warning.category is ServerWarning
    assert str(warning.message) == 'unknown field "spec.bogus"'
    assert warning.filename == __file__


def test_deprecated_version_warns_on_list_and_watch(client: Client, ns: str) -> None:
    with pytest.warns(ServerWarning, match="ray.io/v1alpha1 RayCluster is deprecated") as caught:
        list(client.list(v1alpha1.RayCluster, namespace=ns))
    assert all(w.filename == __file__ for w in caught)
    with pytest.warns(ServerWarning, match="deprecated"):
        list(client.watch(v1alpha1.RayCluster, namespace=ns, timeout=1))


def test_warnings_can_be_escalated_to_errors(client: Client, ns: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServerWarning)
        with pytest.raises(ServerWarning):
            list(client.list(v1alpha1.RayCluster, namespace=ns))


@pytest.mark.parametrize(
    ("header", "texts"),
    [
        ('299 - "plain"', ["plain"]),
        ('299 - "a, b", 299 - "second"', ["a, b", "second"]),
        ('299 - "say \\"hi\\" \\\\ now"', ['say "hi" \\ now']),
        ('199 - "not a 299", 299 kube-apiserver "kept"', ["kept"]),
        ('299 - "dated" "Sat, 01 Jan 2000 00:00:00 GMT"', ["dated"]),
        ("garbage", []),
    ],
)
def test_parse_warning_header(header: str, texts: list[str]) -> None:
    assert parse_warning_header(header) == texts
