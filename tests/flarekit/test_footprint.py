"""What installing and importing flarekit costs: no Ray, and at most 20 distributions.

codeflare-sdk pins Ray and installs about a hundred distributions; flarekit's facade talks to
KubeRay and to Ray's Jobs REST API over HTTP, so neither importing it nor installing it may
bring Ray in. The distribution count is worked out offline from the installed metadata:
flarekit's runtime requirements (no extras), followed recursively with the extras each one
asks for and markers evaluated for this interpreter, as ``pip install .`` would resolve them.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: 20 until the CRDs' CEL rules were checked before writes: cel-python brings lark, pendulum,
#: google-re2 and jmespath (25 now; codeflare-sdk's install: 100).
MAX_DISTRIBUTIONS = 25


def test_importing_flarekit_and_its_facade_never_imports_ray() -> None:
    code = (
        "import sys, flarekit\n"
        "assert 'ray' not in sys.modules\n"
        "for name in flarekit.__all__:\n"
        "    getattr(flarekit, name)\n"
        "import flarekit.cluster, flarekit.job, flarekit.kueue, flarekit.ray, flarekit.cli\n"
        "import flarekit.walkthrough\n"
        "from flarekit.cli._app import build_parser\n"
        "build_parser()\n"
        "flarekit.cluster.to_dict(flarekit.ClusterConfiguration(name='x', num_workers=2))\n"
        "import kubernetes.client\n"
        "loaded = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"Ray modules imported: {done.stdout.strip()}"


def _closure(name: str) -> dict[str, str]:
    """Every distribution `name` pulls in at runtime -> why (the requirement that asked)."""
    why: dict[str, str] = {str(canonicalize_name(name)): "(flarekit itself)"}
    followed: dict[str, set[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    while todo:
        dist, extras = todo.pop()
        key = str(canonicalize_name(dist))
        if key in followed and extras <= followed[key]:
            continue
        followed[key] = followed.get(key, set()) | extras
        try:
            requires = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            continue  # required here but not installed: counted, cannot be followed
        for text in requires:
            req = Requirement(text)
            active = ["", *sorted(extras)]
            if req.marker is not None and not any(
                req.marker.evaluate({"extra": e}) for e in active
            ):
                continue
            why.setdefault(str(canonicalize_name(req.name)), f"{key}: {text}")
            todo.append((req.name, frozenset(req.extras)))
    return why


def test_pip_install_pulls_in_at_most_25_distributions_and_no_ray() -> None:
    found = _closure("flarekit")
    listing = "\n".join(f"  {name:24} <- {reason}" for name, reason in sorted(found.items()))
    assert len(found) <= MAX_DISTRIBUTIONS, f"{len(found)} distributions:\n{listing}"
    assert "ray" not in found, listing
    assert {"pydantic", "kubernetes", "pyyaml"} <= set(found), listing


def test_the_count_follows_extras_and_markers() -> None:
    found = _closure("flarekit")
    # dev/test-only packages are extras of flarekit and never part of a plain install
    assert not {"pytest", "mypy", "jinja2", "cryptography"} & set(found)
    # the closure follows requirements: pydantic brings its compiled core
    assert "pydantic-core" in found


def test_the_first_cell_builds_no_pydantic_schema_and_the_deferred_ones_work() -> None:
    # The client's list, status and watch containers build their validators on first use,
    # not while the README's first cell imports (that also spares pydantic's plugin scan);
    # the close-match finder for misspelt parameters loads when one is misspelt.
    code = (
        "import sys\n"
        "from flarekit import Client, Cluster, ClusterConfiguration, TrainJob, list_queues\n"
        "import pydantic\n"
        "def subclasses(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from subclasses(sub)\n"
        "built = [c.__qualname__ for c in subclasses(pydantic.BaseModel)\n"
        "         if c.__dict__.get('__pydantic_complete__')]\n"
        "assert built == [], built\n"
        "assert 'difflib' not in sys.modules  # loaded for a wrong parameter name only\n"
        "from flarekit.client._codec import ResourceList, StatusBody, WatchLine, decode_page\n"
        "from flarekit.client._codec import object_or_status\n"
        "from flarekit_models.ray.v1 import RayCluster\n"
        'page = decode_page(ResourceList[RayCluster], b\'{"metadata": {"continue": "t"},\'\n'
        '    b\' "items": [{"metadata": {"name": "a"}, "x-kept": 1}]}\')\n'
        "assert page.metadata.continue_ == 't' and type(page.items[0]) is RayCluster\n"
        "assert page.items[0].to_dict()['x-kept'] == 1\n"
        "line = WatchLine[RayCluster].model_validate_json(\n"
        '    b\'{"type": "ERROR", "object": {"kind": "Status", "code": 410}}\')\n'
        "assert isinstance(line.object, StatusBody) and line.object.code == 410\n"
        "gone = object_or_status(RayCluster).validate_python({'kind': 'Status', 'code': 200})\n"
        "assert isinstance(gone, StatusBody)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
