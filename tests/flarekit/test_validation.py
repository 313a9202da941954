"""Problem reports and the generic checks shared by the facades."""

from __future__ import annotations

from decimal import Decimal

import pytest

from flarekit._validation import (
    DEFAULT_EXTENDED_RESOURCES,
    ConfigError,
    Problem,
    ValidationReport,
    check_count,
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_extended_resources,
    check_label_value,
    check_labels,
    check_limit_not_below_request,
    check_min_max,
    check_qualified_name,
    check_quantity,
    check_ray_image_version,
    ray_version_of_image,
)


def test_report_collects_and_raises_everything_at_once() -> None:
    report = ValidationReport("thing 'x'")
    assert report.ok
    report.raise_if_problems()  # nothing to raise
    report.add("a", 1, "too small", "a number > 1")
    report.add("b.c[0]", "zz", "unknown", "one of 'x', 'y'")
    assert not report.ok and len(report) == 2 and report.fields == ["a", "b.c[0]"]
    with pytest.raises(ConfigError) as info:
        report.raise_if_problems()
    error = info.value
    assert isinstance(error, ValueError)
    assert error.fields == ["a", "b.c[0]"]
    assert str(error).splitlines() == [
        "2 problems in thing 'x':",
        "  - a=1: too small; expected a number > 1",
        "  - b.c[0]='zz': unknown; expected one of 'x', 'y'",
    ]


def test_long_values_are_shortened_to_one_line() -> None:
    report = ValidationReport()
    report.add("v", "x" * 500, "bad", "short")
    line = str(report.error()).splitlines()[1]
    assert len(line) < 120 and line.count("x") < 100 and "..." in line


def test_a_problem_never_renders_the_whole_of_its_value() -> None:
    # A value read from a file may be huge, or alias-shared (a YAML "billion laughs" is
    # small in memory and billions of items when rendered): only what is shown is rendered.
    rendered: list[int] = []

    class Item:
        def __repr__(self) -> str:
            rendered.append(1)
            return "item"

    level: object = [Item() for _ in range(9)]
    for _ in range(30):  # 9**30 items if rendered in full
        level = [level] * 9
    text = str(Problem("worker_groups", level, "not a list of groups", "a list"))
    assert text.startswith("worker_groups=[[[") and len(text) < 200
    assert len(rendered) < 50


@pytest.mark.parametrize("good", ["a", "my-name", "a1", "1a", "x" * 63])
def test_dns1123_label_accepts(good: str) -> None:
    report = ValidationReport()
    assert check_dns1123_label(report, "f", good) and report.ok


@pytest.mark.parametrize("bad", ["", "My-name", "-a", "a-", "a.b", "a_b", "x" * 64, 3, None])
def test_dns1123_label_refuses(bad: object) -> None:
    report = ValidationReport()
    assert not check_dns1123_label(report, "f", bad)
    assert report.fields == ["f"] and "lower-case letters" in report.problems[0].expected


def test_dns1035_label_needs_a_leading_letter() -> None:
    report = ValidationReport()
    assert check_dns1035_label(report, "name", "demo-1")
    assert not check_dns1035_label(report, "name", "1demo")
    assert report.fields == ["name"]


@pytest.mark.parametrize(("value", "ok"), [("a.b-c", True), ("x" * 254, False), ("A.b", False)])
def test_dns1123_subdomain(value: str, ok: bool) -> None:
    assert check_dns1123_subdomain(ValidationReport(), "f", value) is ok


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("app", True),
        ("App_Name.x", True),
        ("example.com/name", True),
        ("kueue.x-k8s.io/queue-name", True),
        ("/name", False),
        ("a/b/c", False),
        ("Example.com/name", False),
        ("-x", False),
        ("x" * 64, False),
        ("", False),
    ],
)
def test_qualified_names(key: str, ok: bool) -> None:
    assert check_qualified_name(ValidationReport(), "k", key) is ok


@pytest.mark.parametrize(
    ("value", "ok"), [("", True), ("v1.2_x", True), ("-v", False), ("x" * 64, False)]
)
def test_label_values(value: str, ok: bool) -> None:
    assert check_label_value(ValidationReport(), "v", value) is ok


def test_labels_name_the_bad_entry() -> None:
    report = ValidationReport()
    check_labels(report, "labels", {"good": "yes", "bad key!": "v", "k": "bad value!"})
    assert report.fields == ["labels['bad key!']", "labels['k']"]
    report = ValidationReport()
    check_labels(report, "annotations", {"a": "any text: at all!"}, values_are_labels=False)
    assert report.ok


