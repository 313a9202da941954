"""The docs name tests that exist: every test function, test file or test folder that
`docs/fakecluster.md` and `docs/operators.md` name in running text (in backticks, outside
code examples) is found in the repository, so a renamed or removed test cannot leave a
document citing it as proof of something."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = ("docs/fakecluster.md", "docs/operators.md")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`([^`\n]+)`")
_FUNCTION = re.compile(r"test_[A-Za-z0-9_]+")
_FILE = re.compile(r"(?:[\w./-]+/)?test_[\w-]+\.py")


def named_tests(text: str) -> list[str]:
    """What the running text names in backticks: test functions (``test_x``), test files
    (``test_x.py``, ``tests/a/test_x.py``, with ``::test_y``) and folders under ``tests/``."""
    names = []
    for code in _CODE.findall(_FENCE.sub("", text)):
        for word in code.split():
            word = word.strip(",.;:()")
            file = word.startswith("tests/") or _FILE.fullmatch(word.split("::")[0])
            if file or _FUNCTION.fullmatch(word):
                names.append(word)
    return names


@cache
def _test_sources() -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8")
        for path in (REPO / "tests").rglob("*.py")
        if ".venv" not in path.parts
    }


def _defines(source: str, function: str) -> bool:
    return re.search(rf"^\s*def {function}\(", source, re.MULTILINE) is not None


def exists(name: str) -> bool:
    """Whether a named test function, file (with ``::function``) or folder is there."""
    where, _, function = name.partition("::")
    if _FUNCTION.fullmatch(where):
        return any(_defines(source, where) for source in _test_sources().values())
    if where.startswith("tests/"):
        files = [REPO / where] if (REPO / where).exists() else []
    else:
        files = [path for path in _test_sources() if path.name == where]
    if not function:
        return bool(files)
    return any(_defines(path.read_text(encoding="utf-8"), function) for path in files)


@pytest.mark.parametrize("doc", DOCS)
def test_every_test_a_doc_names_exists(doc: str) -> None:
    names = named_tests((REPO / doc).read_text(encoding="utf-8"))
    assert names, f"{doc} names no test: the check would prove nothing"
    missing = sorted({name for name in names if not exists(name)})
    assert not missing, f"{doc} names tests that do not exist: {', '.join(missing)}"


def test_the_check_finds_a_missing_test() -> None:
    text = (
        "Pinned by `test_every_test_a_doc_names_exists` and `test_no_such_thing_anywhere`,\n"
        "in `tests/test_docs_name_real_tests.py` and `test_nowhere.py`; not in code:\n"
        "```python\ndef test_x(): ...\n```\n"
    )
    names = named_tests(text)
    assert names == [
        "test_every_test_a_doc_names_exists",
        "test_no_such_thing_anywhere",
        "tests/test_docs_name_real_tests.py",
        "test_nowhere.py",
    ]
    assert [exists(n) for n in names] == [True, False, True, False]