@pytest.mark.parametrize(
    ("value", "ok"), [(0, True), (7, True), (-3, False), ("3", False), (True, False), (1.0, False)]
)
def test_counts(value: object, ok: bool) -> None:
    report = ValidationReport()
    check_count(report, "num_workers", value)
    assert report.ok is ok
    if not ok:
        assert report.problems[0].field == "num_workers" and report.problems[0].value == value


def test_min_max() -> None:
    report = ValidationReport()
    assert check_min_max(report, "min_workers", 1, "max_workers", 2)
    assert check_min_max(report, "min_workers", None, "max_workers", 2)
    assert not check_min_max(report, "min_workers", 5, "max_workers", 2)
    assert report.fields == ["min_workers"] and "max_workers" in str(report.error())


def test_quantity_problem_names_field_value_and_hint() -> None:
    report = ValidationReport()
    assert check_quantity(report, "worker_memory_requests", "8Gb") is None
    (problem,) = report.problems
    assert problem.field == "worker_memory_requests" and problem.value == "8Gb"
    assert "'8Gi'" in problem.message and "'8G'" in problem.message
    assert "8Gi" in problem.expected
    assert check_quantity(report, "x", None, allow_none=True) is None and len(report) == 1
    assert check_quantity(report, "x", "-1", allow_negative=True) == Decimal(-1)


def test_limits_below_requests() -> None:
    report = ValidationReport()
    request, limit = Decimal("2"), Decimal("0.5")
    assert not check_limit_not_below_request(
        report, "worker_cpu_requests", request, "worker_cpu_limits", limit, "500m"
    )
    (problem,) = report.problems
    assert problem.field == "worker_cpu_limits" and problem.value == "500m"
    assert "below worker_cpu_requests (2)" in problem.message
    assert check_limit_not_below_request(report, "r", Decimal(1), "l", Decimal(1), 1)
    assert check_limit_not_below_request(report, "r", None, "l", Decimal(1), 1)


def test_extended_resources() -> None:
    report = ValidationReport()
    counts = check_extended_resources(
        report,
        "worker_extended_resource_requests",
        {
            "nvidia.com/gpu": 2,
            "google.com/tpu": "4",
            "amd.com/gpu": -1,
            "x.io/fpga": 1,
            "intel.com/gpu": "1.5",
        },
        DEFAULT_EXTENDED_RESOURCES,
    )
    assert counts == {"nvidia.com/gpu": 2, "google.com/tpu": 4}
    assert report.fields == [
        "worker_extended_resource_requests['amd.com/gpu']",
        "worker_extended_resource_requests['x.io/fpga']",
        "worker_extended_resource_requests['intel.com/gpu']",
    ]
    assert "extended_resource_mapping" in report.problems[1].expected
    report = ValidationReport()
    counts = check_extended_resources(
        report, "r", {"x.io/fpga": 1}, {**DEFAULT_EXTENDED_RESOURCES, "x.io/fpga": "FPGA"}
    )
    assert report.ok and counts == {"x.io/fpga": 1}


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("rayproject/ray:2.9.0-py311", "2.9.0"),
        ("quay.io/modh/ray:2.47.1-py311-cu121", "2.47.1"),
        ("rayproject/ray-ml:2.3.0", "2.3.0"),
        ("rayproject/ray:2.9.0", "2.9.0"),
        ("localhost:5000/ray:2.10.1-gpu", "2.10.1"),
        ("rayproject/ray:2.9.0@sha256:" + "a" * 64, "2.9.0"),
        ("rayproject/ray:latest", None),
        ("rayproject/ray:nightly-py311", None),
        ("quay.io/modh/ray@sha256:" + "a" * 64, None),
        ("localhost:5000/ray", None),
        ("myorg/trainer:1.0.3", None),
        ("example/ray:tag", None),
    ],
)
def test_ray_version_of_image(image: str, version: str | None) -> None:
    assert ray_version_of_image(image) == version


def test_ray_image_version_mismatch_names_both() -> None:
    report = ValidationReport()
    assert not check_ray_image_version(
        report, "image", "rayproject/ray:2.9.0-py311", "ray_version", "2.47.1"
    )
    (problem,) = report.problems
    assert problem.field == "image" and "2.9.0" in problem.message and "2.47.1" in problem.message
    assert check_ray_image_version(
        report, "image", "rayproject/ray:2.47.1", "ray_version", "2.47.1"
    )
    assert check_ray_image_version(report, "image", "rayproject/ray:2.47.1", "ray_version", "2.47")
    assert check_ray_image_version(report, "image", "myorg/train:1.0", "ray_version", "2.47.1")
    assert not check_ray_image_version(report, "image", None, "ray_version", "two")
    assert report.fields == ["image", "ray_version"]
